import Foundation
import KBCore
import KBRequests
import KBStore
import KBIngest
import KBTestSupport
import Testing
@testable import KBKit

/// OCR through the index (SQLite, or PostgreSQL under scripts/test.sh): marks in search results
/// and context, the page cache surviving a failed run and going with its source, re-reading
/// when the OCR settings change, and the languages an index remembers.
@Suite struct OCRIngestTests {
    static let pdfFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("KBIngestTests/Fixtures/pdf")

    /// An image-only PDF: the scanned page of mixed-scan.pdf (the walrus ledger), then the last
    /// page of book.pdf (the nebula catalogue), at 150 dpi.
    static func makeScan(_ ws: Workspace, name: String = "scan.pdf") throws -> String {
        let pages = try ScanMaker.render(pdf: pdfFixtures.appendingPathComponent("mixed-scan.pdf").path, pages: [2], dpi: 150)
            + ScanMaker.render(pdf: pdfFixtures.appendingPathComponent("book.pdf").path, pages: [6], dpi: 150)
        try FileManager.default.createDirectory(at: ws.notes, withIntermediateDirectories: true)
        try ScanMaker.writePDF(pages, to: ws.path(name))
        return ws.path(name)
    }

    static func options(_ mode: OCRMode = .auto, languages: [String] = ["eng"]) -> IngestOptions {
        var options = IngestOptions()
        options.ocr = OCRSettings(mode: mode, languages: languages, dpi: 150)
        return options
    }

    func cachedPages(_ kb: KnowledgeBase, hash: String, key: String = "eng@150") async throws -> [OCRPage] {
        try await kb.store.snapshot { try $0.ocrPages(contentHash: hash, key: key) }
    }

    @Test func aScanIsSearchableAndItsSnippetsSayTheyCameFromOCR() async throws {
        let ws = try Workspace()
        let scan = try Self.makeScan(ws)
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = try await kb.ingest([scan], options: Self.options(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty && report.added == 1, "\(report.failed)")
        #expect(report.ocrPages == 2 && report.ocrCachedPages == 0)

        let hits = try await kb.search(.keyword("walrus ledger"), as: .admin).hits
        let hit = try #require(hits.first)
        #expect(hit.snippet.pages?.start == 1)
        #expect(hit.snippet.ocr.map { $0.confidence > 80 } == true)
        let nebula = try #require(try await kb.search(.keyword("nebula catalogue"), as: .admin).hits.first)
        #expect(nebula.snippet.pages?.end == 2)
        #expect(try await kb.sources(as: .admin).first?.ocr == "auto eng 150")

        var bot = BotRequest(name: "clerk")
        bot.sources = ["kind:pdf"]
        _ = try await kb.createBot(bot, as: .admin)
        let context = try await kb.context(ContextRequest(bot: "clerk", query: "walrus ledger"), as: .admin)
        let citation = try #require(context.citations.first)
        #expect(citation.ocr != nil)
        #expect(context.context.contains("ocr=\"\(Int(citation.ocr!.confidence.rounded()))%\""))
    }

    @Test func pagesRecognisedByAFailedRunAreNotRecognisedAgain() async throws {
        let ws = try Workspace()
        let scan = try Self.makeScan(ws)
        let hash = KnowledgeBase.contentHash(try Data(contentsOf: URL(fileURLWithPath: scan)))
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        counting.failWhen = { _ in true }
        let failed = try await kb.ingest([scan], options: Self.options(), embedder: counting, record: record, as: .admin)
        #expect(failed.failed.count == 1 && failed.ocrPages == 2)
        #expect(try await kb.sources(as: .admin).isEmpty)
        #expect(try await cachedPages(kb, hash: hash).map(\.page) == [1, 2])

        counting.failWhen = nil
        let retry = try await kb.ingest([scan], options: Self.options(), embedder: counting, record: record, as: .admin)
        #expect(retry.added == 1 && retry.failed.isEmpty)
        #expect(retry.ocrPages == 0 && retry.ocrCachedPages == 2)
        #expect(try await kb.search(.keyword("walrus"), as: .admin).hits.count == 1)

        // The cache goes with the source.
        try await kb.remove([scan], as: .admin)
        #expect(try await cachedPages(kb, hash: hash).isEmpty)
    }

    @Test func aChangedScanDropsTheOldPagesFromTheCache() async throws {
        let ws = try Workspace()
        let scan = try Self.makeScan(ws)
        let oldHash = KnowledgeBase.contentHash(try Data(contentsOf: URL(fileURLWithPath: scan)))
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.ingest([scan], options: Self.options(), as: .admin)
        #expect(try await cachedPages(kb, hash: oldHash).count == 2)
        let page = try ScanMaker.render(pdf: Self.pdfFixtures.appendingPathComponent("book.pdf").path, pages: [6], dpi: 150)
        try ScanMaker.writePDF(page, to: scan)
        let report = try await kb.ingest([scan], options: Self.options(), as: .admin)
        #expect(report.updated == 1)
        #expect(try await cachedPages(kb, hash: oldHash).isEmpty)
        #expect(try await kb.search(.keyword("walrus"), as: .admin).hits.isEmpty)
    }

    @Test func otherOCRSettingsReadAScanAgainAndNeverLeavesItAlone() async throws {
        let ws = try Workspace()
        _ = try Self.makeScan(ws)
        try ws.write("plain.md", "# Plain\n\nA note OCR has nothing to do with.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let never = try await kb.ingest([ws.notes.path], options: Self.options(.never), as: .admin)
        #expect(never.failed.count == 1 && never.added == 1)   // the scan fails: OCR is off
        let auto = try await kb.ingest([ws.notes.path], options: Self.options(), as: .admin)
        #expect(auto.added == 1 && auto.unchanged == 1)
        let same = try await kb.ingest([ws.notes.path], options: Self.options(), as: .admin)
        #expect(same.unchanged == 2 && same.ocrPages == 0)
        let more = try await kb.ingest([ws.notes.path], options: Self.options(languages: ["eng", "ukr"]), as: .admin)
        #expect(more.updated == 1 && more.unchanged == 1 && more.ocrPages == 2)
        let off = try await kb.ingest([ws.notes.path], options: Self.options(.never), as: .admin)
        #expect(off.unchanged == 2)
        #expect(try await kb.search(.keyword("walrus"), as: .admin).hits.count == 1)
    }

    @Test func withOCROffImagesInFoldersAreLeftAloneAndNamedOnesFail() async throws {
        let ws = try Workspace()
        try ws.write("note.md", "# Note\n\nText.")
        try ScanMaker.blank(dpi: 100).write(to: ws.path("photo.png"), format: .png)
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let folder = try await kb.ingest([ws.notes.path], options: Self.options(.never), as: .admin)
        #expect(folder.added == 1 && folder.failed.isEmpty)
        let named = try await kb.ingest([ws.path("photo.png")], options: Self.options(.never), as: .admin)
        #expect(named.failed.first?.message.contains("OCR is off (--ocr never)") == true)
    }

    @Test func anIndexRemembersItsOCRLanguages() async throws {
        let kb = try KnowledgeBase.open(at: try Workspace().dbPath)
        #expect(try await kb.ocrLanguages(given: nil, as: .admin) == ["eng"])
        #expect(try await kb.ocrLanguages(given: ["ukr", "ara"], as: .admin) == ["ukr", "ara"])
        #expect(try await kb.ocrLanguages(given: nil, as: .admin) == ["eng", "ukr", "ara"])
    }
}

/// Uploaded sources are read again from the originals kept with the index (`kb sources reread`).
@Suite struct RereadTests {
    @Test func anUploadedScanIsReadAgainFromItsOriginalWithNewOCRSettingsAndAFailedReadKeepsTheOldVersion() async throws {
        let ws = try Workspace()
        try ws.write("venus.md", "# Venus\n\nVenus rules love, beauty and money.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: try OCRIngestTests.makeScan(ws)))
        var request = UploadRequest(contentType: "application/pdf")
        request.id = "scan"
        let upload = try await kb.beginUpload(request, as: .admin)
        try await upload.append(bytes)
        let first = try await upload.finish().job.id
        #expect(await kb.runQueuedJobs() == 1)
        #expect(try await kb.source("scan", as: .admin).ocr == "auto eng 300")

        // OCR off: the scan has no text, the job fails, and the source keeps the version it had.
        let off = try await kb.rereadSources(["scan"], ocr: OCRSettings(mode: .never, languages: ["eng"]), as: .admin)
        #expect(off.failed == 1 && off.sources.first?.job.error != nil)
        #expect(try await kb.search(.keyword("walrus ledger"), as: .admin).hits.first?.sourcePath == Source.uploadPath("scan"))
        #expect(try await kb.source("scan", as: .admin).ocr == "auto eng 300")

        // Other settings, read from the original: nothing is sent again.
        let again = try await kb.rereadSources([], ocr: OCRSettings(mode: .auto, languages: ["eng"], dpi: 150), as: .admin)
        #expect(again.failed == 0 && again.sources.map(\.id) == ["scan"] && again.sources.first?.job.state == .done)
        #expect(try await kb.source("scan", as: .admin).ocr == "auto eng 150")
        #expect(try await kb.search(.keyword("nebula catalogue"), as: .admin).hits.first?.sourcePath == Source.uploadPath("scan"))
        #expect(try await IndexCopier(store: kb.store).original(of: Source.uploadPath("scan"))?.1.reduce(Data(), +) == bytes)
        // One copy of the bytes is kept, the last read's: the jobs before it hold none.
        let jobs = [first, try #require(off.sources.first?.job.id), try #require(again.sources.first?.job.id)]
        let held = try await kb.store.snapshot { snapshot in try jobs.map { try snapshot.jobChunks(id: $0).reduce(0) { $0 + $1.count } } }
        #expect(held == [0, 0, bytes.count])

        let missing = await #expect(throws: KBError.self) { _ = try await kb.rereadSources(["nope"], as: .admin) }
        #expect(missing?.code == .notFound)
        let fileID = try #require(try await kb.sources(SourceListRequest(), as: .admin).sources.first { $0.origin == .file }?.id)
        let file = await #expect(throws: KBError.self) { _ = try await kb.rereadSources([fileID], as: .admin) }
        #expect(file?.code == .conflict)
    }
}

import Foundation
import KBCore
import KBIngest
import KBRequests
import KBTestSupport
import Testing
@testable import KBKit

/// Pages of PDF sources as pictures, the words of a snippet on them, and the page cache.
@Suite struct PagePictureTests {
    static let encrypted = UploadTests.pdf.deletingLastPathComponent().appendingPathComponent("encrypted.pdf")
    static let columns = UploadTests.pdf.deletingLastPathComponent().appendingPathComponent("columns.pdf")

    /// A knowledge base holding the fixture book (as a file) and a note, its page cache in the workspace.
    func library(_ ws: Workspace, budget: Int? = nil) async throws -> (KnowledgeBase, book: String, cache: String) {
        try FileManager.default.copyItem(at: UploadTests.pdf, to: ws.notes.appendingPathComponent("book.pdf"))
        try ws.write("lease.md", "# Lease\n\nThe rent is due on the first of the month.")
        var environment = ProcessInfo.processInfo.environment
        let cache = ws.path("page-cache")
        environment["KB_PAGE_CACHE_DIR"] = cache
        if let budget { environment["KB_PAGE_CACHE_MB"] = String(budget) }
        let kb = try KnowledgeBase.open(at: ws.dbPath, environment: environment)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        return (kb, SourceInfo.fileID(ws.path("book.pdf")), cache)
    }

    /// A PNG's width and height, from its header.
    static func size(_ png: Data) throws -> (width: Int, height: Int) {
        let bytes = [UInt8](png.prefix(24))
        try #require(bytes.count == 24 && bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] && bytes[12..<16] == [0x49, 0x48, 0x44, 0x52])
        let number = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    static func pictures(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".png") }.sorted()
    }

    @Test func aPageIsAPictureOfTheWidthAskedKeptForTheNextTime() async throws {
        let ws = try Workspace()
        let (kb, book, cache) = try await library(ws)
        let first = try await kb.pagePicture(source: book, page: 4, width: 600, as: .admin)
        let (width, height) = try Self.size(first.png)
        #expect(width == 600 && height > width && first.page == 4 && first.pages == 6 && !first.cached)
        let again = try await kb.pagePicture(source: book, page: 4, width: 600, as: .admin)
        #expect(again.cached && again.png == first.png && again.pages == 6)
        #expect(Self.pictures(in: cache).count == 1)
        // Another width is another picture; the default is 1,000 pixels.
        #expect(try Self.size(try await kb.pagePicture(source: book, page: 4, as: .admin).png).width == 1_000)
        // Out of bounds: the width, and pages before the first or after the last.
        for width in [199, 2_001] {
            let error = await #expect(throws: KBError.self) { try await kb.pagePicture(source: book, page: 1, width: width, as: .admin) }
            #expect(error?.code == .invalidArgument && error?.message.contains("200–2000") == true)
        }
        for page in [0, 7] {
            let error = await #expect(throws: KBError.self) { try await kb.pagePicture(source: book, page: page, as: .admin) }
            #expect(error?.code == .notFound)
        }
        #expect(Self.pictures(in: cache).count == 2)
    }

    @Test func aSnippetsWordsAreMarkedWhereTheyStandOnItsPage() async throws {
        let ws = try Workspace()
        let (kb, book, _) = try await library(ws)
        let snippets = try await kb.snippets(ofSource: book, as: .admin).snippets
        let snippet = try #require(snippets.first { $0.text.contains("The zebra quartz phrase lives on the fourth physical page") })
        #expect(snippet.pages?.start == 4)
        let every = try await kb.pageWords(source: book, page: 4, as: .admin)
        let marked = try await kb.pageWords(source: book, page: 4, snippet: snippet.ordinal, as: .admin)
        #expect(every.pages == 6 && every.pageLabel == "2" && every.snippet == nil && marked.snippet == snippet.ordinal)
        // The marked words are poppler's own words of the page, boxes and all, and they are the snippet's.
        #expect(!marked.words.isEmpty && marked.words.count < every.words.count)
        #expect(marked.words.allSatisfy { every.words.contains($0) })
        let phrase = ["zebra", "quartz", "phrase", "lives"]
        #expect(phrase.allSatisfy { word in marked.words.contains { $0.text.lowercased().hasPrefix(word) } })
        #expect(every.words.allSatisfy { (0...1).contains($0.x0) && (0...1).contains($0.y1) && $0.x0 < $0.x1 && $0.y0 < $0.y1 })
        // On a page it is not on, a snippet has no words; a snippet the source lacks is not found.
        #expect(try await kb.pageWords(source: book, page: 1, snippet: snippet.ordinal, as: .admin).words.isEmpty)
        let missing = await #expect(throws: KBError.self) { try await kb.pageWords(source: book, page: 4, snippet: 999, as: .admin) }
        #expect(missing?.code == .notFound)
    }

    @Test func theCacheKeepsToItsBudgetAndARemovedSourcesPicturesGoWithIt() async throws {
        let ws = try Workspace()
        let (kb, book, cache) = try await library(ws, budget: 1)   // 1 MiB
        for page in 1...6 {
            for width in [1_400, 2_000] { _ = try await kb.pagePicture(source: book, page: page, width: width, as: .admin) }
        }
        let kept = PageCache(folder: cache, budget: 1 << 20)
        #expect(kept.bytes() <= 1 << 20 && !Self.pictures(in: cache).isEmpty)
        // The most recently shown picture is still there.
        #expect(try await kb.pagePicture(source: book, page: 6, width: 2_000, as: .admin).cached)

        // An upload's pages come from its kept original; removing the source drops its pictures.
        var upload = UploadRequest(contentType: "application/pdf")
        upload.id = "columns"
        let writing = try await kb.beginUpload(upload, as: .admin)
        try await writing.append(try Data(contentsOf: Self.columns))
        _ = try await writing.finishAndRead()
        let uploaded = try await kb.pagePicture(source: "columns", page: 1, width: 300, as: .admin)
        #expect(try Self.size(uploaded.png).width == 300)
        let before = Self.pictures(in: cache)
        #expect(before.contains { $0.hasSuffix("-1-300.png") })
        _ = try await kb.removeSource(SourceRemoveRequest(id: "columns"), as: .admin)
        #expect(Self.pictures(in: cache) == before.filter { !$0.hasSuffix("-1-300.png") })
        let gone = await #expect(throws: KBError.self) { try await kb.pagePicture(source: "columns", page: 1, width: 300, as: .admin) }
        #expect(gone?.code == .notFound)
    }

    @Test func aPrivateSourcesPagesAreOnlyItsUsersAndABotsOnlyItsOwn() async throws {
        let ws = try Workspace()
        let (kb, book, _) = try await library(ws)
        var upload = UploadRequest(contentType: "application/pdf")
        upload.id = "ada-book"
        upload.user = "ada"
        let writing = try await kb.beginUpload(upload, as: .admin)
        try await writing.append(try Data(contentsOf: UploadTests.pdf))
        _ = try await writing.finishAndRead()
        #expect(try await kb.pagePicture(source: "ada-book", page: 1, width: 200, user: "ada", as: .admin).page == 1)
        let other = await #expect(throws: KBError.self) { try await kb.pagePicture(source: "ada-book", page: 1, width: 200, user: "bob", as: .admin) }
        #expect(other?.code == .notFound)
        let words = await #expect(throws: KBError.self) { try await kb.pageWords(source: "ada-book", page: 1, user: "bob", as: .admin) }
        #expect(words?.code == .notFound)
        // A bot sees the pages of what it sees.
        var bot = BotRequest(name: "leases")
        bot.sources = [ws.path("lease.md")]
        _ = try await kb.createBot(bot, as: .admin)
        let unseen = await #expect(throws: KBError.self) { try await kb.pagePicture(source: book, page: 1, width: 200, bot: "leases", as: .admin) }
        #expect(unseen?.code == .notFound)
    }

    @Test func aNoteHasNoPagesAndAFileGoneOrChangedIsAConflict() async throws {
        let ws = try Workspace()
        let (kb, book, cache) = try await library(ws)
        let note = await #expect(throws: KBError.self) { try await kb.pagePicture(source: SourceInfo.fileID(ws.path("lease.md")), page: 1, as: .admin) }
        #expect(note?.code == .unsupportedMediaType)
        try Data("%PDF-1.7\nnot the book any more".utf8).write(to: URL(fileURLWithPath: ws.path("book.pdf")))
        let changed = await #expect(throws: KBError.self) { try await kb.pagePicture(source: book, page: 1, as: .admin) }
        #expect(changed?.code == .conflict && changed?.message.contains("has changed") == true)
        try FileManager.default.removeItem(atPath: ws.path("book.pdf"))
        let gone = await #expect(throws: KBError.self) { try await kb.pagePicture(source: book, page: 1, as: .admin) }
        #expect(gone?.code == .conflict && gone?.message.contains("is gone") == true)
        #expect(Self.pictures(in: cache).isEmpty)
    }

    @Test func aDamagedOrEncryptedPDFIsAClearErrorAndNothingIsKept() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-pages-\(UUID().uuidString)").path
        let cache = PageCache(folder: folder)
        let damaged = Data("%PDF-1.7\n1 0 obj garbage".utf8), locked = try Data(contentsOf: Self.encrypted)
        for (bytes, words) in [(damaged, "damaged"), (locked, "encrypted")] {
            let error = #expect(throws: KBError.self) {
                _ = try cache.picture(contentHash: "h-\(words)", page: 1, width: 400) { path in
                    try PDFPages.renderPNG(bytes, name: words + ".pdf", page: 1, width: 400, to: path).pages
                }
            }
            #expect(error?.code == .unprocessable && error?.message.contains(words) == true)
        }
        #expect(Self.pictures(in: folder).isEmpty && cache.bytes() == 0)
        let notPDF = #expect(throws: KBError.self) { try PDFPages.pageCount(Data("hello".utf8), name: "hello.txt") }
        #expect(notPDF?.code == .unprocessable)
    }

    /// Whether two word boxes overlap (fractions of the page).
    static func overlap(_ a: PageWord, _ b: PageWord) -> Bool {
        a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
    }

    @Test func aScansPagesArePicturesAndOCRPlacesItsWordsWherePopplerDoes() async throws {
        let ws = try Workspace()
        // The book's sixth page scanned: in a two-page TIFF, upside down (OCR turns it upright to
        // read it), and alone in an image-only PDF.
        let book = UploadTests.pdf.path
        let nebula = try ScanMaker.render(pdf: book, pages: [6], dpi: 150)[0]
        let ledger = try ScanMaker.render(pdf: OCRIngestTests.pdfFixtures.appendingPathComponent("mixed-scan.pdf").path, pages: [2], dpi: 150)[0]
        try FileManager.default.createDirectory(at: ws.notes, withIntermediateDirectories: true)
        try ScanMaker.writeTIFF([ledger, nebula.rotated(2)], to: ws.path("ledger.tiff"))
        try ScanMaker.writePDF([nebula], to: ws.path("scan.pdf"))
        var environment = ProcessInfo.processInfo.environment
        let cache = ws.path("page-cache")
        environment["KB_PAGE_CACHE_DIR"] = cache
        let kb = try KnowledgeBase.open(at: ws.dbPath, environment: environment)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = try await kb.ingest([ws.notes.path], options: OCRIngestTests.options(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty && report.added == 2, "\(report.failed)")
        let tiff = SourceInfo.fileID(ws.path("ledger.tiff")), pdf = SourceInfo.fileID(ws.path("scan.pdf"))

        // The scan's page as a picture: the image as the file holds it, at the width asked.
        let picture = try await kb.pagePicture(source: tiff, page: 2, width: 500, as: .admin)
        let (width, height) = try Self.size(picture.png)
        #expect(width == 500 && height > width && picture.pages == 2 && !picture.cached)
        let beyond = await #expect(throws: KBError.self) { try await kb.pagePicture(source: tiff, page: 3, as: .admin) }
        #expect(beyond?.code == .notFound && beyond?.message.contains("has 2 pages") == true)

        // The words OCR places on the scanned page stand where poppler's text layer puts them on
        // the page that was scanned (upside down: where they stand on the upside-down picture).
        let truth = try PDFPages.words(try Data(contentsOf: UploadTests.pdf), name: "book.pdf", page: 6).words
        for (id, page, turned) in [(pdf, 1, false), (tiff, 2, true)] {
            let snippets = try await kb.snippets(ofSource: id, as: .admin).snippets
            let snippet = try #require(snippets.first { $0.text.contains("nebula catalogue") && $0.pages.map { ($0.start...$0.end).contains(page) } == true })
            let marked = try await kb.pageWords(source: id, page: page, snippet: snippet.ordinal, as: .admin)
            #expect(marked.pages == (id == tiff ? 2 : 1) && marked.words.count >= 5, "\(marked.words.map(\.text))")
            #expect(["nebula", "catalogue"].allSatisfy { word in marked.words.contains { PageHighlight.normalised($0.text) == word } })
            for word in marked.words {
                let expected = truth.filter { PageHighlight.normalised($0.text) == PageHighlight.normalised(word.text) }
                    .map { turned ? PageWord(text: $0.text, x0: 1 - $0.x1, y0: 1 - $0.y1, x1: 1 - $0.x0, y1: 1 - $0.y0) : $0 }
                #expect(expected.contains { Self.overlap($0, word) }, "\(word) is not where poppler puts it: \(expected)")
            }
        }
        // OCR read each page once: its words are kept beside the pictures.
        let kept = ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).filter { $0.hasSuffix(".words.json") }
        #expect(kept.count == 2)
        let again = try await kb.pageWords(source: pdf, page: 1, as: .admin)
        #expect(again.words.contains { PageHighlight.normalised($0.text) == "nebula" })
    }
}

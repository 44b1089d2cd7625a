import Foundation
import KBCore
import KBIngest
import KBRequests
import KBSQLite
import KBTestSupport
import Testing
@testable import KBKit

/// Arabic books as an Arabic reader's app meets them: one made by LibreOffice, one by reportlab +
/// arabic-reshaper (presentation forms in its text layer), one paragraph a page.
@Suite struct RightToLeftBookTests {
    static func library() async throws -> (KnowledgeBase, Workspace) {
        let ws = try Workspace()
        for name in ["arabic-writer.pdf", "arabic-reportlab.pdf"] {
            try FileManager.default.copyItem(at: OCRIngestTests.pdfFixtures.appendingPathComponent(name), to: ws.notes.appendingPathComponent(name))
        }
        var limits = Limits()
        limits.grepSeconds = 3600   // no time bound: a loaded machine must not make this a timing test
        let kb = try KnowledgeBase.open(at: ws.dbPath, limits: limits)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect(report.failed.isEmpty && report.added == 2)
        return (kb, ws)
    }

    @Test func aWordTypedInPlainLettersIsFoundByKeywordsAndGrepInBothBooks() async throws {
        let (kb, ws) = try await Self.library()
        let hits = try await kb.search(.keyword("المريخ"), as: .admin).hits
        #expect(Set(hits.map(\.sourcePath)) == [ws.path("arabic-writer.pdf"), ws.path("arabic-reportlab.pdf")])
        #expect(hits.allSatisfy { $0.snippet.text.contains("المريخ") })
        let matches = try await kb.grepSources(SourceGrepRequest(pattern: "كوكب المريخ"), as: .admin).matches
        #expect(matches.count == 2)
        // The page each match is on, exactly: the paragraph about Mars is page 3 of both.
        #expect(matches.allSatisfy { $0.pageLabel == "p. 3" && $0.pages?.start == 3 && $0.pages?.end == 3 })
        // A pattern pasted in presentation forms finds the same text.
        let pasted = try await kb.grepSources(SourceGrepRequest(pattern: "\u{FE8D}\u{FEDF}\u{FEE4}\u{FEAE}\u{FEF3}\u{FEA6}"), as: .admin).matches
        #expect(pasted.count == 2)
    }

    @Test func aPageAskedForIsThatPage() async throws {
        let (kb, ws) = try await Self.library()
        for name in ["arabic-writer.pdf", "arabic-reportlab.pdf"] {
            var read = SourceReadRequest(source: SourceInfo.fileID(ws.path(name)))
            read.pages = "3"
            let page = try await kb.readSource(read, as: .admin)
            #expect(page.pageLabel == "p. 3" && page.pages?.start == 3 && page.pages?.end == 3, "\(name)")
            #expect(page.text.hasPrefix("رصد الفلكيون") && page.text.contains("بعناية."), "\(name)")
            #expect(!page.text.contains("يعمل الفريق") && !page.text.contains("فاز فريق"), "\(name): pages 2 or 4 shown")
            read.pages = "2-3"
            let two = try await kb.readSource(read, as: .admin)
            #expect(two.pageLabel == "pp. 2–3" && two.text.hasPrefix("يعمل الفريق"), "\(name)")
        }
    }
}

@Suite struct PageStartsTests {
    @Test(.enabled(if: TestBackend.isSQLite, "takes the page starts out with SQL on the file"))
    func aBookIndexedBeforeKBKeptItsPagesIsReadOnceMore() async throws {
        let (kb, ws) = try await RightToLeftBookTests.library()
        let again = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect((again.unchanged, again.updated) == (2, 0))
        // As an index written by an older kb: no page starts.
        try await (kb.store as! SQLiteStore).write { db in try db.execute(sql: "DELETE FROM source_pages") }
        var read = SourceReadRequest(source: SourceInfo.fileID(ws.path("arabic-writer.pdf")))
        read.pages = "3"
        #expect(try await kb.readSource(read, as: .admin).pageLabel?.hasPrefix("pp. 2–") == true)   // the snippets' span stands in
        let upgraded = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect((upgraded.unchanged, upgraded.updated) == (0, 2))
        #expect(try await kb.readSource(read, as: .admin).pageLabel == "p. 3")
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin).unchanged == 2)
    }
}

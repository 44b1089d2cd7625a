import Foundation
import KBCore
import KBIngest
import KBTestSupport
import Testing
@testable import KBKit

/// A temporary folder of notes and an index beside it.
struct Workspace {
    let root: URL
    let notes: URL
    /// The index: `kb.sqlite` in `root`, or a database of its own (see `TestBackend`).
    let dbPath: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-kit-\(UUID().uuidString)")
        notes = root.appendingPathComponent("notes")
        dbPath = TestBackend.freshIndex(in: root)
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws {
        let url = notes.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    func delete(_ name: String) throws { try FileManager.default.removeItem(at: notes.appendingPathComponent(name)) }
    func path(_ name: String) -> String { notes.appendingPathComponent(name).path }
}

@Suite struct IngestTests {
    @Test func reIngestCountsAddedUpdatedUnchangedAndRemoved() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\nalpha text")
        try ws.write("b.md", "# B\n\nbeta text")
        try ws.write("sub/c.txt", "gamma text")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let options = IngestOptions()

        let first = try await kb.ingest([ws.notes.path], options: options, as: .admin)
        #expect((first.added, first.updated, first.unchanged, first.removed, first.failed.count) == (3, 0, 0, 0, 0))

        let second = try await kb.ingest([ws.notes.path], options: options, as: .admin)
        #expect((second.added, second.updated, second.unchanged, second.snippets) == (0, 0, 3, 0))

        try ws.write("a.md", "# A\n\nalpha changed")
        try ws.delete("b.md")
        let third = try await kb.ingest([ws.notes.path], options: options, as: .admin)
        #expect((third.added, third.updated, third.unchanged, third.removed) == (0, 1, 1, 0))
        #expect(third.missing == [ws.path("b.md")])
        #expect(try await kb.sources(as: .admin).count == 3)

        let fourth = try await kb.ingest([ws.notes.path], options: options, prune: true, as: .admin)
        #expect((fourth.unchanged, fourth.removed) == (2, 1))
        #expect(try await kb.sources(as: .admin).map(\.path) == [ws.path("a.md"), ws.path("sub/c.txt")])
        #expect(try await kb.search(.keyword("beta"), as: .admin).hits.isEmpty)
        #expect(try await kb.search(.keyword("changed"), as: .admin).hits.count == 1)
    }

    @Test func aFailingFileLeavesItsIndexedVersionAndTheOtherFilesAlone() async throws {
        let ws = try Workspace()
        try ws.write("good.md", "# Good\n\ngood text")
        try ws.write("note.md", "---\ntitle: Note\n---\nthe first version")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        let before = try await kb.sources(as: .admin)

        try ws.write("note.md", "---\ntitle: [broken\n---\nthe second version")
        try ws.write("new.md", "# New\n\nnew text")
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect(report.failed.count == 1)
        #expect(report.failed.first?.message.contains("note.md: front matter is not valid YAML") == true)
        #expect(report.added == 1 && report.unchanged == 1)
        #expect(try await kb.search(.keyword("first version"), as: .admin).hits.count == 1)
        #expect(try await kb.search(.keyword("second"), as: .admin).hits.isEmpty)
        #expect(try await kb.sources(as: .admin).first { $0.path == ws.path("note.md") } == before.first { $0.path == ws.path("note.md") })
    }

    @Test func missingPathsAndUnsupportedFilesAreReportedByName() async throws {
        let ws = try Workspace()
        try ws.write("doc.odt", "not really")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let report = try await kb.ingest([ws.path("nope.md"), ws.path("doc.odt")], options: IngestOptions(), as: .admin)
        #expect(report.failed.map(\.message) == [
            "No such file or folder: \(ws.path("nope.md")). Check the path.",
            "\(ws.path("doc.odt")): kb does not read .odt files; it reads \(FileTypes.supportedList).",
        ])
        #expect(try await kb.status(as: .admin).sources == 0)
    }

    @Test func hiddenFilesAndFoldersAreSkipped() async throws {
        let ws = try Workspace()
        try ws.write(".obsidian/cache.md", "hidden")
        try ws.write(".draft.md", "hidden")
        try ws.write("shown.md", "shown")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin).added == 1)
    }

    @Test func pruningANamedFileThatIsGoneRemovesIt() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.ingest([ws.path("a.md")], options: IngestOptions(), as: .admin)
        try ws.delete("a.md")
        let report = try await kb.ingest([ws.path("a.md")], options: IngestOptions(), prune: true, as: .admin)
        #expect(report.removed == 1 && report.failed.isEmpty)
        #expect(try await kb.status(as: .admin).sources == 0)
    }

    @Test func removeRefusesPathsThatMatchNothingAndRemovesNothing() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        await #expect(throws: KBError.self) { try await kb.remove([ws.path("a.md"), ws.path("zzz.md")], as: .admin) }
        #expect(try await kb.status(as: .admin).sources == 1)
        #expect(try await kb.remove([ws.notes.path], as: .admin) == [ws.path("a.md")])
    }

    @Test func theDefaultLocationFollowsTheEnvironment() {
        #expect(KnowledgeBase.defaultLocation(environment: ["KB_DB": "/x.sqlite", "HOME": "/h"]) == "/x.sqlite")
        #expect(KnowledgeBase.defaultLocation(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/kb/kb.sqlite")
        #expect(KnowledgeBase.defaultLocation(environment: ["HOME": "/h"]) == "/h/.local/share/kb/kb.sqlite")
    }

    @Test func inspectWritesNothingAndMatchesWhatIngestStores() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "---\ntags: [x]\n---\n# A\n\none. two.\n\n## B\n\nthree.")
        let document = try await KnowledgeBase.inspect(ws.path("a.md"), options: IngestOptions())
        #expect(document.snippets.map(\.text) == ["one. two.", "three."])
        #expect(!FileManager.default.fileExists(atPath: ws.dbPath))
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.ingest([ws.path("a.md")], options: IngestOptions(), as: .admin)
        #expect(try await kb.sources(as: .admin).first?.snippetCount == 2)
    }
}

@Suite struct IgnoreFileTests {
    @Test func kbignorePatternsSkipFilesByRelativePathOrName() async throws {
        let ws = try Workspace()
        try ws.write(".kbignore", "# comment\nREADME.md\ndrafts/\n*.tmp.md\n")
        try ws.write("README.md", "about")
        try ws.write("sub/README.md", "about")
        try ws.write("drafts/a.md", "draft")
        try ws.write("x.tmp.md", "temp")
        try ws.write("kept.md", "kept")
        try ws.write("sub/kept.md", "kept")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect(try await kb.sources(as: .admin).map(\.path) == [ws.path("kept.md"), ws.path("sub/kept.md")])
    }

    @Test func aKbignoreThatCannotBeReadLeavesItsFolderAloneAndSaysSo() async throws {
        let ws = try Workspace()
        try ws.write("README.md", "about")
        try ws.write("kept.md", "kept")
        // A folder where the file should be: it exists, and reading it fails.
        try FileManager.default.createDirectory(at: ws.notes.appendingPathComponent(".kbignore"), withIntermediateDirectories: true)
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect(try await kb.sources(as: .admin).isEmpty, "excluded files must not be indexed without their rules")
        let failure = try #require(report.failed.first)
        #expect(failure.message.contains(".kbignore") && failure.message.contains("left alone"))
    }
}

extension SearchQuery {
    static func keyword(_ text: String, limit: Int = 8) -> SearchQuery {
        var query = SearchQuery(text)
        query.mode = .keyword
        query.limit = limit
        return query
    }
}

/// The source kinds are one enum; the stores' schemas record them in migrations, which must
/// admit every kind the enum has (a kind added without a migration fails here, on both backends).
@Suite struct SourceKindStorageTests {
    @Test func everySourceKindCanBeStoredAndReadBack() async throws {
        let ws = try Workspace()
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        for kind in SourceKind.allCases {
            let source = Source(path: "/kinds/\(kind.rawValue)", kind: kind, title: kind.rawValue, contentHash: kind.rawValue, size: 1)
            let document = SourceDocument(source: source, snippets: [Snippet(ordinal: 0, text: "a \(kind.rawValue) text", start: 0, end: 8)])
            _ = try await kb.store.replace(document, vectors: nil, embedder: .none, ingestedAt: Date())
        }
        let stored = try await kb.store.snapshot { try $0.sources() }.filter { $0.path.hasPrefix("/kinds/") }
        #expect(Set(stored.map(\.kind)) == Set(SourceKind.allCases))
    }
}

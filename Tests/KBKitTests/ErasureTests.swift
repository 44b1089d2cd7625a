import Foundation
import KBCore
import KBIngest
import KBRequests
import KBStore
import KBTestSupport
import Testing
@testable import KBKit

/// Erasing a user: every memory and version, private sources and their originals, and no byte
/// of it left in the index files. Runs on SQLite and (scripts/test.sh) on PostgreSQL.
@Suite struct ErasureTests {
    /// The bytes of every file of an SQLite index (main file, `-wal`, `-shm`).
    func indexBytes(_ path: String) -> [(String, Data)] {
        ["", "-wal", "-shm"].compactMap { suffix in FileManager.default.contents(atPath: path + suffix).map { (path + suffix, $0) } }
    }

    func holds(_ path: String, _ marker: String) -> [String] {
        indexBytes(path).filter { $0.1.range(of: Data(marker.utf8)) != nil }.map(\.0)
    }

    @Test func erasingAUserLeavesNoTraceAndLosesNothingElse() async throws {
        let ws = try Workspace()
        try ws.write("venus.md", "# Venus\n\nVenus rules love.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        let marker = "qz7731vx", kept = "kw5518yb"
        let ada = try MemoryScope.user("ada"), bob = try MemoryScope.user("bob")

        // Ada: memories with several versions, a superseded one, a title, and a private upload.
        let first = try await kb.remember(MemoryDraft("Ada's locker code is \(marker) one", title: "Locker \(marker)", scope: ada), as: .admin).memory
        _ = try await kb.updateMemory(first.id, MemoryChange(content: "Ada's locker code is \(marker) two"))
        let old = try await kb.remember(MemoryDraft("Ada parks in bay \(marker)", scope: ada), as: .admin).memory
        _ = try await kb.remember(MemoryDraft("Ada parks in bay \(marker) now", scope: ada), superseding: old.id, as: .admin)
        var upload = SourceRequest(text: "# Diary\n\nThe \(marker) diary of Ada.")
        upload.user = "ada"
        upload.id = "diary"
        _ = try await kb.addSource(upload, as: .admin)
        _ = try await kb.remember(MemoryDraft("Bob's code is \(kept)", scope: bob), as: .admin)
        if TestBackend.isSQLite { #expect(!holds(ws.dbPath, marker).isEmpty) }   // the test can see the marker

        // Erase while Bob's app keeps adding memories and searching.
        let adds = Task {
            var acknowledged: [String] = []
            for index in 0..<12 {
                acknowledged.append(try await kb.remember(MemoryDraft("Bob note \(index) \(kept)", scope: bob), as: .admin).memory.id)
                var query = MemoryQuery("code")
                query.scopes = [bob]
                _ = try await kb.recall(query, as: .admin)
            }
            return acknowledged
        }
        let erased = try await kb.erase(EraseRequest(scope: "user:ada"), as: .admin)
        let acknowledged = try await adds.value
        #expect(erased.memories == 3 && erased.versions == 4 && erased.sources == 1)

        #expect(try await kb.memories(scopes: [ada], includeSuperseded: true).isEmpty)
        #expect(try await kb.sources(SourceListRequest(), as: .admin).sources.allSatisfy { $0.user != "ada" })
        #expect(try await kb.search(.keyword(marker), as: .admin).hits.isEmpty)
        let bobs = try await kb.memories(scopes: [bob])
        #expect(Set(acknowledged).isSubset(of: Set(bobs.map(\.id))) && bobs.count == 13)
        if TestBackend.isSQLite {
            try await kb.store.scrub()   // whatever Bob's writes left in the log after the erasure's own scrub
            #expect(holds(ws.dbPath, marker) == [], "the marker is still in the index files")
            #expect(!holds(ws.dbPath, kept).isEmpty)
        }
        // A second erasure finds nothing; a bad scope is refused.
        #expect(try await kb.erase(EraseRequest(scope: "user:ada"), as: .admin).memories == 0)
        await #expect(throws: KBError.self) { try await kb.erase(EraseRequest(scope: "user:"), as: .admin) }
    }

    @Test(.enabled(if: TestBackend.isSQLite, "about index files"))
    func deletingOneMemoryOrSourceLeavesNoTraceEither() async throws {
        let ws = try Workspace()
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.embedder(.hashing)
        let marker = "mm4402zz"
        let memory = try await kb.remember(MemoryDraft("The \(marker) memory", scope: try .user("ada")), embedder: .hashing, as: .admin).memory
        var text = SourceRequest(text: "# Note\n\nThe \(marker)src note.")
        text.id = "note"
        _ = try await kb.addSource(text, embedder: .hashing, as: .admin)
        _ = try await kb.forget(ForgetRequest(id: memory.id), as: .admin)
        #expect(holds(ws.dbPath, marker + " memory") == [] && !holds(ws.dbPath, marker + "src").isEmpty)
        _ = try await kb.removeSource(SourceRemoveRequest(id: "note"), as: .admin)
        #expect(holds(ws.dbPath, marker) == [])
    }
}

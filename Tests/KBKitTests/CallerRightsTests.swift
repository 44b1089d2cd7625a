import Foundation
import KBCore
import KBIngest
import KBRequests
import KBStore
import KBTestSupport
import Testing
@testable import KBKit

/// Every public entry of `KnowledgeBase` that reads or writes data takes a `Caller`: what a scoped
/// token may not do is refused (`forbidden`) before anything is read or written, and the index is
/// left as it was; counts (`status`) are anyone's.
@Suite struct CallerRightsTests {
    @Test func aScopedTokenIsHeldToItsRightsAtEveryEntryThatTakesACaller() async throws {
        let ws = try Workspace()
        try ws.write("venus.md", "# Venus\n\nVenus rules love, beauty and money.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        _ = try await kb.remember(MemoryDraft("Likes chess.", scope: try .user("bob")), as: .admin)
        var request = TokenRequest(name: "ada-app")
        request.scopes = ["user:ada"]
        let ada = Caller.token(try await kb.createToken(request, as: .admin).info)
        let before = try await kb.status(as: .admin)

        func refused(_ what: String, _ call: () async throws -> Void) async {
            let error = await #expect(throws: KBError.self, "\(what)") { try await call() }
            #expect(error?.code == .forbidden, "\(what): \(String(describing: error))")
        }
        try ws.write("saturn.md", "# Saturn\n\nSaturn rules discipline.")
        await refused("ingest") { _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: ada) }
        await refused("remove") { _ = try await kb.remove([ws.notes.path], as: ada) }
        await refused("search without a bot") { _ = try await kb.search(SearchQuery("venus"), as: ada) }
        await refused("sources without the right") { _ = try await kb.sources(as: ada) }
        await refused("export") { _ = try await kb.export(to: ws.root.appendingPathComponent("copy.sqlite").path, as: ada) }
        await refused("reindex") { _ = try await kb.reindex(to: nil, as: ada) }
        await refused("keyword language") { _ = try await kb.setKeywordLanguage(.russian, as: ada) }
        await refused("integrity check") { _ = try await kb.integrityCheck(as: ada) }
        await refused("request log") { _ = try await kb.requestLogEntries(as: ada) }
        await refused("usage") { _ = try await kb.usage(since: Date(timeIntervalSinceNow: -3600), by: .day, as: ada) }
        await refused("metrics") { _ = try await kb.metricsStatus(as: ada) }
        await refused("another user's memory") { _ = try await kb.remember(MemoryDraft("Lives in Oslo.", scope: try .user("bob")), as: ada) }
        await refused("recall across every scope") { _ = try await kb.recall(MemoryQuery("chess"), as: ada) }
        await refused("export every memory") { _ = try await kb.exportMemories(as: ada) }
        await refused("import memories") { _ = try await kb.importMemories(try await kb.exportMemories(as: .admin), as: ada) }
        await refused("optimize") { _ = try await kb.optimizeKeywordIndex(as: ada) }

        // Nothing changed; what the token may do, it does.
        let after = try await kb.status(as: ada)
        #expect(after.sources == before.sources && after.snippets == before.snippets && after.keywordLanguage == before.keywordLanguage)
        #expect(try await kb.memories(scopes: [try .user("bob")]).map(\.content) == ["Likes chess."])
        #expect(try await kb.serviceStatus(as: ada).index.snippets == before.snippets)
        _ = try await kb.remember(MemoryDraft("Lives in Kyiv.", scope: try .user("ada")), as: ada)
        var mine = MemoryQuery("Kyiv")
        mine.scopes = [try .user("ada")]
        #expect(try await kb.recall(mine, as: ada).hits.map(\.memory.content) == ["Lives in Kyiv."])
        #expect(try await kb.exportMemories(scopes: [try .user("ada")], as: ada).contains("Lives in Kyiv."))
        #expect(try await kb.exportMemories(scopes: [try .user("ada")], as: ada).contains("chess") == false)
    }
}

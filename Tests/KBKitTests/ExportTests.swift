import Foundation
import KBCore
import KBRequests
import KBStore
import KBIngest
import KBPostgres
import KBTestSupport
import Testing
@testable import KBKit

/// `kb export`: an SQLite index copied into the backend under test and back gives the same index.
@Suite struct ExportTests {
    @Test func anIndexWithMemoriesAndBotsRoundTripsWithTheSameSearchResults() async throws {
        let ws = try Workspace()
        try ws.write("venus.md", "---\ntags: [area:love]\n---\n# Venus\n\nVenus rules love, beauty and money.\n\n## In the tenth house\n\nVenus in the tenth house favours the arts.")
        try ws.write("saturn.md", "---\ntags: [area:career]\n---\n# Saturn\n\nSaturn rules discipline, time and the long climb of a career.")
        try ws.write("bread.md", "# Bread\n\nBread needs flour, water, salt and time. Knead the dough until it is smooth.")
        // The original is always an SQLite file; the copy is in the backend under test.
        let original = try KnowledgeBase.open(at: ws.root.appendingPathComponent("original.sqlite").path)
        let (embedder, record) = try await original.embedder(.hashing)
        #expect(try await original.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        let tea = try await original.add("Ada likes tea.", scope: "user:ada", tags: [Tag("diet")]).memory
        _ = try await original.updateMemory(tea.id, MemoryChange(content: "Ada likes green tea."))
        let coffee = try await original.add("Ada likes coffee.", scope: "user:ada").memory
        _ = try await original.add("Ada drinks coffee at night.", scope: "user:ada", superseding: coffee.id)
        var bot = BotRequest(name: "astro")
        bot.systemPrompt = "You are an astrology tutor."
        bot.sources = [ws.path("venus.md"), "tag:area:career"]
        _ = try await original.createBot(bot, as: .admin)

        let middle = TestBackend.freshIndex(in: ws.root, name: "middle.sqlite")
        let there = try await original.export(to: middle, as: .admin)
        #expect(there.sources == 3 && there.memories == 3 && there.memoryVersions == 1 && there.bots == 1)
        // PostgreSQL writes the copy to disk at once (the test server's role may); an SQLite file has no such step.
        #expect((there.checkpoint?.done == true) == TestBackend.isPostgres, "\(String(describing: there.checkpoint))")
        let copy = try KnowledgeBase.open(at: middle, create: false)
        let back = ws.root.appendingPathComponent("back.sqlite").path
        _ = try await copy.export(to: back, as: .admin)
        let roundTripped = try KnowledgeBase.open(at: back, create: false)

        for mode in SearchMode.allCases {
            for text in ["venus tenth house", "career discipline", "flour and salt", "love money"] {
                var query = SearchQuery(text)
                query.mode = mode
                let expected = try await original.search(query, as: .admin).hits
                let got = try await roundTripped.search(query, as: .admin).hits
                #expect(got.map(\.sourcePath) == expected.map(\.sourcePath), "\(mode) \(text)")
                #expect(got.map(\.snippet) == expected.map(\.snippet), "\(mode) \(text)")
                #expect(got.map(\.score) == expected.map(\.score), "\(mode) \(text)")
                if mode == .vector {   // the middle copy ranks the same vectors the same way
                    #expect(try await copy.search(query, as: .admin).hits.map(\.snippet) == expected.map(\.snippet), "\(text)")
                }
            }
        }
        #expect(try await roundTripped.exportMemories(as: .admin) == (try await original.exportMemories(as: .admin)))
        #expect(try await copy.exportMemories(as: .admin) == (try await original.exportMemories(as: .admin)))
        #expect(try await roundTripped.bots(as: .admin) == (try await original.bots(as: .admin)))
        #expect(try await copy.bots(as: .admin) == (try await original.bots(as: .admin)))
        let status = try await roundTripped.status(as: .admin)
        #expect(status.vectors == (try await original.status(as: .admin)).vectors)

        // Only into an empty index.
        let error = await #expect(throws: KBError.self) { try await original.export(to: back, as: .admin) }
        #expect(error?.code == .conflict)
    }
}

/// `kb index build --hnsw`: PostgreSQL builds the index and measures it; SQLite says it scans exactly.
@Suite struct HNSWTests {
    @Test func anHNSWIndexAnswersLikeTheExactScanOnASmallIndexAndSQLiteRefusesOne() async throws {
        let ws = try Workspace()
        for i in 0..<40 { try ws.write("n\(i).md", "# Note \(i)\n\nNote \(i) is about \(["venus", "saturn", "bread", "tea"][i % 4]) and number \(i).") }
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        var query = SearchQuery("saturn number")
        query.mode = .vector
        let exact = try await kb.search(query, as: .admin).hits
        #expect(exact.count == query.limit)
        guard TestBackend.isPostgres else {
            let error = await #expect(throws: KBError.self) { try await kb.buildApproximateIndex(HNSWSettings(), as: .admin) }
            #expect(error?.code == .unsupportedMode)
            return
        }
        let report = try await kb.buildApproximateIndex(HNSWSettings(m: 8, efConstruction: 32, efSearch: 200), sample: 20, as: .admin)
        #expect(report.vectors == 40 && report.sampled == 20 && report.settings.m == 8)
        #expect(report.checkpoint?.done == true)   // the new graph written to disk at once
        #expect(report.recallAt10 > 0.9)   // 40 vectors, ef_search 200: the walk sees them all
        // The same top hits (hashing vectors tie a lot, and ties may come in another order).
        #expect(try await kb.search(query, as: .admin).hits.map(\.score) == exact.map(\.score))
        // Another ef_search alone keeps the graph; another ef_construction builds it again.
        let retuned = try await kb.buildApproximateIndex(HNSWSettings(m: 8, efConstruction: 32, efSearch: 100), sample: 20, as: .admin)
        #expect(retuned.kept && retuned.settings.efSearch == 100 && retuned.vectors == 40 && retuned.checkpoint == nil)
        #expect(try await kb.search(query, as: .admin).hits.map(\.score) == exact.map(\.score))
        let rebuilt = try await kb.buildApproximateIndex(HNSWSettings(m: 8, efConstruction: 40, efSearch: 100), sample: 20, as: .admin)
        #expect(!rebuilt.kept && rebuilt.recallAt10 > 0.9)
        await #expect(throws: KBError.self) { try await kb.buildApproximateIndex(HNSWSettings(m: 1), as: .admin) }
        #expect(try await kb.dropApproximateIndex(as: .admin))
        #expect(try await !kb.dropApproximateIndex(as: .admin))
        #expect(try await kb.search(query, as: .admin).hits.map(\.snippetID) == exact.map(\.snippetID))
    }
}

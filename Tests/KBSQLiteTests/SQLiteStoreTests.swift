import Foundation
import GRDB
import KBCore
import KBStore
import Testing
@testable import KBSQLite

@Suite struct SQLiteStoreTests {
    @Test func aNewIndexRecordsItsSchemaVersion() async throws {
        let store = try temporaryStore()
        #expect(try await store.meta("schema_version") == String(Schema.version))
        #expect(try await store.status().schemaVersion == Schema.version)
    }

    @Test func replacingASourceReplacesItsKeywordIndexEntries() async throws {
        let store = try temporaryStore()
        try await store.replace(document("/a.md", snippets: ["old words"]))
        try await store.replace(document("/a.md", snippets: ["new words"], hash: "h2"))
        #expect(try await store.keywordSearch(SearchQuery("old")).isEmpty)
        #expect(try await store.keywordSearch(SearchQuery("new")).count == 1)
        #expect(try await store.status().snippets == 1)
        let ftsRows = try await store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM snippets_fts") }
        #expect(ftsRows == 1)
    }

    @Test func botSourcesRoundTripWhateverTheirPathsHold() async throws {
        let store = try temporaryStore()
        let bot = Bot(name: "b", systemPrompt: "", sources: [.path("/notes/a\nb.md"), .path("/x/\u{1F3FB}/"), .tag(Tag("area:love"))],
                      memoryScopes: ["global"], createdAt: Date(timeIntervalSince1970: 1), updatedAt: Date(timeIntervalSince1970: 2))
        try await store.createBot(bot)
        #expect(try await store.snapshot { try $0.bots() } == [bot])
    }

    @Test func botSourcesStoredOnePerLineAreMigrated() async throws {
        let path = temporaryPath("kb.sqlite")
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v5-embedding-cache")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES ('schema_version', '5')")
            try db.execute(sql: "INSERT INTO bots (name, system_prompt, sources, memory_scopes, created_at, updated_at) VALUES (?, '', ?, 'global', 1, 2)",
                           arguments: ["old", "/notes/\ntag:area:love\nkind:pdf"])
        }
        try queue.close()
        let store = try SQLiteStore.open(at: path, create: false)
        let bots = try await store.snapshot { try $0.bots() }
        #expect(bots.map { $0.sources.map(\.description) } == [["/notes/", "tag:area:love", "kind:pdf"]])
        #expect(try await store.status().schemaVersion == Schema.version)
    }

    @Test func memoriesStoredBeforeValidTimeGetItFromTheirTimesAndSupersession() async throws {
        let path = temporaryPath("kb.sqlite")
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v11-conversations")
        let (old, new) = ("00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES ('schema_version', '11')")
            for (number, id, created, superseded) in [(1, old, 100.0, new as String?), (2, new, 200.0, nil)] {
                try db.execute(sql: """
                    INSERT INTO sources (id, path, kind, title, content_hash, size, ingested_at) VALUES (?, ?, 'memory', '', 'h', 1, ?)
                    """, arguments: [number, "memory:" + id, created])
                try db.execute(sql: """
                    INSERT INTO memories (id, source_id, scope, content, content_key, created_at, updated_at, superseded_by)
                    VALUES (?, ?, 'user:ada', ?, ?, ?, ?, ?)
                    """, arguments: [id, number, "Lives in \(number).", "lives in \(number).", created, created + 5, superseded])
            }
        }
        try queue.close()
        let store = try SQLiteStore.open(at: path, create: false)
        let memories = try await store.snapshot { try $0.memories(scopes: [], tags: [], includeSuperseded: true) }
        #expect(memories.map(\.validFrom) == [Date(timeIntervalSince1970: 100), Date(timeIntervalSince1970: 200)])
        #expect(memories.map(\.validTo) == [Date(timeIntervalSince1970: 200), nil])
        #expect(memories.map(\.isCurrent) == [false, true] && memories.allSatisfy { !$0.flaggedWrong && $0.useful == 0 })
        #expect(try await store.status().schemaVersion == Schema.version)
    }

    /// A filtered keyword ranking reads the index's ranking until enough snippets pass the filters
    /// (many, or a few seeked by rowid ranges): the filtered ranking, even when every filtered
    /// snippet ranks below every unfiltered one.
    @Test(arguments: [1, 3, 30])
    func aFilteredKeywordRankingIsTheSameWhereverItsMatchesRank(limit: Int) async throws {
        let store = try temporaryStore()
        for i in 0..<40 {   // strong matches outside the filter
            try await store.replace(document(String(format: "/other/%02d.md", i), snippets: ["moon moon moon moon over the sea \(i)"]))
        }
        for i in 0..<5 {    // weak matches inside it, the weakest last
            try await store.replace(document("/notes/\(i).md", snippets: ["the moon, and a long note about other things: " + String(repeating: "words ", count: 10 * (i + 1))]))
        }
        var query = SearchQuery("moon")
        query.sourcePrefixes = ["/notes/"]
        query.limit = limit
        let filtered = query
        let ranking = try await store.snapshot { try $0.keywordRanking(filtered, limit: limit, allowed: nil) }
        #expect(ranking.count == min(limit, 5))
        let paths = try await store.keywordSearch(filtered).map(\.sourcePath)
        #expect(paths == Array(["/notes/0.md", "/notes/1.md", "/notes/2.md", "/notes/3.md", "/notes/4.md"].prefix(limit)))
        #expect(zip(ranking, ranking.dropFirst()).allSatisfy { $0.score >= $1.score })
        // Given the ids the filters let through (few, so ranked by rowid ranges): the same answer.
        let among = try await store.snapshot { snapshot in
            try snapshot.keywordRanking(filtered, limit: limit, allowed: try snapshot.filteredSnippetIDs(filtered))
        }
        #expect(among.map(\.id) == ranking.map(\.id))
        #expect(among.map(\.score) == ranking.map(\.score))
    }

    /// Ids that are not consecutive (another source's snippets between them) rank as FTS5 ranks
    /// them, ties by id: seeked by rowid ranges (6 runs) or read from the whole ranking (70 runs).
    @Test(arguments: [12, 140])
    func aKeywordRankingAmongScatteredIdsIsTheFilteredRanking(documents: Int) async throws {
        let store = try temporaryStore()
        for i in 0..<documents {
            try await store.replace(document("/\(i % 2 == 0 ? "mine" : "other")/\(i).md",
                                             snippets: ["moon and stars", "the moon over water \(i)", "nothing here", "moon"]))
        }
        var query = SearchQuery("moon stars")
        query.sourcePrefixes = ["/mine/"]
        let filtered = query
        let (ranking, expected) = try await store.snapshot { snapshot in
            let allowed = try #require(try snapshot.filteredSnippetIDs(filtered))
            let all = try snapshot.keywordRanking(SearchQuery("moon stars"), limit: 10_000, allowed: nil)
            return (try snapshot.keywordRanking(filtered, limit: 1_000, allowed: allowed), all.filter { allowed.contains($0.id) })
        }
        #expect(ranking.count == documents / 2 * 3)
        #expect(ranking.map(\.id) == expected.map(\.id))
        #expect(ranking.map(\.score) == expected.map(\.score))
    }

    @Test func aMissingIndexIsNotCreatedUnlessAsked() throws {
        let path = temporaryPath("none.sqlite")
        let error = try #require(throws: KBError.self) { try SQLiteStore.open(at: path, create: false) }
        #expect(error.code == .noIndex)
        #expect(error.message.contains("kb ingest"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFileThatIsNotSQLiteIsRefused() throws {
        let path = temporaryPath("junk.sqlite")
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: KBError.self) { try SQLiteStore.open(at: path, create: true) }
        #expect(error.code == .notAnIndex)
        #expect(error.message.contains(path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x42, count: 4096))
    }

    @Test func anotherApplicationsDatabaseIsRefusedAndLeftAlone() throws {
        let path = temporaryPath("other.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY)") }
        try queue.close()
        let error = try #require(throws: KBError.self) { try SQLiteStore.open(at: path, create: true) }
        #expect(error.message == "Not a kb index (no kb_meta table): \(path). Point --db at a kb index, or at a new file name.")
        let tables = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type='table'") }
        #expect(tables == ["customers"])
    }

    @Test func anIndexFromANewerKbIsRefusedWithAnUpgradeHint() throws {
        let path = temporaryPath("new.sqlite")
        _ = try SQLiteStore.open(at: path, create: true)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
            try db.execute(sql: "UPDATE kb_meta SET value = '99' WHERE key = 'schema_version'")
        }
        try queue.close()
        let error = try #require(throws: KBError.self) { try SQLiteStore.open(at: path, create: false) }
        #expect(error.code == .newerSchema)
        #expect(error.message.contains("Upgrade kb"))
    }

    @Test func aFailedWriteLeavesTheSourceAsItWas() async throws {
        let store = try temporaryStore()
        try await store.replace(document("/a.md", snippets: ["original text"]))
        struct Boom: Error {}
        await #expect(throws: (any Error).self) {
            try await store.transaction { transaction in
                _ = try transaction.replace(document("/a.md", snippets: ["replacement"], hash: "h2"), vectors: nil, embedder: .none, ingestedAt: Date())
                throw Boom()
            }
        }
        #expect(try await store.keywordSearch(SearchQuery("original")).count == 1)
        #expect(try await store.keywordSearch(SearchQuery("replacement")).isEmpty)
        #expect(try await store.contentHashes() == ["/a.md": "h"])
    }
}

@Suite struct KeywordQueryTests {
    @Test func quotesEachWordAndJoinsThemWithOr() {
        #expect(KeywordQuery.match(for: "Venus -career (NEAR") == "\"venus\" OR \"career\" OR \"near\"")
    }

    @Test func keepsLettersOfEveryScriptAndDropsRepeats() {
        #expect(KeywordQuery.words(in: "Луна, القمر; moon moon café") == ["луна", "القمر", "moon", "café"])
    }

    @Test func leavesOutFunctionWordsUnlessNothingElseIsLeft() {
        #expect(KeywordQuery.match(for: "the return of Saturn") == "\"return\" OR \"saturn\"")
        #expect(KeywordQuery.match(for: "to be or not to be") == "\"to\" OR \"be\" OR \"or\" OR \"not\"")
    }

    @Test func hasNoMatchForTextWithoutWords() {
        #expect(KeywordQuery.match(for: " \"*()-: ") == nil)
    }
}

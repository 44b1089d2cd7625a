import Foundation
import KBCore
import KBRequests
import KBStore
import KBSQLite
import KBIngest
import KBMemory
import KBTestSupport
import Testing
@testable import KBKit

/// A knowledge base with the deterministic hashing embedder, for memory tests.
func memoryBase() async throws -> (KnowledgeBase, Workspace) {
    let ws = try Workspace()
    let kb = try KnowledgeBase.open(at: ws.dbPath)
    return (kb, ws)
}

extension KnowledgeBase {
    func add(_ content: String, scope: String = "global", title: String? = nil, tags: [KBCore.Tag] = [],
             options: MemoryOptions = MemoryOptions(), superseding: String? = nil) async throws -> RememberResult {
        try await remember(MemoryDraft(content, title: title, scope: try MemoryScope(scope), tags: tags),
                           options: options, superseding: superseding, embedder: .hashing, as: .admin)
    }

    func recallIDs(_ text: String, scopes: [String] = [], mode: SearchMode = .hybrid, superseded: Bool = false) async throws -> [String] {
        var query = MemoryQuery(text)
        query.scopes = try scopes.map { try MemoryScope($0) }
        query.mode = mode
        query.includeSuperseded = superseded
        return try await recall(query, as: .admin).hits.map(\.memory.id)
    }
}

@Suite struct MemoryTests {
    @Test func aMemoryIsStoredAsOneSearchableSnippetWithItsTagsAndScope() async throws {
        let (kb, _) = try await memoryBase()
        let result = try await kb.add("Prefers metric units,   even for recipes.", scope: "user:ada", title: "Units", tags: ["Preference"])
        #expect(result.created)
        let memory = result.memory
        #expect(UUID(uuidString: memory.id) != nil && memory.id == memory.id.lowercased())
        #expect(memory.version == 1 && memory.createdAt == memory.updatedAt)
        #expect(try await kb.memory(memory.id, as: .admin).memory == memory)
        #expect(try await kb.memory(String(memory.id.prefix(8)), as: .admin).memory == memory)
        #expect(try await kb.memories(scopes: [try .user("ada")], tags: ["preference"]) == [memory])
        #expect(try await kb.memories(scopes: [try .user("bob")]).isEmpty)
        #expect(try await kb.memories(tags: ["other"]).isEmpty)
        let status = try await kb.status(as: .admin)
        #expect(status.sourcesByKind["memory"] == 1)
        #expect(status.vectors["hashing-384"] == 1)
        for mode in SearchMode.allCases {
            #expect(try await kb.recallIDs("metric recipes", mode: mode) == [memory.id])
        }
    }

    @Test func knowledgeSearchLeavesMemoriesOutUnlessAskedFor() async throws {
        let (kb, ws) = try await memoryBase()
        try ws.write("units.md", "# Units\n\nThe metric system measures recipes in grams.")
        let (embedder, record) = try await kb.embedder(.hashing)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        let memory = try await kb.add("Prefers metric units for recipes and grams.").memory
        for mode in SearchMode.allCases {
            var query = SearchQuery("metric recipes grams")
            query.mode = mode
            let plain = try await kb.search(query, as: .admin)
            #expect(plain.hits.map(\.kind) == [.note], "\(mode)")
            query.tags = []
            query.kinds = [.memory]
            #expect(try await kb.search(query, as: .admin).hits.map(\.sourcePath) == [memory.sourcePath], "\(mode)")
            query.kinds = [.memory, .note]
            #expect(try await kb.search(query, as: .admin).hits.count == 2, "\(mode)")
        }
    }

    @Test func scopesAreStrictlyIsolated() async throws {
        let (kb, _) = try await memoryBase()
        let a = try await kb.add("Is allergic to peanuts.", scope: "user:a").memory
        let b = try await kb.add("Is allergic to peanuts.", scope: "user:b").memory
        let bot = try await kb.add("Answers in French about peanuts.", scope: "bot:chef").memory
        #expect(a.id != b.id)
        for mode in SearchMode.allCases {
            #expect(try await kb.recallIDs("peanuts allergic", scopes: ["user:a"], mode: mode) == [a.id])
            #expect(try await kb.recallIDs("peanuts allergic", scopes: ["user:b"], mode: mode) == [b.id])
            #expect(try await kb.recallIDs("peanuts", scopes: ["user:c"], mode: mode).isEmpty)
            #expect(Set(try await kb.recallIDs("peanuts", scopes: ["user:a", "bot:chef"], mode: mode)) == [a.id, bot.id])
        }
    }

    @Test func identicalContentInTheSameScopeReturnsTheExistingMemory() async throws {
        let (kb, _) = try await memoryBase()
        let first = try await kb.add("Writes a thesis on Venus transits.", scope: "user:a")
        let again = try await kb.add("  Writes a thesis\non   Venus transits. ", scope: "user:a", title: "other title")
        #expect(!again.created)
        #expect(again.memory == first.memory)
        #expect(try await kb.memories().count == 1)
        let otherCase = try await kb.add("writes a thesis on venus transits.", scope: "user:a")
        #expect(otherCase.created)
    }

    @Test func nearDuplicatesAreAddedAndReportedWithTheirSimilarity() async throws {
        let (kb, _) = try await memoryBase()
        let sentence = "prefers metric units for cooking baking travel distances weather reports body weight and height always"
        let original = try await kb.add(sentence).memory
        let near = try await kb.add(sentence.replacingOccurrences(of: "always", with: "usually"))
        #expect(near.created)
        try #require(near.nearDuplicates.map(\.id) == [original.id])
        #expect(near.nearDuplicates[0].similarity >= 0.92 && near.nearDuplicates[0].similarity < 1)
        #expect(near.nearDuplicates[0].content == original.content)
        let unrelated = try await kb.add("is learning to play the cello")
        #expect(unrelated.nearDuplicates.isEmpty)
        var strict = MemoryOptions()
        strict.nearDuplicateThreshold = 0.999
        let notNearEnough = try await kb.add(sentence + " please", options: strict)
        #expect(notNearEnough.nearDuplicates.isEmpty)
        // Near-duplicates are looked for within the scope only.
        let elsewhere = try await kb.add(sentence, scope: "user:z")
        #expect(elsewhere.created && elsewhere.nearDuplicates.isEmpty)
    }

    @Test func supersedingKeepsTheOldMemoryOutOfSearchButInHistory() async throws {
        let (kb, _) = try await memoryBase()
        let old = try await kb.add("Lives in Lisbon.", scope: "user:a").memory
        let new = try await kb.add("Lives in Porto since March.", scope: "user:a", superseding: String(old.id.prefix(6)))
        #expect(new.superseded == old.id)
        #expect(try await kb.memory(old.id, as: .admin).memory.supersededBy == new.memory.id)
        #expect(try await kb.recallIDs("lives Lisbon", scopes: ["user:a"]) == [new.memory.id])
        #expect(try await kb.recallIDs("Lisbon", scopes: ["user:a"], mode: .keyword).isEmpty)
        #expect(try await kb.recallIDs("Lisbon", scopes: ["user:a"], mode: .keyword, superseded: true) == [old.id])
        #expect(try await kb.memories().map(\.id) == [new.memory.id])
        #expect(try await kb.memories(includeSuperseded: true).count == 2)
        // A superseded memory cannot be superseded again, nor one of another scope.
        await #expect(throws: KBError.self) { try await kb.add("Lives in Faro.", scope: "user:a", superseding: old.id) }
        await #expect(throws: KBError.self) { try await kb.add("Lives in Faro.", scope: "user:b", superseding: new.memory.id) }
        #expect(try await kb.memories(includeSuperseded: true).count == 2)
        // Deleting the replacement makes the old memory current again.
        try await kb.forget(new.memory.id)
        #expect(try await kb.memory(old.id, as: .admin).memory.supersededBy == nil)
        #expect(try await kb.recallIDs("Lisbon", scopes: ["user:a"], mode: .keyword) == [old.id])
    }

    @Test func updatesKeepEveryPreviousVersion() async throws {
        let (kb, _) = try await memoryBase()
        let memory = try await kb.add("Drinks coffee black.", title: "Coffee", tags: ["diet"]).memory
        let v2 = try await kb.updateMemory(memory.id, MemoryChange(content: "Drinks tea, no coffee."))
        #expect(v2.version == 2 && v2.id == memory.id && v2.createdAt == memory.createdAt)
        let v3 = try await kb.updateMemory(memory.id, MemoryChange(title: .some(nil), tags: ["diet", "drinks"]))
        #expect(v3.version == 3 && v3.title == nil && v3.tags == ["diet", "drinks"])
        let unchanged = try await kb.updateMemory(memory.id, MemoryChange(content: " Drinks tea,  no coffee. "))
        #expect(unchanged.version == 3)
        let history = try await kb.memory(memory.id, history: true, as: .admin).history!
        #expect(history.map(\.version) == [1, 2])
        #expect(history.map(\.content) == ["Drinks coffee black.", "Drinks tea, no coffee."])
        #expect(history[0].title == "Coffee" && history[0].tags == ["diet"])
        // Search sees only the current text.
        #expect(try await kb.recallIDs("black", mode: .keyword).isEmpty)
        #expect(try await kb.recallIDs("tea", mode: .keyword) == [memory.id])
        #expect(try await kb.status(as: .admin).vectors["hashing-384"] == 1)
    }

    @Test func anUpdateCannotTakeTheContentOfAnotherMemory() async throws {
        let (kb, _) = try await memoryBase()
        let a = try await kb.add("Likes jazz.").memory
        let b = try await kb.add("Likes opera.").memory
        let error = await #expect(throws: KBError.self) { try await kb.updateMemory(b.id, MemoryChange(content: "Likes  jazz.")) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains(a.id) == true)
        #expect(try await kb.memory(b.id, as: .admin).memory == b)
        #expect(try await kb.memory(b.id, history: true, as: .admin).history!.isEmpty)
    }

    @Test func aDeletedMemoryLeavesNoGhostHits() async throws {
        let (kb, _) = try await memoryBase()
        let keep = try await kb.add("Plays chess on Sundays.").memory
        let gone = try await kb.add("Plays the cello on Sundays.").memory
        _ = try await kb.updateMemory(gone.id, MemoryChange(content: "Plays the cello on Sundays and Mondays."))
        // Load the vectors into memory first, so the delete must update them in place.
        #expect(try await kb.recallIDs("cello Sundays", mode: .vector).first == gone.id)
        let deleted = try await kb.forget(gone.id)
        #expect(deleted.id == gone.id)
        for mode in SearchMode.allCases {
            #expect(try await kb.recallIDs("cello Sundays Mondays", mode: mode).allSatisfy { $0 == keep.id }, "\(mode)")
        }
        // Another process sees the same.
        let fresh = try KnowledgeBase.open(at: kb.path, create: false)
        #expect(try await fresh.recallIDs("cello", mode: .vector) == [keep.id])
        #expect(try await fresh.recallIDs("cello", mode: .keyword).isEmpty)
        #expect(try await kb.store.snapshot { try $0.memoryHistory(gone.id) }.isEmpty)
        #expect(try await kb.status(as: .admin).vectors["hashing-384"] == 1)
        await #expect(throws: KBError.self) { try await kb.memory(gone.id, as: .admin).memory }
        await #expect(throws: KBError.self) { try await kb.forget(gone.id) }
    }

    @Test func badInputGetsClearErrorsAndChangesNothing() async throws {
        let (kb, _) = try await memoryBase()
        _ = try await kb.add("one memory")
        var small = MemoryOptions()
        small.maxContentBytes = 16
        let cases: [(String, () async throws -> Void)] = [
            ("empty", { _ = try await kb.add("   \n ") }),
            ("too large", { _ = try await kb.add("this is longer than sixteen bytes", options: small) }),
            ("too large by default", { _ = try await kb.add(String(repeating: "x", count: 8193)) }),
            ("bad scope", { _ = try await kb.add("fine", scope: "everyone") }),
            ("unknown id", { _ = try await kb.updateMemory("00000000-0000-0000-0000-000000000000", MemoryChange(content: "x")) }),
            ("malformed id", { _ = try await kb.forget("../x") }),
            ("unknown supersede", { _ = try await kb.add("fine", superseding: "abcdef12") }),
            ("nothing to update", { _ = try await kb.updateMemory("abcd", MemoryChange()) }),
        ]
        for (name, body) in cases {
            await #expect(throws: KBError.self, "\(name)") { try await body() }
        }
        #expect(try await kb.memories(includeSuperseded: true).count == 1)
        let error = await #expect(throws: KBError.self) { try await kb.add(String(repeating: "x", count: 8193)) }
        #expect(error?.code == .tooLarge)
        #expect(error?.message.contains("8192") == true)
    }

    @Test func ambiguousIdPrefixesAreRefused() async throws {
        let (kb, _) = try await memoryBase()
        var ids: [String] = []
        for i in 0..<40 { ids.append(try await kb.add("memory number \(i)").memory.id) }
        // Among 40 UUIDs two share a first hex digit; a 4-character prefix of one of them is usually unique.
        let byFirst = Dictionary(grouping: ids, by: { $0.prefix(1) })
        let shared = byFirst.values.first { $0.count > 1 }!
        let prefix = String(shared[0].prefix(1))
        let error = await #expect(throws: KBError.self) { try await kb.store.snapshot { try $0.memory(prefix) } }
        #expect(error?.message.contains("several") == true)
    }

    @Test(.enabled(if: TestBackend.isSQLite, "ages a memory with SQL on the file"))
    func recencyPrefersNewerMemoriesWhenAsked() async throws {
        let (kb, _) = try await memoryBase()
        let old = try await kb.add("Favourite colour is green, deep green.").memory
        let recent = try await kb.add("Favourite colour is green now.").memory
        var query = MemoryQuery("favourite colour green deep")
        query.mode = .keyword
        #expect(try await kb.recall(query, as: .admin).hits.first?.memory.id == old.id)
        // Seen a year from the old memory's time, with the new one only written then.
        try await (kb.store as! SQLiteStore).write { db in
            try db.execute(sql: "UPDATE memories SET updated_at = updated_at - 365 * 86400 WHERE id = ?", arguments: [old.id])
        }
        query.recency = try Recency("30d")
        let hits = try await kb.recall(query, as: .admin).hits
        #expect(hits.map(\.memory.id) == [recent.id, old.id])
        #expect(hits.map(\.rank) == [1, 2])
        #expect(hits[1].score < hits[0].score)
    }

    @Test func exportThenImportRoundTripsExactlyAndImportingTwiceChangesNothing() async throws {
        let (kb, _) = try await memoryBase()
        let a = try await kb.add("Prefers metric units.", scope: "user:ada", title: "Units", tags: ["preference"]).memory
        _ = try await kb.updateMemory(a.id, MemoryChange(content: "Prefers metric units, always."))
        let b = try await kb.add("Speaks Portuguese.", scope: "user:ada").memory
        _ = try await kb.add("Speaks Portuguese and Spanish.", scope: "user:ada", superseding: b.id)
        _ = try await kb.add("Answers briefly.\nWith \"quotes\" and ünïcode ✓.", scope: "bot:helper")
        let exported = try await kb.exportMemories(as: .admin)
        #expect(exported.split(separator: "\n").count == 4)

        let (other, _) = try await memoryBase()
        let first = try await other.importMemories(exported, embedder: .hashing, as: .admin)
        #expect(first == MemoryImportReport(added: 4, unchanged: 0, replaced: 0, failed: []))
        #expect(try await other.exportMemories(as: .admin) == exported)
        let expectedIDs = try await kb.memories(includeSuperseded: true).map(\.id)
        #expect(try await other.memories(includeSuperseded: true).map(\.id) == expectedIDs)
        #expect(try await other.memory(a.id, history: true, as: .admin).history!.map(\.content) == ["Prefers metric units."])
        let generation = try await other.store.snapshot { try $0.generation() }
        let second = try await other.importMemories(exported, embedder: .hashing, as: .admin)
        #expect(second == MemoryImportReport(added: 0, unchanged: 4, replaced: 0, failed: []))
        #expect(try await other.store.snapshot { try $0.generation() } == generation)
        #expect(try await other.exportMemories(as: .admin) == exported)
        #expect(try await other.recallIDs("Portuguese Spanish", scopes: ["user:ada"], mode: .keyword).count == 1)
        #expect(try await other.exportMemories(scopes: [try .bot("helper")], as: .admin).split(separator: "\n").count == 1)
    }

    @Test func importReportsBadLinesAndConflictsAndStoresTheRest() async throws {
        let (kb, _) = try await memoryBase()
        let a = try await kb.add("Likes tea.").memory
        let exported = try await kb.exportMemories(as: .admin)
        let changed = exported.replacingOccurrences(of: "Likes tea.", with: "Likes green tea.")
        let clash = exported.replacingOccurrences(of: a.id, with: "11111111-2222-3333-4444-555555555555")
        let text = """
            {"oops"
            \(changed.trimmingCharacters(in: .newlines))
            {"id":"aaaaaaaa-2222-3333-4444-555555555555","scope":"user:x","content":"Fine memory.","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}
            \(clash.trimmingCharacters(in: .newlines))
            """
        let report = try await kb.importMemories(text, embedder: .hashing, as: .admin)
        #expect(report.added == 1)
        #expect(report.failed.map(\.line) == [1, 2, 4])
        #expect(report.failed[1].message.contains("--replace"))
        #expect(report.failed[2].message.contains(a.id))
        #expect(try await kb.memory(a.id, as: .admin).memory.content == "Likes tea.")
        #expect(try await kb.memories(scopes: [try .user("x")]).count == 1)
        let replaced = try await kb.importMemories(changed, replacing: true, embedder: .hashing, as: .admin)
        #expect(replaced.replaced == 1)
        #expect(try await kb.memory(a.id, as: .admin).memory.content == "Likes green tea.")
        #expect(try await kb.recallIDs("tea", mode: .keyword) == [a.id])
        #expect(try await kb.status(as: .admin).vectors["hashing-384"] == 2)
    }

    @Test func concurrentAddsFromManyTasksLoseNothingAndDuplicateNothing() async throws {
        let (kb, _) = try await memoryBase()
        _ = try await kb.add("warm-up")
        let results = try await withThrowingTaskGroup(of: RememberResult.self) { group in
            for i in 0..<24 {
                group.addTask { try await kb.add("distinct memory \(i)", scope: "user:\(i % 3)") }
                group.addTask { try await kb.add("the same fact", scope: "user:shared") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 48)
        let shared = results.filter { $0.memory.scope.name == "user:shared" }
        #expect(Set(shared.map(\.memory.id)).count == 1)
        #expect(shared.filter(\.created).count == 1)
        #expect(try await kb.memories().count == 1 + 24 + 1)
        for i in 0..<3 {
            #expect(try await kb.memories(scopes: [try .user("\(i)")]).count == 8)
        }
        #expect(try await kb.status(as: .admin).vectors["hashing-384"] == 26)
        #expect(try await kb.recallIDs("distinct memory 17", scopes: ["user:2"], mode: .keyword).count == 8)
    }

    @Test(.enabled(if: TestBackend.isSQLite, "migrates an SQLite file written by an old kb"))
    func anIndexWrittenBeforeMemoriesExistedOpensAndTakesMemories() async throws {
        let fixture = try #require(Bundle.module.url(forResource: "index-v2", withExtension: "sqlite", subdirectory: "Fixtures"))
        let ws = try Workspace()
        try FileManager.default.copyItem(atPath: fixture.path, toPath: ws.dbPath)
        let kb = try KnowledgeBase.open(at: ws.dbPath, create: false)
        let status = try await kb.status(as: .admin)
        #expect(status.schemaVersion == 15)
        #expect(status.sources == 2 && status.vectors["hashing-384"] == 2)
        var query = SearchQuery("love beauty")
        query.mode = .vector
        #expect(try await kb.search(query, as: .admin).hits.first?.sourceTitle == "Venus")
        let memory = try await kb.remember(MemoryDraft("Rising sign is Libra."), as: .admin).memory
        #expect(try await kb.recallIDs("Libra", mode: .vector) == [memory.id])
    }
}

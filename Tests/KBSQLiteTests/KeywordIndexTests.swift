import Foundation
import GRDB
import KBCore
@testable import KBSQLite
import KBStore
import Testing

/// The keyword postings in memory rank exactly as FTS5's bm25 does, and follow the writes of
/// this process.
struct KeywordIndexTests {
    /// Words with very different frequencies, so that some are in most snippets (idf clamped)
    /// and some in a few.
    static let words = ["saturn", "return", "venus", "house", "moon", "transit", "career", "money", "love", "chart",
                        "mercury", "retrograde", "aspect", "square", "trine", "eclipse", "node", "angle", "ruler", "sign"]

    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        /// A word drawn with Zipf-like weights: the first words far more often than the last.
        mutating func word() -> String {
            let a = next(KeywordIndexTests.words.count), b = next(KeywordIndexTests.words.count)
            return KeywordIndexTests.words[min(a, b)]
        }
        mutating func text(_ length: Int) -> String { (0..<length).map { _ in word() }.joined(separator: " ") }
    }

    /// `sources` sources of 40 snippets each: text, titles and headings from the same words.
    static func fill(_ store: SQLiteStore, sources: Range<Int>, seed: UInt64) async throws {
        var generator = Generator(state: seed)
        for s in sources {
            let texts = (0..<40).map { _ in generator.text(3 + generator.next(40)) }
            try await store.replace(document("/shelf/book\(s).md", title: generator.text(2), snippets: texts, hash: "h\(seed)"))
        }
    }

    /// FTS5's own ranking, as `ORDER BY bm25(…), rowid`, of the snippets in `allowed`.
    static func ftsRanking(_ store: SQLiteStore, _ text: String, allowed: Set<Int64>, limit: Int) async throws -> [(id: Int64, score: Double)] {
        guard let match = KeywordQuery.match(for: text) else { return [] }
        let rows = try await store.read { db in
            try Row.fetchAll(db, sql: """
                SELECT rowid, bm25(snippets_fts, \(SQLiteStore.bm25Weights)) AS rank FROM snippets_fts
                WHERE snippets_fts MATCH ? ORDER BY rank, rowid
                """, arguments: [match]).map { (id: $0[0] as Int64, score: -($0[1] as Double)) }
        }
        return Array(rows.filter { allowed.contains($0.id) }.prefix(limit))
    }

    static func memoryRanking(_ store: SQLiteStore, _ text: String, allowed: Set<Int64>, limit: Int) async throws -> [(id: Int64, score: Double)]? {
        try await store.snapshot { snapshot in
            try (snapshot as! SQLiteStore.Snapshot).keywordRankingInMemory(text, language: .english, limit: limit, allowed: allowed)
        }
    }

    static let queries = ["saturn return", "venus", "mercury retrograde square", "sign ruler angle node", "eclipse", "love money career chart",
                          "returns of saturn", "nothing matches zzz"]

    static func expectSameRankings(_ store: SQLiteStore, allowed: Set<Int64>, _ comment: String) async throws {
        for query in queries {
            let expected = try await ftsRanking(store, query, allowed: allowed, limit: 30)
            let ranked = try #require(try await memoryRanking(store, query, allowed: allowed, limit: 30), "\(comment): \(query)")
            #expect(ranked.map(\.id) == expected.map(\.id), "\(comment): \(query)")
            for (a, b) in zip(ranked, expected) { #expect(a.score == b.score, "\(comment): \(query) \(a.id)") }
        }
    }

    static func snippetIDs(_ store: SQLiteStore) async throws -> [Int64] {
        try await store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM snippets ORDER BY id") }
    }

    @Test func rankingsInMemoryEqualFTS5sBitForBit() async throws {
        let store = try temporaryStore()
        try await Self.fill(store, sources: 0..<40, seed: 1)
        let ids = try await Self.snippetIDs(store)
        // Everything, and every other snippet (a filter that lets half through).
        try await Self.expectSameRankings(store, allowed: Set(ids), "all")
        try await Self.expectSameRankings(store, allowed: Set(ids.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)), "half")
        // A few (a user's memories): looked up in the postings one by one.
        try await Self.expectSameRankings(store, allowed: Set(ids.enumerated().filter { $0.offset % 97 == 3 }.map(\.element)), "a few")
    }

    @Test func rankingsFollowWritesAfterTheyAreLoaded() async throws {
        let store = try temporaryStore()
        try await Self.fill(store, sources: 0..<30, seed: 2)
        try await Self.expectSameRankings(store, allowed: Set(try await Self.snippetIDs(store)), "loaded")
        // Re-ingest some sources with other text (their ids are removed, new ones added), add
        // more, remove one: the copy in memory follows each write.
        try await Self.fill(store, sources: 0..<5, seed: 3)
        try await Self.expectSameRankings(store, allowed: Set(try await Self.snippetIDs(store)), "replaced")
        try await Self.fill(store, sources: 30..<36, seed: 4)
        _ = try await store.removeSources(exactly: ["/shelf/book7.md", "/shelf/book31.md"])
        try await Self.expectSameRankings(store, allowed: Set(try await Self.snippetIDs(store)), "added and removed")
        let left = try await Self.snippetIDs(store)
        try await Self.expectSameRankings(store, allowed: Set(left.enumerated().filter { $0.offset % 89 == 5 }.map(\.element)), "a few after removals")
        // A raw write (whose effect the store cannot follow) makes the next search rebuild.
        try await store.write { db in try db.execute(sql: "DELETE FROM snippets WHERE id IN (SELECT id FROM snippets ORDER BY id LIMIT 50)") }
        try await Self.expectSameRankings(store, allowed: Set(try await Self.snippetIDs(store)), "after a raw write")
    }

    @Test func withoutAFilterFTS5Ranks() async throws {
        let store = try temporaryStore()
        try await Self.fill(store, sources: 0..<2, seed: 5)
        let ranked = try await Self.memoryRanking(store, "saturn", allowed: Set(try await Self.snippetIDs(store)), limit: 5)
        #expect(ranked?.count == 5)
        // A query with no filter still goes to FTS5 (which leaves hidden snippets out itself),
        // and agrees.
        let hits = try await store.snapshot { try $0.keywordRanking(SearchQuery("saturn"), limit: 5, allowed: nil) }
        #expect(hits.map(\.id) == ranked?.map(\.id))
    }

    /// Also with the documents scored a range at a time (700 of the 4,000 a range), against the
    /// index that scores them all at once.
    @Test(arguments: [KeywordIndex.defaultPartition, 700])
    func commonWordsPostingsAreSkippedWithoutChangingTheRanking(partition: Int) {
        func build(_ partition: Int) -> KeywordIndex {
            // "the" in every document and "a" in most (idf clamped or tiny), the others rarer.
            var generator = Generator(state: 9)
            let index = KeywordIndex(weights: [1, 2, 1.5, 1.5], partitionDocuments: partition)
            for id in 1...4_000 {
                var text = ["the"] + (0..<(2 + generator.next(30))).map { _ in generator.word() }
                if generator.next(10) < 8 { text.append("a") }
                index.add(Int64(id), columns: [text, generator.next(5) == 0 ? ["the", generator.word()] : [], [], []])
            }
            index.remove((1...4_000).filter { $0 % 37 == 0 }.map(Int64.init))
            return index
        }
        let index = build(partition), whole = build(KeywordIndex.defaultPartition)
        var generator = Generator(state: 10)
        let queries = [["the", "saturn", "a", "return"], ["a", "the", "eclipse", "node", "sign"], ["sign", "the"], ["the", "a"], ["eclipse"],
                       ["saturn", "the", "saturn"], (0..<12).map { _ in generator.word() } + ["the"]]
        let half = Set((1...4_000).filter { $0 % 2 == 1 }.map(Int64.init))
        var skippedSome = false
        for query in queries {
            for (allowed, excluded) in [(nil, Set<Int64>()), (half, Set<Int64>([5, 7, 9]))] as [(Set<Int64>?, Set<Int64>)] {
                for limit in [1, 10, 50, 5_000] {
                    let full = whole.ranking(query, limit: limit, allowed: allowed, excluded: excluded, pruning: false)
                    let pruned = index.ranking(query, limit: limit, allowed: allowed, excluded: excluded, pruning: true)
                    #expect(pruned.ranking.map(\.id) == full.ranking.map(\.id), "\(query) \(limit)")
                    #expect(pruned.ranking.map(\.score) == full.ranking.map(\.score), "\(query) \(limit)")
                    #expect(pruned.scanned <= full.scanned + full.scanned / 2)
                    if pruned.scanned < full.scanned / 2 { skippedSome = true }
                }
            }
        }
        #expect(skippedSome)
    }

    /// Two common words, neither rare enough for a floor before the ranking starts: the first range
    /// is ranked in full, and its best scores let every later range skip the commoner word (looked
    /// up for the documents the other holds, against the range's bitmap or by galloping search).
    @Test func laterRangesSkipWhatTheBestSoFarRuleOut() {
        var generator = Generator(state: 21)
        let index = KeywordIndex(weights: [1, 2, 1.5, 1.5], partitionDocuments: 500)
        for id in 1...6_000 {
            var text = (0..<(4 + generator.next(20))).map { _ in "filler\(generator.next(50))" }
            if generator.next(3) == 0 { text.append("moon") }                  // in a third of the documents
            if generator.next(5) == 0 { text += ["saturn", "saturn"] }         // in a fifth, twice
            if generator.next(60) == 0 { text.append("eclipse") }              // in a few
            index.add(Int64(id), columns: [text, [], [], []])
        }
        index.remove((1...6_000).filter { $0 % 41 == 0 }.map(Int64.init))
        func postings(_ term: String) -> Int { index.ranking([term], limit: 6_000, allowed: nil, excluded: [], pruning: false).scanned }
        for query in [["moon", "saturn"], ["moon", "eclipse"], ["saturn", "moon", "eclipse"]] {
            for limit in [1, 10, 40] {
                let full = index.ranking(query, limit: limit, allowed: nil, excluded: [], pruning: false)
                let pruned = index.ranking(query, limit: limit, allowed: nil, excluded: [], pruning: true)
                #expect(pruned.ranking.map(\.id) == full.ranking.map(\.id), "\(query) \(limit)")
                #expect(pruned.ranking.map(\.score) == full.ranking.map(\.score), "\(query) \(limit)")
                // "moon" is read one by one in the first range only (500 of 6,000 documents).
                let others = query.filter { $0 != "moon" }.reduce(0) { $0 + postings($1) }
                #expect(pruned.scanned < others + postings("moon") / 4, "\(query) \(limit): \(pruned.scanned)")
            }
        }
    }

    @Test func gallopingFindsEveryCommonDocument() {
        var generator = Generator(state: 4)
        for _ in 0..<200 {
            let postings = (0..<500).filter { _ in generator.next(3) == 0 }.map(UInt32.init)
            let documents = (0..<500).filter { _ in generator.next(20) == 0 }.map(UInt32.init)
            var found: [UInt32] = []
            KeywordIndex.intersect(documents, postings) { i, position in
                #expect(postings[position] == documents[i])
                found.append(documents[i])
            }
            #expect(found == documents.filter(Set(postings).contains))
        }
    }

    @Test func theIndexScoresAsTheFormulaSays() {
        // Three documents; "saturn" in two (idf clamped to 1e-6: in more than half the rows),
        // "venus" in one, weighted twice in the title column.
        let index = KeywordIndex(weights: [1, 2, 1.5, 1.5])
        index.add(1, columns: [["saturn", "return"], ["venus"], [], []])
        index.add(2, columns: [["saturn", "saturn", "moon", "moon"], [], [], []])
        index.add(3, columns: [["moon"], [], [], []])
        let ranked = index.ranking(["venus", "saturn"], limit: 10, allowed: nil)
        let n = 3.0, average = 8.0 / 3
        func part(_ idf: Double, _ f: Double, _ length: Double) -> Double {
            idf * (f * 2.2) / (f + 1.2 * (1 - 0.75 + 0.75 * length / average))
        }
        let venusIDF = log((n - 1 + 0.5) / (1 + 0.5))
        #expect(ranked.map(\.id) == [1, 2])
        #expect(ranked[0].score == part(venusIDF, 2, 3) + part(1e-6, 1, 3))
        #expect(ranked[1].score == part(1e-6, 2, 4))
        index.remove([1])
        #expect(index.ranking(["venus"], limit: 10, allowed: nil).isEmpty)
        #expect(index.ranking(["saturn"], limit: 10, allowed: nil, excluded: [2]).isEmpty)
    }
}

/// Memories' vectors are kept in a matrix of their own: a ranking of knowledge never scans them,
/// and both copies follow writes.
struct VectorPartitionTests {
    static let record = EmbedderRecord(name: "test-4", dimension: 4, spec: "none")

    static func unit(_ values: [Float]) -> [Float] {
        let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return values.map { $0 / norm }
    }

    @Test func knowledgeAndMemoriesAreScannedApartAndFollowWrites() async throws {
        let store = try temporaryStore()
        let notes = document("/notes/a.md", snippets: ["one", "two", "three"])
        try await store.replace(notes, vectors: [Self.unit([1, 0, 0, 0]), Self.unit([1, 1, 0, 0]), Self.unit([0, 1, 0, 0])], embedder: Self.record)
        let memory = document("memory:user:u1/m1", kind: .memory, snippets: ["a memory"], hash: "m1")
        try await store.replace(memory, vectors: [Self.unit([1, 0.1, 0, 0])], embedder: Self.record)
        let query = Self.unit([1, 0, 0, 0])
        func ranking(_ rows: VectorRows) async throws -> [Int64] {
            try await store.snapshot { try $0.vectorRanking(query, embedder: Self.record, k: 10, allowed: nil, excluded: [], quantized: false, rows: rows) }
                .map(\.id)
        }
        let knowledge = try await ranking(.knowledge), memories = try await ranking(.memories), all = try await ranking(.all)
        #expect(knowledge.count == 3 && memories.count == 1)
        #expect(Set(knowledge).isDisjoint(with: memories))
        #expect(all == [knowledge[0], memories[0], knowledge[1], knowledge[2]])   // merged by score
        #expect(store.vectors.loadedIndex?.count == 3 && store.memoryVectors.loadedIndex?.count == 1)

        // A new memory goes into the memories' copy without a reload, and never into the other.
        let loaded = store.memoryVectors.loadedIndex
        try await store.replace(document("memory:user:u1/m2", kind: .memory, snippets: ["another"], hash: "m2"),
                                vectors: [Self.unit([0, 0, 1, 0])], embedder: Self.record)
        #expect(try await ranking(.memories).count == 2)
        #expect(try await ranking(.knowledge).count == 3)
        #expect(store.memoryVectors.loadedIndex === loaded)
        _ = try await store.removeSources(exactly: ["memory:user:u1/m1"])
        #expect(try await ranking(.memories).count == 1)
        #expect(try await ranking(.all).count == 4)
    }
}

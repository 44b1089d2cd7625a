import Foundation
import KBCore
import KBPostgres
import KBStore
import Testing

/// The keyword ranking's contract on every engine, through merges, writes and deletions: a
/// ranking to `limit` is the first `limit` of the whole ranking (a store may stop reading once
/// nothing else can reach the top, as PostgreSQL's blocks do, but never drops a hit), filters
/// never shrink it, and what is written is ranked in the next search.
@Suite struct KeywordContractTests {
    static let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
                        "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"]

    /// A source of `count` snippets: "alpha" in nearly all, each other word ever rarer.
    static func source(_ path: String, count: Int, random: inout XorShift, hash: String = "h") -> SourceDocument {
        let texts = (0..<count).map { _ -> String in
            var tokens: [String] = []
            for _ in 0..<(4 + random.next(30)) {
                let rank = random.next(3) == 0 ? 0 : random.next(1 + random.next(words.count))
                tokens.append(words[min(rank, words.count - 1)])
            }
            return tokens.joined(separator: " ")
        }
        return contractDocument(path, title: "Title \(path)", snippets: texts, hash: hash)
    }

    static let queries = ["alpha", "alpha bravo", "charlie alpha delta", "tango", "sierra tango alpha romeo", "echo foxtrot golf hotel india"]

    /// Every query's ranking to a few limits against the whole ranking, with and without a filter;
    /// on PostgreSQL also the blocks walked with pruning against all of them read.
    static func checkRankings(_ store: any IndexStore, filterPrefix: String) async throws {
        for text in queries {
            for prefix in [nil, filterPrefix] {
                var asked = SearchQuery(text)
                if let prefix { asked.sourcePrefixes = [prefix] }
                let query = asked
                let (whole, tops) = try await store.snapshot { snapshot in
                    (try snapshot.keywordRanking(query, limit: 1_000_000, allowed: nil),
                     try [1, 10, 60].map { try snapshot.keywordRanking(query, limit: $0, allowed: nil) })
                }
                #expect(!whole.isEmpty)
                for top in tops {
                    #expect(top.map(\.id) == Array(whole.prefix(top.count).map(\.id)), "\(text) \(prefix ?? "")")
                    #expect(zip(top, whole).allSatisfy { abs($0.score - $1.score) <= 1e-12 * max(1, abs($1.score)) })
                    #expect(top.count == min([1, 10, 60].first { $0 >= top.count } ?? top.count, whole.count))
                }
                if let postgres = store as? PostgresStore {
                    for limit in [1, 10, 60] {
                        let pruned = try await postgres.keywordWalk(query, limit: limit, pruning: true)
                        let all = try await postgres.keywordWalk(query, limit: limit, pruning: false)
                        #expect(pruned.ranking.map(\.id) == all.ranking.map(\.id), "\(text) limit \(limit)")
                        #expect(pruned.ranking.map(\.score) == all.ranking.map(\.score), "\(text) limit \(limit)")
                        #expect(pruned.ranking.map(\.id) == Array(whole.prefix(limit).map(\.id)))
                    }
                }
            }
        }
    }

    @Test(arguments: ContractEngine.all)
    func rankingsStayWholeThroughMergesWritesAndDeletes(engine: ContractEngine) async throws {
        let store = try engine.fresh()
        var random = XorShift(state: 11)
        // 5,000 snippets: on PostgreSQL "alpha" is frequent enough to keep its best postings apart.
        let documents = (0..<25).map { (Self.source("/books/\($0).md", count: 200, random: &random), [[Float]]?.none) }
        _ = try await store.replace(documents, embedder: .none, ingestedAt: Date())
        try await Self.checkRankings(store, filterPrefix: "/books/1")   // all in the tail
        let optimized = try await store.optimizeKeywordIndex()
        // PostgreSQL writes the new blocks to disk at once (the test server's role may); SQLite has no such step.
        #expect((optimized.checkpoint?.done == true) == (engine.name == "PostgreSQL"), "\(String(describing: optimized.checkpoint))")
        try await Self.checkRankings(store, filterPrefix: "/books/1")   // all in blocks

        // After the merge: new sources (the tail), a source replaced and one removed (postings
        // left in blocks are dropped from rankings).
        let old = try await store.snapshot { try $0.snippetIDs(ofSource: "/books/7.md") + $0.snippetIDs(ofSource: "/books/3.md") }
        _ = try await store.replace(Self.source("/late/a.md", count: 150, random: &random), vectors: nil, embedder: .none)
        _ = try await store.replace(Self.source("/books/3.md", count: 120, random: &random, hash: "h2"), vectors: nil, embedder: .none)
        _ = try await store.removeSources(exactly: ["/books/7.md"])
        try await Self.checkRankings(store, filterPrefix: "/books/1")
        let ranked = try await store.snapshot { snapshot in
            try snapshot.keywordRanking(SearchQuery("alpha"), limit: 1_000_000, allowed: nil)
        }
        #expect(old.count == 400 && Set(ranked.map(\.id)).isDisjoint(with: old))
        #expect(try await store.status().snippets == 25 * 200 - 200 - 200 + 120 + 150)

        // What is written is ranked in the next search, whatever has been merged.
        _ = try await store.replace(contractDocument("/late/new.md", snippets: ["zephyrine alpha"]), vectors: nil, embedder: .none)
        let found = try await store.keywordSearch(SearchQuery("zephyrine"))
        #expect(found.map(\.sourcePath) == ["/late/new.md"])
        _ = try await store.removeSources(exactly: ["/late/new.md"])
        #expect(try await store.keywordSearch(SearchQuery("zephyrine")).isEmpty)

        _ = try await store.optimizeKeywordIndex()
        try await Self.checkRankings(store, filterPrefix: "/late/")
        #expect(try await store.keywordSearch(SearchQuery("zephyrine")).isEmpty)
    }
}

import Foundation
import KBCore
import KBSQLite
import KBStore

/// The in-memory keyword ranking on an index (as `kb serve` ranks a bot's knowledge: every
/// snippet allowed): time per query, one at a time on one thread, for each line of `queriesFile`.
func benchKeywordRanking(index: String, queriesFile: String, limit: Int) async throws -> [String: Any] {
    let queries = try String(contentsOfFile: queriesFile, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    let store = try SQLiteStore.open(at: index, create: false)
    let loadStart = now()
    try await store.snapshot { try $0.prepareSearches(embedder: nil, quantizingFrom: Int.max) }
    let loadSeconds = now() - loadStart
    let allowed = Set(try await store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM snippets") })
    let (times, hits) = try await store.snapshot { snapshot in
        var times: [Double] = [], hits = 0
        for round in 0..<2 {
            for text in queries {
                var query = SearchQuery(text)
                query.sourcePrefixes = ["/"]   // a filter, as a bot's sources are: the in-memory ranking
                let start = now()
                let ranking = try snapshot.keywordRanking(query, limit: limit, allowed: allowed)
                if round == 1 {
                    times.append((now() - start) * 1000)
                    hits += ranking.count
                }
            }
        }
        return (times, hits)
    }
    let sorted = times.sorted()
    return ["queries": queries.count, "limit": limit, "snippets": allowed.count, "load_s": loadSeconds, "hits": hits,
                "mean_ms": times.reduce(0, +) / Double(times.count), "p50_ms": sorted[sorted.count / 2],
            "p90_ms": sorted[sorted.count * 9 / 10], "max_ms": sorted.last ?? 0]
}

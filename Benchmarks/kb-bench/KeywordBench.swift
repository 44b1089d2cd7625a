import CKBKernels
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
    _ = try await store.snapshot { try $0.prepareSearches(embedder: nil, quantizingFrom: Int.max) }
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
            "p90_ms": sorted[sorted.count * 9 / 10], "p99_ms": sorted[min(sorted.count - 1, sorted.count * 99 / 100)],
            "max_ms": sorted.last ?? 0]
}

/// The sign stage's pass (`kb_sign_plane_rows`) over `rows` random sign codes of 384 dimensions:
/// ns a row for one query streaming the codes from memory, and for 8 queries sharing each block
/// of 4,096 rows (as concurrent searches do), on one thread.
func benchSignPass(rows: Int) -> [String: Any] {
    let words = 6, bits = SignStageBench.bits
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func random() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    let codes = (0..<((rows + 7) / 8 * 8 * words)).map { _ in random() }
    let planes = (0..<(8 * bits * words)).map { _ in random() }
    var out = [Int32](repeating: 0, count: 8 * rows)
    var result: [String: Any] = ["rows": rows, "bits": bits]
    for (name, block, queries) in [("alone_ns_per_row", rows, 1), ("shared_8_ns_per_row", 4096, 8)] {
        var best = Double.infinity
        for _ in 0..<5 {
            let start = now()
            codes.withUnsafeBufferPointer { c in
                planes.withUnsafeBufferPointer { p in
                    out.withUnsafeMutableBufferPointer { o in
                        for first in stride(from: 0, to: rows, by: block) {
                            for j in 0..<queries {
                                _ = kb_sign_plane_rows(c.baseAddress! + first * words, min(block, rows - first), words,
                                                       p.baseAddress! + j * bits * words, bits, o.baseAddress! + j * rows + first)
                            }
                        }
                    }
                }
            }
            best = min(best, (now() - start) / Double(queries))
        }
        result[name] = best * 1e9 / Double(rows)
    }
    return result
}

/// The sign stage's query bits (as `SignQuery.bits`, internal to KBSQLite).
enum SignStageBench { static let bits = 4 }

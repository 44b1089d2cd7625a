import Foundation
import KBCore
import KBStore
import KBPostgres
import KBSQLite

/// Vectors in `clusters` groups, as embeddings of related texts are: a random centre plus
/// `noise` times a random unit vector, normalised (noise 0.7: cosine ≈ 0.82 to the centre).
func clusteredUnitVectors(_ count: Int, _ d: Int, clusters: Int, noise: Float, seed: UInt64) -> [Float] {
    let centres = randomUnitVectors(clusters, d, seed: 99)
    let jitter = randomUnitVectors(count, d, seed: seed)
    var out = [Float](repeating: 0, count: count * d)
    for r in 0..<count {
        let c = (r &* 7_919) % clusters
        var norm: Float = 0
        for j in 0..<d {
            let v = centres[c * d + j] + noise * jitter[r * d + j]
            out[r * d + j] = v
            norm += v * v
        }
        let inverse = 1 / norm.squareRoot()
        for j in 0..<d { out[r * d + j] *= inverse }
    }
    return out
}

/// Both kinds of data: uniform random unit vectors (the worst case for any approximate index:
/// every vector is nearly as far as every other) and clustered ones, like real embeddings.
func benchPostgresVectors(url: String, count: Int, queries: Int) async throws -> [String: Any] {
    [
        "uniform": try await benchPostgresVectors(url: url + "_uniform", matrix: randomUnitVectors(count, 384, seed: 42),
                                                  queries: randomUnitVectors(queries, 384, seed: 7), count: count, queryCount: queries),
        "clustered": try await benchPostgresVectors(url: url + "_clustered",
                                                    matrix: clusteredUnitVectors(count, 384, clusters: max(1, count / 100), noise: 0.7, seed: 42),
                                                    queries: clusteredUnitVectors(queries, 384, clusters: max(1, count / 100), noise: 0.7, seed: 7),
                                                    count: count, queryCount: queries),
    ]
}

/// N unit vectors (d = 384) in a PostgreSQL index, then Q queries: exact top-10 latency, then
/// an HNSW index's build time, latency and recall@10 against exact.
func benchPostgresVectors(url: String, matrix: [Float], queries: [Float], count: Int, queryCount: Int) async throws -> [String: Any] {
    let d = 384
    let store = try PostgresStore.open(url: url, create: true, analyzer: try FoldingAnalyzer())
    let record = EmbedderRecord(name: "random-384", dimension: d, spec: "hashing")
    let perSource = 1_000
    var start = now()
    for first in stride(from: 0, to: count, by: perSource) {
        let n = min(perSource, count - first)
        let snippets = (0..<n).map { i in Snippet(ordinal: i, text: "synthetic snippet \(first + i)", start: 0, end: 1, headingPath: []) }
        let document = SourceDocument(source: Source(path: "/synthetic/\(first / perSource).md", kind: .note, title: "Synthetic",
                                                     contentHash: String(first), size: n), snippets: snippets)
        let vectors = (0..<n).map { Array(matrix[(first + $0) * d..<(first + $0 + 1) * d]) }
        try await store.replace(document, vectors: vectors, embedder: record)
    }
    let loadSeconds = now() - start
    func run() async throws -> (latencies: [Double], results: [[Int64]]) {
        var latencies: [Double] = [], results: [[Int64]] = []
        for q in 0..<queryCount {
            let query = Array(queries[q * d..<(q + 1) * d])
            let began = now()
            let top = try await store.snapshot { try $0.vectorRanking(query, embedder: record, k: 10, allowed: nil, excluded: [], quantized: false) }
            latencies.append((now() - began) * 1000)
            results.append(top.map(\.id))
        }
        return (latencies, results)
    }
    _ = try await run()   // warm the cache
    let exact = try await run()
    start = now()
    let built = try await store.buildApproximateIndex(HNSWSettings(), sample: 0)
    let buildSeconds = now() - start
    _ = try await run()
    let approximate = try await run()
    let recall = zip(exact.results, approximate.results).map { e, a in Double(Set(e).intersection(a).count) / Double(max(1, e.count)) }
    return [
        "vectors": count, "dimension": d, "queries": queryCount, "load_seconds": loadSeconds,
        "exact_p50_ms": median(exact.latencies), "exact_p95_ms": percentile(exact.latencies, 0.95),
        "hnsw_build_seconds": buildSeconds, "hnsw_m": built.settings.m, "hnsw_ef_construction": built.settings.efConstruction,
        "hnsw_ef_search": built.settings.efSearch,
        "hnsw_p50_ms": median(approximate.latencies), "hnsw_p95_ms": percentile(approximate.latencies, 0.95),
        "hnsw_recall_at_10": recall.reduce(0, +) / Double(recall.count),
    ]
}

/// The PostgreSQL keyword ranking over `queriesFile`'s questions (one a line), each with the
/// blocks pruned and whole: whether the two agree (ids and scores), and per question the time
/// and the blocks and postings read, as one ranking at a time on one connection.
///
/// Each question is walked pruned first with this process's block cache as the questions before
/// left it (`cold_…`: the blocks its words need and no earlier question read come from the
/// database), then whole once untimed, so that every block of its words is cached, and then
/// pruned and whole again, timed: `p50_ms`… and `whole_…` compare the two walks on the same warm
/// cache, as a serving replica's steady state has it. (Before 2026-12-05 the pruned walk was
/// timed cold and the whole one on the blocks it had just cached.)
func benchPostgresKeywords(url: String, queriesFile: String, limit: Int, filterPrefix: String?) async throws -> [String: Any] {
    let queries = try String(contentsOfFile: queriesFile, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    let store = try PostgresStore.open(url: url, create: false, analyzer: try FoldingAnalyzer(language: .auto))
    var times: [Double] = [], wholeTimes: [Double] = [], coldTimes: [Double] = []
    var blocks: [Int] = [], postings: [Int] = [], wholePostings: [Int] = [], passes: [Int] = [], batches: [Int] = []
    var differ: [String] = []
    for (index, text) in queries.enumerated() {
        var query = SearchQuery(text)
        if let filterPrefix { query.sourcePrefixes = [filterPrefix] }
        guard let cold = try? await store.keywordWalk(query, limit: limit, pruning: true) else { continue }   // no words
        _ = try await store.keywordWalk(query, limit: limit, pruning: false)   // every block of its words cached
        let pruned = try await store.keywordWalk(query, limit: limit, pruning: true)
        let whole = try await store.keywordWalk(query, limit: limit, pruning: false)
        if index > 0 || queries.count == 1 {   // the first warms the connection
            coldTimes.append(cold.seconds * 1000)
            times.append(pruned.seconds * 1000)
            wholeTimes.append(whole.seconds * 1000)
            blocks.append(pruned.blocks)
            postings.append(pruned.postings)
            passes.append(pruned.passes)
            batches.append(pruned.batches)
            wholePostings.append(whole.postings)
        }
        let same = [cold, pruned].allSatisfy { walk in
            walk.ranking.count == whole.ranking.count && zip(walk.ranking, whole.ranking).allSatisfy { $0.id == $1.id && $0.score == $1.score }
        }
        if !same { differ.append(text) }
    }
    func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
    return ["queries": times.count, "limit": limit, "filter": filterPrefix ?? "", "differ": differ,
            "p50_ms": percentile(times, 0.5), "p90_ms": percentile(times, 0.9), "p99_ms": percentile(times, 0.99), "max_ms": times.max() ?? 0,
            "whole_p50_ms": percentile(wholeTimes, 0.5), "whole_p90_ms": percentile(wholeTimes, 0.9), "whole_p99_ms": percentile(wholeTimes, 0.99),
            "cold_p50_ms": percentile(coldTimes, 0.5), "cold_p90_ms": percentile(coldTimes, 0.9), "cold_p99_ms": percentile(coldTimes, 0.99),
            "blocks_mean": Double(blocks.reduce(0, +)) / Double(max(1, blocks.count)),
            "postings_mean": Double(postings.reduce(0, +)) / Double(max(1, postings.count)),
            "passes_mean": Double(passes.reduce(0, +)) / Double(max(1, passes.count)),
            "batches_mean": Double(batches.reduce(0, +)) / Double(max(1, batches.count)),
            "whole_postings_mean": Double(wholePostings.reduce(0, +)) / Double(max(1, wholePostings.count))]
}

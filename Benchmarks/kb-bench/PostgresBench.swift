import Foundation
import KBCore
import KBIndex
import KBPostgres

/// N random unit vectors (d = 384) in a PostgreSQL index, then Q random unit queries: exact
/// top-10 latency, then an HNSW index's build time, latency and recall@10 against exact.
func benchPostgresVectors(url: String, count: Int, queries queryCount: Int) async throws -> [String: Any] {
    let d = 384
    let store = try PostgresStore.open(url: url, create: true)
    let record = EmbedderRecord(name: "random-384", dimension: d, spec: "hashing")
    let perSource = 1_000
    let matrix = randomUnitVectors(count, d, seed: 42)
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
    let queries = randomUnitVectors(queryCount, d, seed: 7)
    func run() async throws -> (latencies: [Double], results: [[Int64]]) {
        var latencies: [Double] = [], results: [[Int64]] = []
        for q in 0..<queryCount {
            let query = Array(queries[q * d..<(q + 1) * d])
            let began = now()
            let top = try await store.snapshot { try $0.vectorRanking(query, embedder: record, k: 10, allowed: nil, excluded: []) }
            latencies.append((now() - began) * 1000)
            results.append(top.map(\.id))
        }
        return (latencies, results)
    }
    _ = try await run()   // warm the cache
    let exact = try await run()
    start = now()
    let built = try await store.buildHNSW(HNSWSettings(), sample: 0)
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

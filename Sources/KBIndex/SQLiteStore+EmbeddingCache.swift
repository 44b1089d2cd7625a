public import Foundation
import GRDB
import KBCore
public import KBStore

extension SQLiteStore.Snapshot {
    /// Cached vectors of one embedder by text hash (32-byte SHA-256).
    public func cachedVectors(embedder: EmbedderRecord, hashes: [Data]) throws -> [Data: [Float]] {
        var result: [Data: [Float]] = [:]
        for chunk in stride(from: 0, to: hashes.count, by: 500) {
            let part = Array(hashes[chunk..<min(chunk + 500, hashes.count)])
            let rows = try Row.fetchAll(db, sql: """
                SELECT text_hash, data FROM embedding_cache WHERE embedder = ? AND text_hash IN (\(part.map { _ in "?" }.joined(separator: ",")))
                """, arguments: StatementArguments([embedder.name]) + StatementArguments(part))
            for row in rows {
                if let vector = VectorCoding.decode(row[1], dimension: embedder.dimension) { result[row[0]] = vector }
            }
        }
        return result
    }

    /// Tokens used, by embedder.
    public func tokensUsed() throws -> [String: Int] {
        try Row.fetchAll(db, sql: "SELECT embedder, tokens FROM embedder_usage").reduce(into: [String: Int]()) { $0[$1[0]] = $1[1] }
    }

    /// Cached vectors, by embedder.
    public func cachedVectorCounts() throws -> [String: Int] {
        try Row.fetchAll(db, sql: "SELECT embedder, count(*) FROM embedding_cache GROUP BY embedder").reduce(into: [String: Int]()) { $0[$1[0]] = $1[1] }
    }
}

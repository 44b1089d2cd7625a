public import Foundation
import GRDB
import KBCore

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

extension SQLiteStore {
    /// Keeps vectors of one embedder by text hash, and adds the tokens the call used.
    public func cacheVectors(embedder: EmbedderRecord, _ entries: [(hash: Data, vector: [Float])], tokens: Int) async throws {
        let entries = entries.map { CachedVector(hash: $0.hash, vector: $0.vector) }
        try await write { db in
            let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO embedding_cache (embedder, text_hash, data) VALUES (?, ?, ?)")
            for entry in entries { try insert.execute(arguments: [embedder.name, entry.hash, VectorCoding.encode(entry.vector)]) }
            if tokens > 0 {
                try db.execute(sql: """
                    INSERT INTO embedder_usage (embedder, tokens) VALUES (?, ?)
                    ON CONFLICT(embedder) DO UPDATE SET tokens = tokens + excluded.tokens
                    """, arguments: [embedder.name, tokens])
            }
        }
    }
}

/// One embedding-cache entry (a Sendable pair for the write closure).
struct CachedVector: Sendable {
    var hash: Data
    var vector: [Float]
}

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

extension SQLiteStore.Snapshot {
    public func usage(since: Date, by grouping: UsageGrouping) throws -> [UsageRow] {
        try Row.fetchAll(db, sql: RequestLogSQL.usage(by: grouping, day: "strftime('%Y-%m-%d', at, 'unixepoch')", since: "?"),
                         arguments: [since.timeIntervalSince1970]).map { row in
            UsageRow(key: row[0], requests: row[1], errors: row[2], degraded: row[3], results: row[4], tokens: row[5],
                     meanLatencyMilliseconds: row[6], maxLatencyMilliseconds: row[7], p50LatencyMilliseconds: row[8], p99LatencyMilliseconds: row[9])
        }
    }
}

extension SQLiteStore.Snapshot {
    public func requestLogEntries() throws -> [RequestLogEntry] {
        try Row.fetchAll(db, sql: RequestLogSQL.entries).map { row in
            var entry = RequestLogEntry(at: Date(timeIntervalSince1970: row[0]), route: row[1], status: row[2], requestID: row[3],
                                        latencyMilliseconds: row[12])
            (entry.caller, entry.bot, entry.report, entry.userHash) = (row[4], row[5], row[6], row[7])
            (entry.results, entry.tokens, entry.budget, entry.degraded, entry.query) = (row[8], row[9], row[10], (row[11] as Int) != 0, row[13])
            return entry
        }
    }
}

import Foundation
import KBCore
public import KBStore
import PostgresNIO

extension HNSWSettings {
    static func key(_ embedderID: Int64) -> String { "hnsw:\(embedderID)" }
    static func indexName(_ embedderID: Int64) -> String { "vectors_hnsw_e\(embedderID)" }

    /// The memory (kB) an HNSW build of `vectors` vectors keeps its graph in: each element's
    /// vector, its neighbour lists (2m on the ground layer, about m more above it) and pgvector's
    /// bookkeeping, with a quarter to spare; within 512 MB–8 GB.
    static func buildMemoryKB(vectors: Int, dimension: Int, m: Int) -> Int64 {
        let perElement = dimension * 4 + 3 * m * 10 + 128
        let kilobytes = Int64(Double(vectors) * Double(perElement) * 1.25 / 1024)
        return min(max(kilobytes, 512 * 1024), 8 * 1024 * 1024)
    }

    static func recorded(for embedderID: Int64, _ session: PGSession) throws -> HNSWSettings? {
        guard let text = try PostgresSchema.meta(key(embedderID), session) else { return nil }
        return try JSONDecoder().decode(HNSWSettings.self, from: Data(text.utf8))
    }
}

extension PostgresStore {
    /// Builds (or rebuilds) an HNSW index over the current embedder's vectors and records its
    /// parameters; unfiltered vector searches then walk it. An index built with the same `m` and
    /// `efConstruction` is kept, and only `efSearch` recorded (a search setting: the graph does not
    /// depend on it), so that trying another `efSearch` costs no build. Measures recall@10 against
    /// the exact ranking with `sample` stored vectors as queries.
    public func buildApproximateIndex(_ settings: HNSWSettings, sample: Int) async throws -> HNSWReport {
        guard (2...100).contains(settings.m), (4...1_000).contains(settings.efConstruction), settings.efConstruction >= 2 * settings.m,
              (1...1_000).contains(settings.efSearch) else {
            throw KBError(.invalidArgument,
                "HNSW parameters out of range: m 2–100, ef-construction 4–1000 and at least 2 × m, ef-search 1–1000.")
        }
        let started = Date()
        let (embedder, embedderID, vectors, kept) = try await transaction { transaction -> (EmbedderRecord, Int64, Int, Bool) in
            let session = transaction.session
            guard let record = try transaction.embedderRecord(), record.hasVectors, let id = try transaction.embedderID(named: record.name) else {
                throw KBError(.unsupportedMode, "This index has no vectors, so there is nothing for an HNSW index to hold. Ingest with an embedder first.")
            }
            let count = try session.value(Int64.self, "SELECT count(*) FROM vectors WHERE embedder_id = \(id) AND NOT memory") ?? 0
            if let recorded = try HNSWSettings.recorded(for: id, session), recorded.m == settings.m,
               recorded.efConstruction == settings.efConstruction,
               try session.value(Bool.self, "SELECT to_regclass($1) IS NOT NULL", .text(HNSWSettings.indexName(id))) == true {
                try PostgresSchema.setMeta(HNSWSettings.key(id), String(decoding: try JSONEncoder().encode(settings), as: UTF8.self), session)
                return (record, id, Int(count), true)
            }
            // pgvector builds fast while the graph fits in maintenance_work_mem, and many times
            // slower once it spills (a million 384-dim vectors need ~3 GB): the estimate, within
            // 512 MB–8 GB, unless the server allows more already.
            let allowedKB = try session.value(Int64.self, "SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'") ?? 0
            let neededKB = HNSWSettings.buildMemoryKB(vectors: Int(count), dimension: record.dimension, m: settings.m)
            if neededKB > allowedKB { try session.execute("SET LOCAL maintenance_work_mem = '\(neededKB)kB'") }
            try session.execute("DROP INDEX IF EXISTS \(HNSWSettings.indexName(id))")
            try session.execute("""
                CREATE INDEX \(HNSWSettings.indexName(id)) ON vectors
                USING hnsw ((embedding::vector(\(record.dimension))) vector_ip_ops)
                WITH (m = \(settings.m), ef_construction = \(settings.efConstruction))
                WHERE embedder_id = \(id) AND NOT memory
                """)
            try PostgresSchema.setMeta(HNSWSettings.key(id), String(decoding: try JSONEncoder().encode(settings), as: UTF8.self), session)
            // Fresh statistics, so that the planner knows how many vectors there are and walks the index.
            try session.execute("ANALYZE vectors")
            return (record, id, Int(count), false)
        }
        let seconds = Date().timeIntervalSince(started)
        // The new graph is in the shared buffers, not yet on disk: written out at once, rather
        // than by the timed checkpoint while replicas serve.
        let checkpoint = kept ? nil : try await self.checkpoint(after: "the new graph")
        let recall = try await run(write: false) { session -> (Double, Int) in
            let queries = try session.rows("""
                SELECT embedding::real[] FROM vectors WHERE embedder_id = \(embedderID) AND NOT memory ORDER BY hashint8(snippet_id) LIMIT \(max(1, sample))
                """).map { try $0.array(0, of: Float.self) }
            guard !queries.isEmpty else { return (1, 0) }
            try session.execute("SET LOCAL hnsw.ef_search = \(settings.efSearch)")
            var total = 0.0
            for query in queries {
                let exact = try PostgresSnapshot.nearest(query, dimension: embedder.dimension, embedderID: embedderID, k: 10,
                                                         allowed: nil, excluded: [], knowledgeOnly: true, tieBreak: true, session)
                let approximate = try PostgresSnapshot.nearest(query, dimension: embedder.dimension, embedderID: embedderID, k: 10,
                                                               allowed: nil, excluded: [], knowledgeOnly: true, tieBreak: false, session)
                total += Double(Set(exact.map(\.id)).intersection(approximate.map(\.id)).count) / Double(max(1, exact.count))
            }
            return (total / Double(queries.count), queries.count)
        }
        return HNSWReport(embedder: embedder.name, settings: settings, vectors: vectors, seconds: seconds,
                          recallAt10: recall.0, sampled: recall.1, kept: kept, checkpoint: checkpoint)
    }

    /// Drops the current embedder's HNSW index: vector searches are exact again.
    public func dropApproximateIndex() async throws -> Bool {
        try await transaction { transaction in
            let session = transaction.session
            guard let record = try transaction.embedderRecord(), let id = try transaction.embedderID(named: record.name),
                  try HNSWSettings.recorded(for: id, session) != nil else { return false }
            try session.execute("DROP INDEX IF EXISTS \(HNSWSettings.indexName(id))")
            try session.execute("DELETE FROM kb_meta WHERE key = $1", .text(HNSWSettings.key(id)))
            return true
        }
    }
}

extension PostgresStore {
    /// Deleted rows are gone from every query at commit; the keyword blocks that still listed
    /// deleted snippets' words are written without them here. The old bytes stay in the table
    /// files until VACUUM reuses the space (and in the write-ahead log and backups until those are
    /// recycled), which kb cannot force from here. The README says what that means.
    public func scrub() async throws {
        _ = try await run(write: true) { session in try PostgresKeywordIndex.merge(session, rebuild: false) }
    }
}

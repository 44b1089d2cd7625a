public import KBCore
public import KBPostgres

extension KnowledgeBase {
    /// Builds an HNSW index over a PostgreSQL index's vectors (`kb index build --hnsw`) and
    /// reports its recall@10 against the exact ranking. SQLite indexes always scan exactly.
    public func buildVectorIndex(_ settings: HNSWSettings, sample: Int = 100) async throws -> HNSWReport {
        guard let postgres = store as? PostgresStore else {
            throw KBError(.unsupportedMode,
                "HNSW indexes are built in PostgreSQL (--db postgres://…). An SQLite index scans every vector exactly; scripts/bench-search.sh shows how fast that is.")
        }
        return try await postgres.buildHNSW(settings, sample: sample)
    }

    /// Drops the HNSW index; returns false when there was none.
    public func dropVectorIndex() async throws -> Bool {
        guard let postgres = store as? PostgresStore else {
            throw KBError(.unsupportedMode, "Only PostgreSQL indexes have HNSW indexes; an SQLite index scans exactly.")
        }
        return try await postgres.dropHNSW()
    }
}

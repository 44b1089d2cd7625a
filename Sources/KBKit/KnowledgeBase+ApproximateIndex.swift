import KBCore
public import KBStore

extension KnowledgeBase {
    /// Builds an approximate (HNSW) index over the index's vectors (`kb index build --hnsw`) and
    /// reports its recall@10 against the exact ranking. Only PostgreSQL indexes have one; an
    /// SQLite index always ranks exactly, and says so.
    public func buildApproximateIndex(_ settings: HNSWSettings, sample: Int = 100) async throws -> HNSWReport {
        try await store.buildApproximateIndex(settings, sample: sample)
    }

    /// Drops the HNSW index; returns false when there was none.
    public func dropApproximateIndex() async throws -> Bool {
        try await store.dropApproximateIndex()
    }
}

extension KnowledgeBase {
    /// Rewrites the keyword index so that searches read as little as they can (`kb index
    /// optimize`): PostgreSQL merges recent writes and deletions into its postings' blocks and
    /// builds every word's blocks anew; SQLite merges its keyword table's segments.
    public func optimizeKeywordIndex() async throws -> KeywordIndexReport {
        try await store.optimizeKeywordIndex()
    }
}

import KBCore
public import KBRequests
public import KBStore

extension KnowledgeBase {
    /// Builds an approximate (HNSW) index over the index's vectors (`kb index build --hnsw`) and
    /// reports its recall@10 against the exact ranking. Only PostgreSQL indexes have one; an
    /// SQLite index always ranks exactly, and says so. The admin's only.
    public func buildApproximateIndex(_ settings: HNSWSettings, sample: Int = 100, as caller: Caller) async throws -> HNSWReport {
        try caller.requireAdmin("build the approximate index")
        return try await store.buildApproximateIndex(settings, sample: sample)
    }

    /// Drops the HNSW index; returns false when there was none. The admin's only.
    public func dropApproximateIndex(as caller: Caller) async throws -> Bool {
        try caller.requireAdmin("drop the approximate index")
        return try await store.dropApproximateIndex()
    }
}

extension KnowledgeBase {
    /// Rewrites the keyword index so that searches read as little as they can (`kb index
    /// optimize`): PostgreSQL merges recent writes and deletions into its postings' blocks and
    /// builds every word's blocks anew; SQLite merges its keyword table's segments. The admin's only.
    public func optimizeKeywordIndex(as caller: Caller) async throws -> KeywordIndexReport {
        try caller.requireAdmin("optimize the keyword index")
        return try await store.optimizeKeywordIndex()
    }
}

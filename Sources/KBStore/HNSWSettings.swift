/// An HNSW index's parameters, as `kb index build --hnsw` records them in `kb_meta`.
public struct HNSWSettings: Sendable, Hashable, Codable {
    /// Links per node (pgvector's `m`). The default is 16.
    public var m: Int
    /// Candidates kept while building (`ef_construction`). The default is 64.
    public var efConstruction: Int
    /// Candidates kept while searching (`hnsw.ef_search`); more is slower and closer to exact.
    /// The default is 800: on a 100,000-snippet shelf whose best answers to a real question lie
    /// close together, recall@10 against exact was 0.65–0.91 at 100 and 0.98–0.99 at 800, for
    /// 13 against 16 ms a search (scripts/bench/bench-postgres-scale.sh); on a million, 0.853 at 400,
    /// 0.924 at 600 and 0.965 at 800 (scripts/bench/bench-hnsw-settings.sh).
    public var efSearch: Int

    public init(m: Int = 16, efConstruction: Int = 64, efSearch: Int = 800) {
        self.m = m
        self.efConstruction = efConstruction
        self.efSearch = efSearch
    }
}

/// What building an HNSW index did, and how close its answers are to the exact ones.
public struct HNSWReport: Sendable, Hashable, Codable {
    public var embedder: String
    public var settings: HNSWSettings
    public var vectors: Int
    public var seconds: Double
    /// Mean share of the exact top 10 that the index returns, over `sampled` stored vectors used as queries.
    public var recallAt10: Double
    public var sampled: Int
    /// The graph built earlier with the same `m` and `efConstruction` was kept (only `efSearch`,
    /// which the graph does not depend on, changed), so `seconds` built nothing.
    public var kept: Bool

    public init(embedder: String, settings: HNSWSettings, vectors: Int, seconds: Double, recallAt10: Double, sampled: Int, kept: Bool = false) {
        self.kept = kept
        self.embedder = embedder
        self.settings = settings
        self.vectors = vectors
        self.seconds = seconds
        self.recallAt10 = recallAt10
        self.sampled = sampled
    }
}

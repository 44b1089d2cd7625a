/// An HNSW index's parameters, as `kb index build --hnsw` records them in `kb_meta`.
public struct HNSWSettings: Sendable, Hashable, Codable {
    /// Links per node (pgvector's `m`). The default is 16.
    public var m: Int
    /// Candidates kept while building (`ef_construction`). The default is 200 (pgvector's is 64):
    /// a better graph, so that a search needs a shorter walk for the same recall, and one whose
    /// recall varies less from build to build (each element's levels are drawn at random). On a
    /// million-snippet shelf whose best answers lie close together
    /// (scripts/bench/bench-hnsw-settings.sh, docs/benchmarks.md), recall@10 at `ef_search` 500 over
    /// real questions was 0.962–0.987 on six graphs built with 200, and 0.948–0.992 on eight
    /// built with 128 (two below 0.95), for a build about 1.6 times as long.
    public var efConstruction: Int
    /// Candidates kept while searching (`hnsw.ef_search`); more is slower and closer to exact.
    /// The default is 500: with ef_construction 128, recall@10 on that shelf was 0.966 / 0.976 /
    /// 0.979 at 400 / 500 / 600 on one graph, against 0.853 / 0.924 / 0.965 at 400 / 600 / 800
    /// with 64; serving it, 128 and 500 took 16% less of PostgreSQL's CPU a request than 64 and
    /// 800, and 600 about 1 ms more than 500.
    public var efSearch: Int

    public init(m: Int = 16, efConstruction: Int = 200, efSearch: Int = 500) {
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
    /// Whether the server was asked to write the new graph to disk at once; nil when nothing was built.
    public var checkpoint: CheckpointReport?

    public init(embedder: String, settings: HNSWSettings, vectors: Int, seconds: Double, recallAt10: Double, sampled: Int, kept: Bool = false,
                checkpoint: CheckpointReport? = nil) {
        self.kept = kept
        self.checkpoint = checkpoint
        self.embedder = embedder
        self.settings = settings
        self.vectors = vectors
        self.seconds = seconds
        self.recallAt10 = recallAt10
        self.sampled = sampled
    }
}

/// Whether the server wrote what a large write (an HNSW build, a copy) left in its memory to disk
/// at once (PostgreSQL's `CHECKPOINT`). Left to the server's own timed checkpoint, the new pages
/// are written out over minutes while replicas serve, and a serving backend that must evict a
/// page not yet written writes it first: on the million-snippet benchmark PostgreSQL spent 13.3 ms
/// of CPU a request during that write-back and 7.8–8.5 ms once it was done (docs/benchmarks.md).
public struct CheckpointReport: Sendable, Hashable, Codable {
    /// The checkpoint ran, and took `seconds`.
    public var done: Bool
    public var seconds: Double
    /// When not done: why, and what to run instead.
    public var note: String?

    public init(done: Bool, seconds: Double = 0, note: String? = nil) {
        self.done = done
        self.seconds = seconds
        self.note = note
    }

    /// How the command line reports it: a clause for a done checkpoint, the note for one not run.
    public var sentence: String {
        done ? "Wrote the new pages to disk (CHECKPOINT) in \(String(format: "%.2f", seconds)) s." : (note ?? "")
    }
}

public import Foundation
/// How a search ranks snippets.
/// How hybrid search fuses the keyword and the vector ranking.
public enum FusionMethod: String, Sendable, Codable, CaseIterable {
    /// Each ranking's scores scaled to 0…1 and mixed per query, the ranking whose best stands
    /// further above the rest weighing more (`Ranking.adaptiveFusion`). The default.
    case adaptive
    /// Reciprocal rank fusion with fixed weights (`Ranking.reciprocalRank`), kb's fusion before
    /// 2026-11.
    case reciprocalRank = "rrf"
}

public enum SearchMode: String, Sendable, Codable, CaseIterable, SchemaEnumeration {
    /// Keyword ranks and vector ranks fused.
    case hybrid
    /// Cosine similarity of embeddings only.
    case vector
    /// Keyword ranking only (bm25).
    case keyword

    /// The ranking a search that asks for this mode runs — decided here and nowhere else: hybrid
    /// runs as keyword on an index without vectors, or when the query could not be embedded (a
    /// degraded answer); vector search on an index without vectors is an error that says what to do.
    public func effective(indexHasVectors: Bool, queryEmbedded: Bool) throws -> SearchMode {
        switch self {
        case .hybrid: return indexHasVectors && queryEmbedded ? .hybrid : .keyword
        case .keyword: return .keyword
        case .vector:
            guard indexHasVectors else {
                throw KBError(.unsupportedMode,
                    "This index has no vectors (it was built with --embedder none, or is empty), so vector search cannot run. Use --mode keyword.")
            }
            return .vector
        }
    }
}

/// What to look for and where.
///
/// ```swift
/// var query = SearchQuery("ruling planet of the tenth house")
/// query.tags = [Tag("area:career")]
/// ```
public struct SearchQuery: Sendable, Hashable {
    /// The user's text, searched as plain words: search syntax characters have no effect.
    public var text: String
    /// How many hits to return. The default is 8 (`RetrievalProfile.hits`).
    public var limit = RetrievalProfile.standard.hits
    /// Every tag must be on a snippet (or its source) for it to match. The default is none.
    public var tags: [Tag] = []
    /// When not empty, a snippet (or its source) must carry at least one of these tags. The
    /// default is none.
    public var anyTags: [Tag] = []
    /// Kinds of sources to search; empty means notes and books: memories are searched only when
    /// `.memory` is named. The default is empty.
    public var kinds: Set<SourceKind> = []
    /// Memory scopes searched when memories are; empty means every scope. Other kinds are not
    /// affected. The default is empty.
    public var scopes: [MemoryScope] = []
    /// When not empty, a snippet must match at least one of these (a bot's knowledge sources).
    /// The default is empty.
    public var selectors: [SourceSelector] = []
    /// Also search memories that were superseded by newer ones, closed, expired or marked wrong:
    /// every version of the record. The default is false.
    public var includeSuperseded = false
    /// Memories searched are those that held at this time (`Memory.isValid(at:)`), superseded
    /// ones included; nil: those that hold now and are current. Memories marked wrong are left
    /// out either way. The default is nil.
    public var memoriesAsOf: Date?
    /// Memories searched are those said (`told`: whose `validFrom` lies within it) or holding
    /// at some time within this window, superseded ones included (those marked wrong left out);
    /// it takes the place of `memoriesAsOf`. The default is nil.
    public var memoriesDuring: TimeWindow?
    /// Absolute path prefixes; a snippet matches if its source path starts with any. The default is none.
    public var sourcePrefixes: [String] = []
    /// The ranking. The default is `.hybrid` (which is keyword ranking on an index without vectors).
    public var mode: SearchMode = .hybrid
    /// How many candidates each ranking contributes before fusion, grouping and diversity.
    /// The default is 50 (`RetrievalProfile.candidates`).
    public var candidates = RetrievalProfile.standard.candidates
    /// How hybrid search fuses its two rankings. The default is `.adaptive`.
    public var fusion: FusionMethod = .adaptive
    /// Weight of the keyword ranking in hybrid fusion. The default is 1.
    public var keywordWeight = 1.0
    /// Weight of the vector ranking in hybrid fusion. The default is 1.
    public var vectorWeight = 1.0
    /// Keep only the best snippet of each source. The default is false.
    public var groupBySource = false
    /// Make highlighted excerpts (FTS5 `snippet()`, about 0.1 ms a hit). Evaluation turns
    /// them off. The default is true.
    public var excerpts = true
    /// Scan an int8 copy of the vectors first and rescore the best candidates exactly: about a
    /// quarter of the memory traffic, at a small risk of missing a hit. The default is false.
    public var quantized = false
    /// Maximal-marginal-relevance trade-off λ in `diversityRange` (1 = relevance only); nil for
    /// none. The default is nil.
    public var diversity: Double?
    /// The values `diversity` may take.
    public static let diversityRange: ClosedRange<Double> = 0...1
    /// The user the search is made for: that user's private sources are searched too. Other
    /// users' private sources never are. The default is nil (shared sources only).
    public var user: String?
    /// Every user's private sources pass the filters (for listings of what a bot can see, never
    /// for searches that answer a user). The default is false.
    public var everyUser = false
    /// The conversation before `text`, oldest first: with `historyUse`, what else is searched
    /// (`ConversationPlan`). The default is none.
    public var history: [ConversationTurn] = []
    /// How `history` is used. The default is `.fused`, kb's way.
    public var historyUse: HistoryUse = .fused

    /// Say why each hit is there (`SearchHit.explanation`). The default is false.
    public var explain = false
    /// Run the retriever's second stage (a re-ranker) on this search, when one is installed.
    /// The default is true.
    public var secondStage = true

    public init(_ text: String) { self.text = text }

    /// Whether any filter narrows the snippets searched.
    public var hasFilters: Bool { !tags.isEmpty || !anyTags.isEmpty || !kinds.isEmpty || !sourcePrefixes.isEmpty || !selectors.isEmpty }
}

/// Why an answer came from the keyword ranking alone: the query could not be embedded.
public struct Degraded: Sendable, Hashable, Codable {
    /// What went wrong, in a sentence (the embedder's own message).
    public var reason: String

    public init(reason: String) { self.reason = reason }
}

/// A ranked result list and how it was made.
public struct SearchResults: Sendable, Hashable, Codable {
    public var query: String
    /// The ranking actually used: `hybrid` on an index without vectors, or while the embedder is
    /// unavailable, runs as `keyword`.
    public var mode: SearchMode
    /// The embedder that embedded the query, when vectors were used.
    public var embedder: String?
    public var hits: [SearchHit]
    /// Set when a hybrid search fell back to keywords because the query could not be embedded.
    public var degraded: Degraded?
    /// What was searched and fused when the conversation's history was used (the turn first);
    /// nil when the turn alone was.
    public var queries: [PlannedQuery]?
    /// The second stage that reordered the hits (a re-ranker's name, `rerank:MODEL`), when one
    /// ran and answered; when it failed, `degraded` says so and this is nil.
    public var secondStage: String?

    public init(query: String, mode: SearchMode, embedder: String?, hits: [SearchHit], degraded: Degraded? = nil) {
        self.query = query
        self.mode = mode
        self.embedder = embedder
        self.hits = hits
        self.degraded = degraded
    }
}

/// A stretch of time a search of memories asks about (`SearchQuery.memoriesDuring`).
public struct TimeWindow: Sendable, Hashable, Codable {
    /// The first instant; nil: from the start.
    public var start: Date?
    /// The instant after the last; nil: without end.
    public var end: Date?
    /// What was said then, rather than what held then.
    public var told: Bool

    public init(start: Date?, end: Date?, told: Bool) {
        self.start = start
        self.end = end
        self.told = told
    }
}

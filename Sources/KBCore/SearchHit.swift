/// One ranked result.
public struct SearchHit: Sendable, Hashable, Codable {
    /// 1-based position in the result list.
    public var rank: Int
    /// Higher is better, and comparable only with other scores of the same result list:
    /// keyword mode gives the negated FTS5 bm25 value, vector mode the cosine similarity of
    /// query and snippet (-1…1), hybrid mode the reciprocal-rank-fusion sum Σ wᵢ/(60 + rankᵢ);
    /// each then weighted by the snippet's `weight` (`SearchHit.weighted`).
    public var score: Double
    public var snippetID: Int64
    public var sourcePath: String
    public var sourceTitle: String
    public var kind: SourceKind
    public var snippet: Snippet
    /// The snippet's text around the matched words, with matches wrapped in `**`.
    public var excerpt: String
    /// Why the hit is there (a search with `explain`): its place in each ranking, the fused
    /// score, its weight and the filters that applied. Nil otherwise.
    public var explanation: HitExplanation?

    public init(
        rank: Int, score: Double, snippetID: Int64, sourcePath: String, sourceTitle: String,
        kind: SourceKind, snippet: Snippet, excerpt: String
    ) {
        self.rank = rank
        self.score = score
        self.snippetID = snippetID
        self.sourcePath = sourcePath
        self.sourceTitle = sourceTitle
        self.kind = kind
        self.snippet = snippet
        self.excerpt = excerpt
    }

    /// A score with a snippet's weight applied: multiplied by it, or divided by it when the
    /// score is negative (a cosine below 0), so that a higher weight never
    /// ranks a snippet lower.
    public static func weighted(_ score: Double, by weight: Double?) -> Double {
        guard let weight, weight != 1 else { return score }
        return score >= 0 ? score * weight : score / weight
    }
}

/// Why a hit is where it is: its rank and score in the keyword ranking (the negated bm25 value)
/// and in the vector ranking (the cosine), the score after fusion and before its weight, the
/// weight, the planned query that found it (a conversation) and the filters the search applied.
public struct HitExplanation: Sendable, Hashable, Codable {
    public var keywordRank: Int?
    public var keywordScore: Double?
    public var vectorRank: Int?
    public var cosine: Double?
    /// The score after fusion (or the one ranking's), before the snippet's weight.
    public var fused: Double
    /// The keyword ranking's share of the adaptive fusion for this query (0…1; the vector
    /// ranking has the rest), when a hybrid search fused adaptively.
    public var keywordShare: Double?
    public var weight: Double?
    /// The planned query that found it, when a conversation planned more than the turn.
    public var query: String?
    /// The filters the search applied (`tags: a, b`, `kinds: pdf`, `bot: astro`, `user: ada`).
    public var filters: [String]

    public init(keywordRank: Int? = nil, keywordScore: Double? = nil, vectorRank: Int? = nil, cosine: Double? = nil, fused: Double,
                weight: Double? = nil, query: String? = nil, filters: [String] = []) {
        self.keywordRank = keywordRank
        self.keywordScore = keywordScore
        self.vectorRank = vectorRank
        self.cosine = cosine
        self.fused = fused
        self.weight = weight
        self.query = query
        self.filters = filters
    }
}

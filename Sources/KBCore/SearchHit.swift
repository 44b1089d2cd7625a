/// One ranked result.
public struct SearchHit: Sendable, Hashable, Codable {
    /// 1-based position in the result list.
    public var rank: Int
    /// Higher is better, and comparable only with other scores of the same result list:
    /// keyword mode gives the negated FTS5 bm25 value, vector mode the cosine similarity of
    /// query and snippet (-1…1), hybrid mode the reciprocal-rank-fusion sum Σ wᵢ/(60 + rankᵢ).
    public var score: Double
    public var snippetID: Int64
    public var sourcePath: String
    public var sourceTitle: String
    public var kind: SourceKind
    public var snippet: Snippet
    /// The snippet's text around the matched words, with matches wrapped in `**`.
    public var excerpt: String

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
}

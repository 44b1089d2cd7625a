/// How a search ranks snippets.
public enum SearchMode: String, Sendable, Codable, CaseIterable {
    /// Keyword ranks and vector ranks fused.
    case hybrid
    /// Cosine similarity of embeddings only.
    case vector
    /// SQLite FTS5 bm25 only.
    case keyword
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
    /// How many hits to return. The default is 8.
    public var limit = 8
    /// Every tag must be on a snippet (or its source) for it to match. The default is none.
    public var tags: [Tag] = []
    /// Kinds of sources to search; empty means all. The default is empty.
    public var kinds: Set<SourceKind> = []
    /// Absolute path prefixes; a snippet matches if its source path starts with any. The default is none.
    public var sourcePrefixes: [String] = []
    /// The ranking. The default is `.keyword` until vector search lands.
    public var mode: SearchMode = .keyword

    public init(_ text: String) { self.text = text }
}

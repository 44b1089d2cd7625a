import Foundation

/// What the index holds, for `kb status`.
public struct IndexStatus: Sendable, Hashable, Codable {
    public var path: String
    public var schemaVersion: Int
    public var sources: Int
    public var sourcesByKind: [String: Int]
    public var snippets: Int
    public var tags: Int
    /// The embedder whose vectors searches use; nil before the first ingest.
    public var embedder: EmbedderRecord?
    /// Vectors stored, by embedder name.
    public var vectors: [String: Int]
    /// Tokens remote embedders reported using, by embedder name.
    public var tokensUsed: [String: Int] = [:]
    /// Vectors kept in the embedding cache, by embedder name.
    public var cachedVectors: [String: Int] = [:]
    /// Bytes on disk: the database file plus its WAL and shared-memory files (for PostgreSQL, the
    /// database's size).
    public var sizeOnDisk: Int64
    /// The language keyword search is tuned for (`KeywordLanguage`).
    public var keywordLanguage = KeywordLanguage.english.rawValue

    public init(path: String, schemaVersion: Int, sources: Int, sourcesByKind: [String: Int], snippets: Int, tags: Int,
                embedder: EmbedderRecord?, vectors: [String: Int], tokensUsed: [String: Int], cachedVectors: [String: Int],
                sizeOnDisk: Int64) {
        self.path = path
        self.schemaVersion = schemaVersion
        self.sources = sources
        self.sourcesByKind = sourcesByKind
        self.snippets = snippets
        self.tags = tags
        self.embedder = embedder
        self.vectors = vectors
        self.tokensUsed = tokensUsed
        self.cachedVectors = cachedVectors
        self.sizeOnDisk = sizeOnDisk
    }
}

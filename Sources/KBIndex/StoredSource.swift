public import Foundation
public import KBCore

/// A source as listed by `kb sources`: its metadata and how much of it the index holds.
public struct StoredSource: Sendable, Hashable, Codable {
    public var id: Int64
    public var path: String
    public var kind: SourceKind
    public var title: String
    public var contentHash: String
    public var size: Int
    public var modifiedAt: Date?
    public var ingestedAt: Date
    public var snippetCount: Int
    public var tags: [Tag]
    /// How OCR read it (`Source.ocr`); nil when it did not.
    public var ocr: String?

    public init(id: Int64, path: String, kind: SourceKind, title: String, contentHash: String, size: Int, modifiedAt: Date?,
                ingestedAt: Date, snippetCount: Int, tags: [Tag], ocr: String? = nil) {
        self.id = id
        self.path = path
        self.kind = kind
        self.title = title
        self.contentHash = contentHash
        self.size = size
        self.modifiedAt = modifiedAt
        self.ingestedAt = ingestedAt
        self.snippetCount = snippetCount
        self.tags = tags
        self.ocr = ocr
    }
}

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

/// What one write transaction changed, for whoever keeps vectors in memory.
public struct WriteEffect: Sendable, Hashable {
    public var sourceID: Int64?
    /// Snippets deleted (their vectors went with them).
    public var removedSnippets: [Int64] = []
    /// Snippets inserted, in ordinal order.
    public var insertedSnippets: [Int64] = []
    /// The index's generation after the write (see `SQLiteStore.generation()`); 0 if nothing changed.
    public var generation: Int64 = 0

    public init(sourceID: Int64? = nil) { self.sourceID = sourceID }
}

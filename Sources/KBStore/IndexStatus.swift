import Foundation
import KBCore

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
    /// Snippets by the language detected at ingest (their `lang:` tags); snippets with none are
    /// not counted.
    public var languages: [String: Int] = [:]
    /// What to do when the embedder does not read a language the index holds (nil when it
    /// reads them all, or there is no embedder).
    public var languageWarning: String?

    /// Records the snippets per language and warns about those the embedder does not read
    /// (`ModelLanguages`): their vector search is noise, so kb searches them by keywords alone.
    public mutating func setLanguages(_ counts: [String: Int]) {
        languages = counts
        guard let embedder, embedder.hasVectors else { return }
        let unread = counts.filter { !ModelLanguages.reads(embedder.name, $0.key) }.sorted { $0.value > $1.value }
        guard !unread.isEmpty else { return }
        let listed = unread.map { "\($0.key) (\($0.value) snippets)" }.joined(separator: ", ")
        languageWarning = "\(embedder.name) reads English only; this index also holds \(listed), which kb searches by keywords alone. "
            + "`kb reindex --model \(Locations.multilingualModelName)` gives them vector search too."
    }

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

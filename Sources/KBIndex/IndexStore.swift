public import Foundation
public import KBCore

/// Where a knowledge base keeps its sources, snippets, vectors, memories and bots: everything
/// `KnowledgeBase` asks of storage, and nothing more. `SQLiteStore` (one file) and
/// `PostgresStore` (PostgreSQL with pgvector, for several servers) implement it.
///
/// Reads go through `snapshot`: one consistent view for the length of the call, run off the
/// caller's thread (never on Swift's cooperative pool). Each write is one transaction: all of it
/// is stored, or none.
public protocol IndexStore: AnyObject, Sendable {
    /// Where the index is, for messages: a file path, or a `postgres://` URL without password.
    var location: String { get }

    /// Runs `body` with one consistent view of the index and returns its result.
    func snapshot<T: Sendable>(_ body: @Sendable (any IndexSnapshot) throws -> T) async throws -> T

    /// Vectors live in the database and are ranked there (`IndexSnapshot.vectorRanking`); false
    /// when the caller loads them (`IndexSnapshot.loadVectors`) and ranks them in memory.
    var ranksVectors: Bool { get }

    func setMeta(_ key: String, _ value: String) async throws

    // Sources and snippets
    /// Stores a source, its snippets and their vectors in one transaction. `vectors` holds one
    /// vector per snippet, in order, from `embedder`; nil for a keyword-only index.
    func replace(_ document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord, ingestedAt: Date) async throws -> WriteEffect
    /// Removes the sources at these paths or inside these folders.
    func removeSources(matching paths: [String]) async throws -> (paths: [String], effect: WriteEffect)
    /// Removes the sources at exactly these paths.
    func removeSources(exactly paths: [String]) async throws -> (count: Int, effect: WriteEffect)
    func deleteUnusedTags() async throws
    /// Tunes keyword search for a language, rebuilding the keyword index; false when it already was.
    @discardableResult
    func setKeywordLanguage(_ language: KeywordLanguage) async throws -> Bool
    /// Keeps one page Tesseract recognised, by file hash, settings (`OCRSettings.cacheKey`) and
    /// page, until no source has that hash any more.
    func cacheOCRPage(_ page: OCRPage, contentHash: String, key: String) async throws

    // Vectors
    /// Stores remote vectors by (embedder, SHA-256 of the text) and the tokens they cost.
    func cacheVectors(embedder: EmbedderRecord, _ entries: [(hash: Data, vector: [Float])], tokens: Int) async throws
    /// Stores vectors of another embedder beside the current ones (reindexing).
    func addVectors(embedder: EmbedderRecord, _ entries: [(id: Int64, vector: [Float])]) async throws
    /// Makes `embedder` the one searched with once every snippet has its vector; false otherwise.
    func switchEmbedder(to embedder: EmbedderRecord, dropOthers: Bool) async throws -> Bool

    // Memories
    func addMemory(_ write: MemoryWrite, superseding: String?) async throws -> MemoryAddOutcome
    func updateMemory(_ write: MemoryWrite, expectedVersion: Int) async throws -> WriteEffect
    func deleteMemory(_ idOrPrefix: String) async throws -> (memory: Memory, effect: WriteEffect)
    func importMemory(_ write: MemoryWrite, history: [MemoryVersion], replacing: Bool) async throws -> (MemoryImportOutcome, WriteEffect?)

    // Bots
    func createBot(_ bot: Bot) async throws
    func updateBot(named name: String, _ change: @Sendable (inout Bot) throws -> Void) async throws -> Bot
    func deleteBot(named name: String) async throws
}

extension IndexStore {
    @discardableResult
    public func replace(_ document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord) async throws -> WriteEffect {
        try await replace(document, vectors: vectors, embedder: embedder, ingestedAt: Date())
    }

    public func addMemory(_ write: MemoryWrite) async throws -> MemoryAddOutcome {
        try await addMemory(write, superseding: nil)
    }
}

/// One consistent view of an index, valid only inside the `IndexStore.snapshot` call that hands
/// it out. Its calls block their (non-cooperative) thread.
public protocol IndexSnapshot {
    /// Where the index is, as `IndexStore.location`.
    var location: String { get }
    /// A number that grows with every write that changes what searches see.
    func generation() throws -> Int64
    func meta(_ key: String) throws -> String?
    func status() throws -> IndexStatus
    /// The storage engine's own consistency check: "ok", or what is damaged.
    func integrityCheck() throws -> String

    // Sources
    /// Content hash of every source by path.
    func contentHashes() throws -> [String: String]
    func sourcePaths(under prefix: String) throws -> [String]
    func sources() throws -> [StoredSource]
    /// The language keyword search is tuned for.
    func keywordLanguage() throws -> KeywordLanguage
    /// How OCR read each source it read (`Source.ocr`), by path.
    func ocrRecords() throws -> [String: String]
    /// Pages recognised earlier in the file with this hash, under the same settings.
    func ocrPages(contentHash: String, key: String) throws -> [OCRPage]

    // Embedders and vectors
    /// The embedder the index records, or nil for an index nothing was ingested into yet.
    func embedderRecord() throws -> EmbedderRecord?
    /// Checks that vectors from `record` may be written into this index.
    func checkEmbedder(_ record: EmbedderRecord) throws
    /// The stored vectors of a source's snippets, by snippet text (an update re-embeds only
    /// changed text).
    func vectorsByText(path: String, embedder: String) throws -> [String: [Float]]
    func cachedVectors(embedder: EmbedderRecord, hashes: [Data]) throws -> [Data: [Float]]
    func snippetsWithoutVectors(embedder: EmbedderRecord, limit: Int) throws -> [SnippetText]
    /// Every vector of an embedder as one row-major matrix (for stores that do not rank vectors).
    func loadVectors(embedder: EmbedderRecord) throws -> (ids: [Int64], matrix: [Float], generation: Int64)
    /// The `k` snippets nearest to `vector` (cosine), among `allowed` when given, leaving out
    /// `excluded` (for stores that rank vectors).
    func vectorRanking(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?, excluded: Set<Int64>) throws -> [(id: Int64, score: Float)]
    func vectors(of snippetIDs: [Int64], embedder: EmbedderRecord) throws -> [Int64: [Float]]

    // Search
    /// Snippet ids and scores (higher is better) of the best keyword matches.
    func keywordRanking(_ query: SearchQuery, limit: Int) throws -> [(id: Int64, score: Double)]
    /// Ids of the snippets that pass a query's filters; nil when it has none.
    func filteredSnippetIDs(_ query: SearchQuery) throws -> Set<Int64>?
    func memorySnippetIDs() throws -> Set<Int64>
    /// Hits for snippet ids (rank and score 0); with `highlighting`, excerpts mark its words.
    func hits(for ids: [Int64], highlighting text: String?) throws -> [Int64: SearchHit]
    func snippetSummaries(_ ids: [Int64]) throws -> [Int64: (sourcePath: String, text: String)]

    // Memories
    /// The memory with this id or unique id prefix.
    func memory(_ idOrPrefix: String) throws -> Memory
    /// Memories, oldest first; `scopes` empty means all; every tag must be present.
    func memories(scopes: [MemoryScope], tags: [Tag], includeSuperseded: Bool) throws -> [Memory]
    func memories(sourcePaths paths: [String]) throws -> [String: Memory]
    func memoryHistory(_ id: String) throws -> [MemoryVersion]
    func memory(contentKey: String, scope: MemoryScope) throws -> Memory?

    // Bots
    func bots() throws -> [Bot]
    func bot(named name: String) throws -> Bot

    // Copying a whole index (`kb export`)
    /// A stored source's metadata (tags and keywords included), or nil.
    func source(path: String) throws -> Source?
    /// Ids of a source's snippets, in ordinal order.
    func snippetIDs(ofSource path: String) throws -> [Int64]
    /// Every embedder with vectors in the index (the current one and any kept by a reindex).
    func embedders() throws -> [EmbedderRecord]
    /// The embedding cache of one embedder: text hash and vector.
    func cacheEntries(embedder: EmbedderRecord) throws -> [(hash: Data, vector: [Float])]
}

extension IndexSnapshot {
    /// A stored source with its snippets, as ingest wrote it; nil when there is none at `path`.
    public func document(path: String) throws -> SourceDocument? {
        guard let source = try source(path: path) else { return nil }
        let ids = try snippetIDs(ofSource: path)
        let hits = try self.hits(for: ids, highlighting: nil)
        return SourceDocument(source: source, snippets: try ids.map { id in
            guard let hit = hits[id] else { throw KBError(.database, "The snippet \(id) of \(path) vanished while it was being read.") }
            return hit.snippet
        })
    }

    public func memories(scopes: [MemoryScope] = [], tags: [Tag] = []) throws -> [Memory] {
        try memories(scopes: scopes, tags: tags, includeSuperseded: false)
    }

    public func hits(for ids: [Int64]) throws -> [Int64: SearchHit] { try hits(for: ids, highlighting: nil) }

    /// Keyword search: the ranking with its hits.
    public func keywordSearch(_ query: SearchQuery) throws -> [SearchHit] {
        let ranking = try keywordRanking(query, limit: query.limit)
        let hits = try self.hits(for: ranking.map(\.id), highlighting: query.text)
        return ranking.enumerated().compactMap { index, entry in
            guard var hit = hits[entry.id] else { return nil }
            hit.rank = index + 1
            hit.score = entry.score
            return hit
        }
    }
}

/// Comparisons of memories as stores keep them: times to the millisecond (what is stored and exported).
public enum StoredMemory {
    /// Equal, with times compared to the millisecond.
    public static func same(_ a: Memory, _ b: Memory) -> Bool {
        var b2 = b
        b2.createdAt = a.createdAt
        b2.updatedAt = a.updatedAt
        return a == b2 && close(a.createdAt, b.createdAt) && close(a.updatedAt, b.updatedAt)
    }

    public static func same(_ a: [MemoryVersion], _ b: [MemoryVersion]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            var y2 = y
            y2.updatedAt = x.updatedAt
            return x == y2 && close(x.updatedAt, y.updatedAt)
        }
    }

    static func close(_ a: Date, _ b: Date) -> Bool { abs(a.timeIntervalSince1970 - b.timeIntervalSince1970) < 0.0005 }
}

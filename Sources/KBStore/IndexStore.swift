public import Foundation
public import KBCore

/// Where a knowledge base keeps its sources, snippets, vectors, memories and bots: everything
/// `KnowledgeBase` asks of storage, and nothing more. `SQLiteStore` (one file, in KBSQLite) and
/// `PostgresStore` (PostgreSQL with pgvector, for several servers, in KBPostgres) implement it,
/// both as a ``TransactionalStore``: the rules every write follows are written once, in that
/// protocol's extension, over the steps each store supplies in its own SQL.
///
/// Reads go through `snapshot`: one consistent view for the length of the call, run off the
/// caller's thread (never on Swift's cooperative pool). Each write is one transaction: all of it
/// is stored, or none.
public protocol IndexStore: AnyObject, Sendable {
    /// Where the index is, for messages: a file path, or a `postgres://` URL without password.
    var location: String { get }

    /// Runs `body` with one consistent view of the index and returns its result.
    func snapshot<T: Sendable>(_ body: @Sendable (any IndexSnapshot) throws -> T) async throws -> T

    /// Reads a meta value and writes what `change` makes of it, in one write transaction (so
    /// writers in other processes cannot slip in between); returns what `change` returned.
    func updateMeta<T: Sendable>(_ key: String, _ change: @escaping @Sendable (String?) throws -> (value: String, result: T)) async throws -> T

    // Sources and snippets
    /// Stores sources, their snippets and their vectors in one transaction: all of them, or none.
    /// `vectors` holds one vector per snippet, in order, from `embedder`; nil for a keyword-only
    /// index. A source stored before at the same path is replaced.
    func replace(_ documents: [(document: SourceDocument, vectors: [[Float]]?)], embedder: EmbedderRecord, ingestedAt: Date) async throws -> [WriteEffect]
    /// Stores sources copied from another index (`kb export`), each with the time it was
    /// ingested there, in one transaction.
    func copyIn(_ documents: [(document: SourceDocument, vectors: [[Float]]?, ingestedAt: Date)], embedder: EmbedderRecord) async throws -> [WriteEffect]
    /// Removes the sources at these paths or inside these folders.
    func removeSources(matching paths: [String]) async throws -> (paths: [String], effect: WriteEffect)
    /// Removes the sources at exactly these paths.
    func removeSources(exactly paths: [String]) async throws -> (count: Int, effect: WriteEffect)
    func deleteUnusedTags() async throws
    /// Whether keyword search can be tuned for another language once the index exists (SQLite
    /// rebuilds its keyword table); false when the language was fixed when the index was made.
    var retunesKeywordLanguage: Bool { get }
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
    /// Makes `embedder` the one searched with once every snippet has its vector (written under
    /// `embedder.staging` when `staged`); false otherwise.
    func switchEmbedder(to embedder: EmbedderRecord, staged: Bool, dropOthers: Bool) async throws -> Bool
    /// Builds an approximate (HNSW) index over the current embedder's vectors and measures its
    /// recall@10 against exact ranking, where the store has one (PostgreSQL); others throw
    /// `unsupportedMode` with the reason.
    func buildApproximateIndex(_ settings: HNSWSettings, sample: Int) async throws -> HNSWReport
    /// Drops the approximate index; false when there was none.
    func dropApproximateIndex() async throws -> Bool

    // Memories
    func addMemory(_ write: MemoryWrite, superseding: String?) async throws -> MemoryAddOutcome
    func updateMemory(_ write: MemoryWrite, expectedVersion: Int) async throws -> WriteEffect
    /// Deletes a memory after `authorize` has seen it (and not refused).
    func deleteMemory(_ idOrPrefix: String, authorize: @escaping @Sendable (Memory) throws -> Void) async throws -> (memory: Memory, effect: WriteEffect)
    func importMemory(_ write: MemoryWrite, history: [MemoryVersion], replacing: Bool) async throws -> (MemoryImportOutcome, WriteEffect?)
    /// `importMemory` for several memories in one transaction (all of them, or none).
    func importMemories(_ entries: [(write: MemoryWrite, history: [MemoryVersion])], replacing: Bool) async throws -> [(MemoryImportOutcome, WriteEffect?)]
    /// `MemoryTransaction.changeMemoryState`, in one transaction.
    func changeMemoryState(_ idOrPrefix: String, expectedVersion: Int?, versionAt: Date?, feedback: MemoryFeedbackEntry?,
                           authorize: @escaping @Sendable (Memory) throws -> Void,
                           _ change: @escaping @Sendable (inout Memory) throws -> Void) async throws -> (memory: Memory, effect: WriteEffect)
    /// Deletes every memory of a scope with its history, vectors, keyword rows and cached
    /// remote vectors (`MemoryTransaction.eraseMemories`).
    func eraseMemories(scope: MemoryScope, textHash: @escaping @Sendable (String) -> Data) async throws -> MemoryErasure
    /// Makes text deleted so far unreadable in the store's own files, as far as the store can
    /// (SQLite: merged keyword index and a truncated write-ahead log; PostgreSQL: nothing beyond
    /// the deletes — VACUUM's business, see the README).
    func scrub() async throws
    /// Appends answered requests to the request log, in one transaction.
    func appendRequestLog(_ entries: [RequestLogEntry]) async throws
    /// Deletes request log rows older than `before`; returns how many.
    func pruneRequestLog(before: Date) async throws -> Int

    // Bots
    func createBot(_ bot: Bot) async throws
    func updateBot(named name: String, _ change: @Sendable (inout Bot) throws -> Void) async throws -> Bot
    func deleteBot(named name: String) async throws

    // Upload jobs (the rules are `StoreTransaction`'s job rules; each call is one transaction)
    func beginJob(_ job: StoredJob) async throws
    func appendJobChunk(id: String, seq: Int, data: Data) async throws
    func queueJob(id: String, contentHash: String) async throws -> StoredJob
    /// Deletes a job and its bytes (an upload that failed on the way in).
    func discardJob(id: String) async throws
    func claimJob(staleAfter: TimeInterval) async throws -> StoredJob?
    func startJob(id: String) async throws -> StoredJob
    func recordProgress(id: String, _ progress: Job.Progress) async throws
    func completeJob(id: String, document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord,
                     progress: Job.Progress, warnings: [String]) async throws -> WriteEffect
    func endJob(id: String, _ ending: JobEnding) async throws
    func importOriginal(_ job: StoredJob, chunks: [Data]) async throws
    func beginReread(sourcePath: String, jobID: String) async throws -> StoredJob

    // Maintenance and large loads
    /// Rewrites the keyword index so that rankings read as little as they can (`kb index
    /// optimize`): SQLite merges FTS5's segments; PostgreSQL merges its tail and deletions into
    /// the postings' blocks and builds every term's blocks anew.
    func optimizeKeywordIndex() async throws -> KeywordIndexReport
    /// A whole index is about to be copied into this empty one (`kb export`): a store may defer
    /// what it can write faster at the end (PostgreSQL: the keyword blocks and statistics); false
    /// when it has nothing to defer. Until `finishBulkLoad`, keyword searches of it fail with a
    /// message saying the copy did not finish.
    func beginBulkLoad() async throws -> Bool
    /// Writes what `beginBulkLoad` deferred; the index then searches as any other. A server store
    /// then asks for its pages to be written to disk at once (`CheckpointReport`); nil when it has
    /// no such step.
    func finishBulkLoad() async throws -> CheckpointReport?
}

/// What rewriting a keyword index did (`kb index optimize`).
public struct KeywordIndexReport: Sendable, Hashable, Codable {
    /// Terms whose postings were written again, and the blocks (PostgreSQL) written.
    public var terms = 0
    public var blocks = 0
    /// Postings moved from the tail into blocks, and postings of deleted snippets dropped.
    public var merged = 0
    public var dropped = 0
    public var seconds = 0.0
    /// Whether the server wrote the rewritten blocks to disk at once (PostgreSQL); nil otherwise.
    public var checkpoint: CheckpointReport?

    public init() {}
}

extension IndexStore {
    /// Stores one source, as `replace(_:embedder:ingestedAt:)` does a batch.
    @discardableResult
    public func replace(_ document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord, ingestedAt: Date = Date()) async throws -> WriteEffect {
        guard let effect = try await replace([(document, vectors)], embedder: embedder, ingestedAt: ingestedAt).first else {
            throw KBError(.database, "\(location) stored \(document.source.path) without saying what it wrote.")
        }
        return effect
    }

    public func setMeta(_ key: String, _ value: String) async throws {
        try await updateMeta(key) { _ in (value: value, result: ()) }
    }

    /// Makes another embedder, whose vectors were written under its own name, the one searched with.
    public func switchEmbedder(to embedder: EmbedderRecord, dropOthers: Bool) async throws -> Bool {
        try await switchEmbedder(to: embedder, staged: false, dropOthers: dropOthers)
    }

    public func addMemory(_ write: MemoryWrite) async throws -> MemoryAddOutcome {
        try await addMemory(write, superseding: nil)
    }

    public func beginBulkLoad() async throws -> Bool { false }

    public func finishBulkLoad() async throws -> CheckpointReport? { nil }
}

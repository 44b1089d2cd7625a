public import Foundation
public import KBCore

/// A store whose writes are transactions of ``MemoryTransaction`` steps. Every write that
/// `IndexStore` asks for is implemented here, once, as one transaction running the rules of
/// ``StoreTransaction`` and ``MemoryTransaction``; a store supplies `transaction` and its steps.
public protocol TransactionalStore: IndexStore {
    associatedtype Transaction: MemoryTransaction

    /// Runs `body` in one write transaction, off the caller's thread (never on Swift's
    /// cooperative pool): all of it is committed, or none.
    func transaction<T: Sendable>(_ body: @Sendable (Transaction) throws -> T) async throws -> T
}

extension TransactionalStore {
    public func appendRequestLog(_ entries: [RequestLogEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await transaction { try $0.insertRequestLog(entries) }
    }

    public func pruneRequestLog(before: Date) async throws -> Int {
        try await transaction { try $0.deleteRequestLog(before: before) }
    }

    public func updateMeta<T: Sendable>(_ key: String, _ change: @escaping @Sendable (String?) throws -> (value: String, result: T)) async throws -> T {
        try await transaction { transaction in
            let (value, result) = try change(try transaction.meta(key))
            try transaction.setMeta(key, value)
            return result
        }
    }

    @discardableResult
    public func replace(_ documents: [(document: SourceDocument, vectors: [[Float]]?)], embedder: EmbedderRecord, ingestedAt: Date) async throws -> [WriteEffect] {
        try await transaction { transaction in
            try documents.map { try transaction.replace($0.document, vectors: $0.vectors, embedder: embedder, ingestedAt: ingestedAt) }
        }
    }

    public func copyIn(_ documents: [(document: SourceDocument, vectors: [[Float]]?, ingestedAt: Date)], embedder: EmbedderRecord) async throws -> [WriteEffect] {
        try await transaction { transaction in
            try documents.map { try transaction.replace($0.document, vectors: $0.vectors, embedder: embedder, ingestedAt: $0.ingestedAt) }
        }
    }

    @discardableResult
    public func removeSources(matching paths: [String]) async throws -> (paths: [String], effect: WriteEffect) {
        try await transaction { try $0.removeSources(matching: paths) }
    }

    @discardableResult
    public func removeSources(exactly paths: [String]) async throws -> (count: Int, effect: WriteEffect) {
        try await transaction { try $0.removeSources(exactly: paths) }
    }

    public func deleteUnusedTags() async throws {
        try await transaction { try $0.deleteUnusedTags() }
    }

    public func cacheOCRPage(_ page: OCRPage, contentHash: String, key: String) async throws {
        try await transaction { try $0.cacheOCRPage(page, contentHash: contentHash, key: key) }
    }

    public func cacheVectors(embedder: EmbedderRecord, _ entries: [(hash: Data, vector: [Float])], tokens: Int) async throws {
        try await transaction { try $0.cacheVectors(embedder: embedder, entries, tokens: tokens) }
    }

    public func addVectors(embedder: EmbedderRecord, _ entries: [(id: Int64, vector: [Float])]) async throws {
        try await transaction { try $0.addVectors(embedder: embedder, entries) }
    }

    public func switchEmbedder(to embedder: EmbedderRecord, staged: Bool, dropOthers: Bool) async throws -> Bool {
        try await transaction { try $0.switchEmbedder(to: embedder, staged: staged, dropOthers: dropOthers) }
    }

    public func addMemory(_ write: MemoryWrite, superseding: String?) async throws -> MemoryAddOutcome {
        try await transaction { try $0.addMemory(write, superseding: superseding) }
    }

    public func updateMemory(_ write: MemoryWrite, expectedVersion: Int) async throws -> WriteEffect {
        try await transaction { try $0.updateMemory(write, expectedVersion: expectedVersion) }
    }

    public func deleteMemory(_ idOrPrefix: String, authorize: @escaping @Sendable (Memory) throws -> Void) async throws -> (memory: Memory, effect: WriteEffect) {
        try await transaction { try $0.deleteMemory(idOrPrefix, authorize: authorize) }
    }

    public func eraseMemories(scope: MemoryScope, textHash: @escaping @Sendable (String) -> Data) async throws -> MemoryErasure {
        try await transaction { try $0.eraseMemories(scope: scope, textHash: textHash) }
    }

    public func importMemory(_ write: MemoryWrite, history: [MemoryVersion], replacing: Bool) async throws -> (MemoryImportOutcome, WriteEffect?) {
        try await transaction { try $0.importMemory(write, history: history, replacing: replacing) }
    }

    public func importMemories(_ entries: [(write: MemoryWrite, history: [MemoryVersion])], replacing: Bool) async throws -> [(MemoryImportOutcome, WriteEffect?)] {
        try await transaction { transaction in
            try entries.map { try transaction.importMemory($0.write, history: $0.history, replacing: replacing) }
        }
    }

    public func changeMemoryState(_ idOrPrefix: String, expectedVersion: Int?, versionAt: Date?, feedback: MemoryFeedbackEntry?,
                                  authorize: @escaping @Sendable (Memory) throws -> Void,
                                  _ change: @escaping @Sendable (inout Memory) throws -> Void) async throws -> (memory: Memory, effect: WriteEffect) {
        try await transaction {
            try $0.changeMemoryState(idOrPrefix, expectedVersion: expectedVersion, versionAt: versionAt, feedback: feedback,
                                     authorize: authorize, change)
        }
    }

    public func createBot(_ bot: Bot) async throws {
        try await transaction { try $0.createBot(bot) }
    }

    public func updateBot(named name: String, _ change: @Sendable (inout Bot) throws -> Void) async throws -> Bot {
        try await transaction { try $0.updateBot(named: name, change) }
    }

    public func deleteBot(named name: String) async throws {
        try await transaction { try $0.deleteBot(named: name) }
    }

    public func beginJob(_ job: StoredJob) async throws {
        try await transaction { try $0.beginJob(job) }
    }

    public func appendJobChunk(id: String, seq: Int, data: Data) async throws {
        try await transaction { try $0.appendJobChunk(id: id, seq: seq, data: data, now: Date()) }
    }

    public func queueJob(id: String, contentHash: String) async throws -> StoredJob {
        try await transaction { try $0.queueJob(id: id, contentHash: contentHash, now: Date()) }
    }

    public func discardJob(id: String) async throws {
        try await transaction { try $0.deleteJob(id: id) }
    }

    public func claimJob(staleAfter: TimeInterval) async throws -> StoredJob? {
        try await transaction { try $0.claimJob(now: Date(), staleAfter: staleAfter) }
    }

    public func startJob(id: String) async throws -> StoredJob {
        try await transaction { try $0.startJob(id: id, now: Date()) }
    }

    public func recordProgress(id: String, _ progress: Job.Progress) async throws {
        try await transaction { try $0.recordProgress(id: id, progress, now: Date()) }
    }

    public func completeJob(id: String, document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord,
                            progress: Job.Progress, warnings: [String]) async throws -> WriteEffect {
        try await transaction {
            try $0.completeJob(id: id, document: document, vectors: vectors, embedder: embedder, progress: progress, warnings: warnings, now: Date())
        }
    }

    public func endJob(id: String, _ ending: JobEnding) async throws {
        try await transaction { try $0.endJob(id: id, ending, now: Date()) }
    }

    public func importOriginal(_ job: StoredJob, chunks: [Data]) async throws {
        try await transaction { try $0.importOriginal(job, chunks: chunks, now: Date()) }
    }

    public func beginReread(sourcePath: String, jobID: String) async throws -> StoredJob {
        try await transaction { try $0.beginReread(sourcePath: sourcePath, jobID: jobID, now: Date()) }
    }
}

public import Foundation
public import KBCore

/// The steps writes are made of, inside one write transaction of a store, each in the store's
/// own SQL. The rules that combine them — which embedder an index records, how a source replaces
/// the one at its path, what removing a folder removes, when the searched embedder may change,
/// how bots are created and changed — are written once, in this protocol's extension, for every
/// store. `MemoryTransaction` adds the steps and rules of memories.
public protocol StoreTransaction: StoredReads {
    func setMeta(_ key: String, _ value: String) throws
    /// Counts a write that changes what searches see; returns the new generation.
    func bumpGeneration() throws -> Int64

    // Sources
    /// Inserts the source, or updates the one stored at its path; returns its id.
    func saveSource(_ source: Source, ingestedAt: Date) throws -> Int64
    /// Deletes a source's snippets (their tags, vectors and keyword rows go with them) and its
    /// tags; returns the snippet ids.
    func clearSource(id: Int64) throws -> [Int64]
    /// Inserts the source's tags and the document's snippets with theirs; returns the snippet ids
    /// in ordinal order.
    func insertContent(_ document: SourceDocument, sourceID: Int64) throws -> [Int64]
    /// Paths of stored sources that are `path` or lie under `path/`, in order.
    func sourcePaths(matching path: String) throws -> [String]
    /// Deletes the source at `path` with its snippets; returns their ids, or nil when no source
    /// has that path.
    func deleteSource(path: String) throws -> [Int64]?
    /// Drops tags no source or snippet uses any more.
    func deleteUnusedTags() throws
    /// Appends answered requests to the request log.
    func insertRequestLog(_ entries: [RequestLogEntry]) throws
    /// Deletes request log rows older than `before`; returns how many.
    func deleteRequestLog(before: Date) throws -> Int
    func cacheOCRPage(_ page: OCRPage, contentHash: String, key: String) throws

    // Vectors
    /// Adds an embedder's row unless it has one.
    func insertEmbedder(_ record: EmbedderRecord) throws
    /// Stores vectors of existing snippets from `embedder`, replacing any they had from it;
    /// snippets deleted meanwhile are skipped.
    func saveVectors(_ entries: [(id: Int64, vector: [Float])], embedder: EmbedderRecord) throws
    /// Keeps remote vectors by text hash and adds the tokens they cost.
    func cacheVectors(embedder: EmbedderRecord, _ entries: [(hash: Data, vector: [Float])], tokens: Int) throws
    /// How many snippets have no vector from `embedder`.
    func countSnippetsWithoutVectors(embedder: EmbedderRecord) throws -> Int
    /// Deletes the vectors (and records) of every embedder but `embedder`.
    func deleteVectors(except embedder: EmbedderRecord) throws
    /// Replaces `embedder`'s vectors with `staging`'s (every one of them, under `embedder`'s
    /// name) and deletes `staging`'s record.
    func moveVectors(from staging: EmbedderRecord, to embedder: EmbedderRecord) throws

    // Bots
    /// Inserts the bot, or updates the one with its name (keeping its creation time).
    func saveBot(_ bot: Bot) throws
    /// Deletes a bot; false when none has the name.
    func removeBot(named name: String) throws -> Bool

    // Jobs and the originals of uploaded sources
    func insertJob(_ job: StoredJob) throws
    /// Writes a job's state, size, hash, progress, error and warnings, and marks it alive now.
    func updateJob(_ job: StoredJob, now: Date) throws
    /// Deletes a job with its bytes.
    func deleteJob(id: String) throws
    /// Keeps one piece of a job's bytes (`seq` from 0, in order).
    func insertJobChunk(id: String, seq: Int, data: Data) throws
    /// Copies the bytes of job `from` to job `to` (which has none yet).
    func copyJobChunks(from: String, to: String) throws
    /// Drops the bytes of a job (its row stays, for `GET /v1/jobs/{id}`).
    func deleteJobChunks(id: String) throws
    /// The jobs of a source (by its upload id), oldest first.
    func jobIDs(ofSource source: String) throws -> [String]
    /// The oldest job in `state`, or nil.
    func oldestJob(in state: Job.State) throws -> StoredJob?
    /// Jobs in `state` not marked alive since `before`.
    func staleJobIDs(in state: Job.State, before: Date) throws -> [String]
    /// Records which job's bytes are the original of an uploaded source.
    func setOriginal(sourcePath: String, jobID: String?) throws
}

extension StoreTransaction {
    /// Records the index's embedder, unless one is recorded already (then it must accept `record`).
    public func recordEmbedder(_ record: EmbedderRecord) throws {
        if let existing = try embedderRecord() {
            guard existing.accepts(record) else {
                throw KBError(.embedderMismatch, EmbedderRecord.mismatchMessage(index: existing, requested: record))
            }
            return
        }
        for (key, value) in record.metaValues { try setMeta(key, value) }
    }

    /// The id of an embedder's row, made when it has none.
    public func makeEmbedderID(_ record: EmbedderRecord) throws -> Int64 {
        try insertEmbedder(record)
        guard let id = try embedderID(named: record.name) else {
            throw KBError(.database, "The embedder \(record.name) vanished while it was being recorded.")
        }
        return id
    }

    /// Stores a source, its snippets and their vectors, replacing whatever the index held at the
    /// same path. `vectors` holds one vector per snippet, in order, from `embedder`; nil for a
    /// keyword-only index.
    public func replace(_ document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord, ingestedAt: Date) throws -> WriteEffect {
        try embedder.check(vectors, for: document)
        try recordEmbedder(vectors == nil ? .none : embedder)
        let sourceID = try saveSource(document.source, ingestedAt: ingestedAt)
        var effect = WriteEffect(sourceID: sourceID)
        effect.removedSnippets = try clearSource(id: sourceID)
        effect.insertedSnippets = try insertContent(document, sourceID: sourceID)
        if let vectors { try saveVectors(zip(effect.insertedSnippets, vectors).map { (id: $0, vector: $1) }, embedder: embedder) }
        effect.generation = try bumpGeneration()
        return effect
    }

    /// Removes the source at `path` with its snippets; an uploaded source's jobs and original go
    /// with it (a job still queued or running for it is cancelled). Returns the snippet ids, or
    /// nil when no source has that path.
    public func removeSource(path: String) throws -> [Int64]? {
        if let id = Source.uploadID(path: path) {
            for job in try jobIDs(ofSource: id) { try deleteJob(id: job) }
        }
        return try deleteSource(path: path)
    }

    /// Removes the sources at these paths or under these folders; returns the paths removed.
    public func removeSources(matching paths: [String]) throws -> (paths: [String], effect: WriteEffect) {
        var removed: [String] = []
        var effect = WriteEffect()
        for path in paths {
            for match in try sourcePaths(matching: path) where !removed.contains(match) {
                guard let snippets = try removeSource(path: match) else { continue }
                effect.removedSnippets += snippets
                removed.append(match)
            }
        }
        if !removed.isEmpty { effect.generation = try bumpGeneration() }
        try deleteUnusedTags()
        return (removed, effect)
    }

    /// Removes the sources at exactly these paths; returns how many there were.
    public func removeSources(exactly paths: [String]) throws -> (count: Int, effect: WriteEffect) {
        var count = 0
        var effect = WriteEffect()
        for path in Set(paths).sorted() {
            guard let snippets = try removeSource(path: path) else { continue }
            effect.removedSnippets += snippets
            count += 1
        }
        if count > 0 { effect.generation = try bumpGeneration() }
        try deleteUnusedTags()
        return (count, effect)
    }

    /// Stores vectors of another embedder beside the current ones, without changing which
    /// embedder the index searches with.
    public func addVectors(embedder: EmbedderRecord, _ entries: [(id: Int64, vector: [Float])]) throws {
        if let bad = entries.first(where: { $0.vector.count != embedder.dimension }) {
            throw KBError(.embedding, "\(embedder.name) returned a \(bad.vector.count)-dim vector; it gave \(embedder.dimension)-dim vectors before.")
        }
        try saveVectors(entries, embedder: embedder)
    }

    /// Makes `embedder` the one the index searches with, once every snippet has its vector —
    /// written under `embedder.staging` when `staged` (the same embedder in another precision or
    /// context, moved onto its name now); with `dropOthers`, other embedders' vectors are
    /// deleted. False (and nothing changed) when some snippet still lacks a vector.
    public func switchEmbedder(to embedder: EmbedderRecord, staged: Bool = false, dropOthers: Bool) throws -> Bool {
        guard try countSnippetsWithoutVectors(embedder: staged ? embedder.staging : embedder) == 0 else { return false }
        if staged { try moveVectors(from: embedder.staging, to: embedder) }
        for (key, value) in embedder.metaValues { try setMeta(key, value) }
        if dropOthers { try deleteVectors(except: embedder) }
        _ = try bumpGeneration()
        return true
    }

    /// Stores a new bot; fails when the name is taken.
    public func createBot(_ bot: Bot) throws {
        if try findBot(named: bot.name) != nil {
            throw KBError(.conflict, "A bot named \(bot.name) exists already. Change it with `kb bot update`, or pick another name.")
        }
        try saveBot(bot)
    }

    /// Changes a stored bot with `change`; returns it as saved (times as the store keeps them).
    public func updateBot(named name: String, _ change: (inout Bot) throws -> Void) throws -> Bot {
        guard var bot = try findBot(named: name) else {
            throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots.")
        }
        try change(&bot)
        bot.updatedAt = Date()
        try saveBot(bot)
        guard let saved = try findBot(named: name) else {
            throw KBError(.database, "The bot \(name) vanished while it was being saved.")
        }
        return saved
    }

    /// Deletes a bot (its memories stay: they belong to their scopes).
    public func deleteBot(named name: String) throws {
        guard try removeBot(named: name) else { throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots.") }
    }
}

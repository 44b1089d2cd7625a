public import Foundation
public import KBCore

/// The reads that snapshots and write transactions share: `kb_meta`, memories and bots by key.
/// The rules built on them (what the recorded embedder is, whether another may write, which
/// memory an id prefix names) are written once, in this protocol's extension.
public protocol StoredReads {
    /// A `kb_meta` value, or nil.
    func meta(_ key: String) throws -> String?
    /// Ids of memories that start with `prefix`, in order, at most `limit`.
    func memoryIDs(startingWith prefix: String, limit: Int) throws -> [String]
    func fetchMemory(id: String) throws -> Memory?
    /// The current memory of a scope that holds this content key, if any.
    func currentMemory(contentKey: String, scope: MemoryScope) throws -> Memory?
    /// Earlier versions of a memory, oldest first.
    func memoryHistory(_ id: String) throws -> [MemoryVersion]
    /// The feedback given on a memory, oldest first.
    func memoryFeedback(_ id: String) throws -> [MemoryFeedbackEntry]
    /// The first time after `time` at which some memory starts or stops holding (its
    /// `validFrom`, `validTo` or `expiresAt`), or nil: until then, which memories hold stays the same.
    func nextMemoryChange(after time: Date) throws -> Date?
    /// The bot with this name, or nil.
    func findBot(named name: String) throws -> Bot?
    /// The id of an embedder's row (in the `embedders` table), or nil when it has none.
    func embedderID(named name: String) throws -> Int64?
    /// The job with this id, or nil.
    func storedJob(id: String) throws -> StoredJob?
    /// The job whose bytes are an uploaded source's original, or nil.
    func originalJobID(sourcePath: String) throws -> String?
}

extension StoredReads {
    /// The embedder recorded in `kb_meta`, or nil for an index nothing was ingested into yet.
    public func embedderRecord() throws -> EmbedderRecord? {
        guard let name = try meta(EmbedderRecord.MetaKey.name) else { return nil }
        let dimension = Int(try meta(EmbedderRecord.MetaKey.dimension) ?? "0") ?? 0
        let precision = try meta(EmbedderRecord.MetaKey.precision).flatMap { $0.isEmpty ? nil : $0 }
        let context = try meta(EmbedderRecord.MetaKey.context).flatMap { $0.isEmpty ? nil : $0 }
        return EmbedderRecord(name: name, dimension: dimension, spec: try meta(EmbedderRecord.MetaKey.spec) ?? name, precision: precision,
                              context: context)
    }

    /// Checks that vectors from `record` may be written into this index (before any work is done).
    public func checkEmbedder(_ record: EmbedderRecord) throws {
        if let existing = try embedderRecord(), !existing.accepts(record) {
            throw KBError(.embedderMismatch, EmbedderRecord.mismatchMessage(index: existing, requested: record))
        }
    }

    /// The full id of the memory an id or id prefix names; throws when none or several match.
    public func resolveMemoryID(_ idOrPrefix: String) throws -> String {
        try MemoryIDs.resolved(try memoryIDs(startingWith: idOrPrefix, limit: 6), for: idOrPrefix)
    }

    /// The memory with this id or unique id prefix.
    public func memory(_ idOrPrefix: String) throws -> Memory {
        let id = try resolveMemoryID(idOrPrefix)
        guard let memory = try fetchMemory(id: id) else {
            throw KBError(.notFound, "The memory \(id) was deleted while it was being read.")
        }
        return memory
    }

    /// The bot with this name; throws `notFound` naming how to list and make bots.
    public func bot(named name: String) throws -> Bot {
        guard let bot = try findBot(named: name) else {
            throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots; `kb bot create NAME` makes one.")
        }
        return bot
    }
}

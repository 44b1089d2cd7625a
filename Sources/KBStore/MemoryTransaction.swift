public import Foundation
public import KBCore

/// The steps memory writes are made of, inside one write transaction of a store: a memory is a
/// source of kind `memory` with one snippet (written by `StoreTransaction.replace`) plus its
/// memory row and history. The rules that combine them — superseding, identical content,
/// versions, reviving what a deleted memory had superseded — are written once, in this
/// protocol's extension, for every store.
public protocol MemoryTransaction: StoreTransaction {
    /// Memories that `id` supersedes: id, scope and content key.
    func memoriesSuperseded(by id: String) throws -> [(id: String, scope: MemoryScope, contentKey: String)]
    /// Writes what a memory's state holds beyond its content (version, update time, supersession,
    /// valid time, feedback state) to its row.
    func saveMemoryState(_ memory: Memory) throws
    /// Logs one feedback on a memory, with who gave it.
    func recordFeedback(_ entry: MemoryFeedbackEntry) throws
    /// Vectors of the current memories of a scope from one embedder, but `excluding`'s.
    func memoryVectors(scope: MemoryScope, embedder: EmbedderRecord, excluding id: String?) throws -> [(id: String, vector: [Float])]
    /// Inserts the memory row, or updates the one with its id.
    func saveMemoryRow(_ memory: Memory, sourceID: Int64, contentKey: String) throws
    /// Replaces a memory's earlier versions with `versions`.
    func replaceHistory(_ versions: [MemoryVersion], of id: String) throws
    /// Every memory of a scope, superseded ones too.
    func memoryIDs(scope: MemoryScope) throws -> [String]
    /// Deletes cached remote vectors of texts with these hashes (SHA-256), from every embedder;
    /// returns how many there were.
    func forgetCachedVectors(textHashes: [Data]) throws -> Int
}

/// What erasing a scope removed.
public struct MemoryErasure: Sendable, Hashable {
    public var memories = 0
    /// Versions, the current ones included.
    public var versions = 0
    /// Cached remote vectors of their texts.
    public var cachedVectors = 0
    public var effect = WriteEffect()

    public init() {}
}

extension MemoryTransaction {
    /// Adds a memory unless a current memory of its scope holds the same content (then that one
    /// comes back and nothing changes). With `superseding`, that memory (same scope, still
    /// current) is marked as replaced by the new one.
    public func addMemory(_ write: MemoryWrite, superseding: String?) throws -> MemoryAddOutcome {
        var supersededID: String?
        if let superseding {
            let id = try resolveMemoryID(superseding)
            guard let old = try fetchMemory(id: id) else { throw KBError(.notFound, "No memory has the id \(superseding).") }
            guard old.scope == write.memory.scope else {
                throw KBError(.unprocessable,
                    "The memory \(id) is in scope \(old.scope), the new one in \(write.memory.scope); a memory can only supersede one of its own scope.")
            }
            if let newer = old.supersededBy {
                throw KBError(.conflict, "The memory \(id) was already superseded by \(newer). Supersede that one instead.")
            }
            supersededID = id
        }
        if let existing = try currentMemory(contentKey: write.contentKey, scope: write.memory.scope) {
            if let supersededID, supersededID != existing.id {
                try setSupersededBy(existing.id, closedAt: write.memory.validFrom, of: supersededID)
            }
            return .existing(existing)
        }
        let neighbours = write.vector == nil ? [] : try memoryVectors(scope: write.memory.scope, embedder: write.embedder, excluding: write.memory.id)
        let effect = try storeMemory(write, history: [])
        if let supersededID { try setSupersededBy(write.memory.id, closedAt: write.memory.validFrom, of: supersededID) }
        return .added(effect, neighbours: neighbours)
    }

    /// Replaces a memory with a new version, keeping the previous one in its history. Fails
    /// when the memory changed since `expectedVersion` was read (a concurrent update).
    public func updateMemory(_ write: MemoryWrite, expectedVersion: Int) throws -> WriteEffect {
        guard let current = try fetchMemory(id: write.memory.id) else {
            throw KBError(.notFound, "No memory has the id \(write.memory.id); it may have just been deleted.")
        }
        guard current.version == expectedVersion else {
            throw KBError(.conflict,
                "The memory \(current.id) changed while it was being updated (now version \(current.version)). Show it and try again.")
        }
        return try storeMemory(write, history: try memoryHistory(current.id) + [current.currentVersion])
    }

    /// Marks `id` as replaced by `newer` (nil: by none) and closes its valid time at `closedAt`
    /// (never before its `validFrom`; nil: holds again).
    func setSupersededBy(_ newer: String?, closedAt: Date?, of id: String) throws {
        guard var memory = try fetchMemory(id: id) else { return }
        memory.supersededBy = newer
        memory.validTo = closedAt.map { max($0, memory.validFrom) }
        try saveMemoryState(memory)
    }

    /// Changes what a memory's state holds beyond its content — valid time, supersession,
    /// feedback state — and logs `feedback` with it. With `versionAt`, the change is a new
    /// version written then (the previous state goes to the history); without, the version stays
    /// (feedback that only flags or counts). `authorize` sees the memory first, and may refuse; a
    /// memory changed since `expectedVersion` (when given) is a conflict.
    public func changeMemoryState(_ idOrPrefix: String, expectedVersion: Int?, versionAt: Date?, feedback: MemoryFeedbackEntry?,
                                  authorize: (Memory) throws -> Void = { _ in },
                                  _ change: (inout Memory) throws -> Void) throws -> (memory: Memory, effect: WriteEffect) {
        let id = try resolveMemoryID(idOrPrefix)
        guard let current = try fetchMemory(id: id) else { throw KBError(.notFound, "No memory has the id \(idOrPrefix).") }
        try authorize(current)
        if let expectedVersion, current.version != expectedVersion {
            throw KBError(.conflict,
                "The memory \(current.id) changed while it was being reviewed (now version \(current.version)). Look again and retry.")
        }
        var next = current
        try change(&next)
        if let versionAt {
            try replaceHistory(try memoryHistory(id) + [current.currentVersion], of: id)
            next.version = current.version + 1
            next.updatedAt = versionAt
        }
        try saveMemoryState(next)
        if let feedback { try recordFeedback(feedback) }
        var effect = WriteEffect()
        effect.generation = try bumpGeneration()
        return (next, effect)
    }

    /// Deletes a memory with its history, vector and keyword entries. Memories it had superseded
    /// become current again (unless their content is current elsewhere in the scope).
    /// `authorize` sees the memory first, and may refuse (the caller's rights).
    public func deleteMemory(_ idOrPrefix: String, authorize: (Memory) throws -> Void = { _ in }) throws -> (memory: Memory, effect: WriteEffect) {
        let id = try resolveMemoryID(idOrPrefix)
        guard let memory = try fetchMemory(id: id) else { throw KBError(.notFound, "No memory has the id \(idOrPrefix).") }
        try authorize(memory)
        var effect = WriteEffect()
        effect.removedSnippets = try deleteSource(path: memory.sourcePath) ?? []
        for older in try memoriesSuperseded(by: id) {
            // Holds again from where it was closed, unless its content is current elsewhere.
            let current = try currentMemory(contentKey: older.contentKey, scope: older.scope)
            try setSupersededBy(current?.id, closedAt: current?.validFrom, of: older.id)
        }
        effect.generation = try bumpGeneration()
        try deleteUnusedTags()
        return (memory, effect)
    }

    /// Deletes every memory of a scope — superseded ones, every version and its history, their
    /// vectors and keyword rows, and the cached remote vectors of each version's text
    /// (`textHash` gives the cache's key of a text).
    public func eraseMemories(scope: MemoryScope, textHash: (String) -> Data) throws -> MemoryErasure {
        var erasure = MemoryErasure()
        var hashes = Set<Data>()
        for id in try memoryIDs(scope: scope) {
            guard let memory = try fetchMemory(id: id) else { continue }
            let history = try memoryHistory(id)
            for text in [memory.content] + history.map(\.content) { hashes.insert(textHash(text)) }
            erasure.versions += history.count + 1
            erasure.effect.removedSnippets += try deleteSource(path: memory.sourcePath) ?? []
            erasure.memories += 1
        }
        erasure.cachedVectors = try forgetCachedVectors(textHashes: hashes.sorted { $0.lexicographicallyPrecedes($1) })
        if erasure.memories > 0 { erasure.effect.generation = try bumpGeneration() }
        try deleteUnusedTags()
        return erasure
    }

    /// Stores an imported memory with its history. The same memory already stored, unchanged,
    /// is left alone; one stored with different data is a conflict unless `replacing`.
    public func importMemory(_ write: MemoryWrite, history: [MemoryVersion], replacing: Bool) throws -> (MemoryImportOutcome, WriteEffect?) {
        var outcome = MemoryImportOutcome.added
        if let stored = try fetchMemory(id: write.memory.id) {
            if StoredMemory.same(stored, write.memory), StoredMemory.same(try memoryHistory(stored.id), history) {
                return (.unchanged, nil)
            }
            guard replacing else {
                throw KBError(.conflict,
                    "The memory \(stored.id) already exists with different data (version \(stored.version)). "
                  + "Import with --replace to overwrite it, or delete it first.")
            }
            outcome = .replaced
        }
        return (outcome, try storeMemory(write, history: history))
    }

    /// Writes the memory's source, snippet and vector, its row and its history. Content that
    /// another current memory of the scope holds is a conflict.
    public func storeMemory(_ write: MemoryWrite, history: [MemoryVersion]) throws -> WriteEffect {
        let memory = write.memory
        let effect = try replace(write.document, vectors: write.vector.map { [$0] }, embedder: write.embedder, ingestedAt: memory.updatedAt)
        if let other = try currentMemory(contentKey: write.contentKey, scope: memory.scope), other.id != memory.id {
            throw KBError(.conflict,
                "The memory \(other.id) in scope \(memory.scope) already holds this content. Update or delete that one instead.")
        }
        guard let sourceID = effect.sourceID else { throw KBError(.database, "The memory \(memory.id) has no source after it was written.") }
        try saveMemoryRow(memory, sourceID: sourceID, contentKey: write.contentKey)
        try replaceHistory(history, of: memory.id)
        return effect
    }
}

/// Memory ids as stores resolve them.
public enum MemoryIDs {
    /// The one id that `matches` (the ids starting with `idOrPrefix`, at most a few) leaves, or
    /// the error saying there is none or more than one.
    public static func resolved(_ matches: [String], for idOrPrefix: String) throws -> String {
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty {
            throw KBError(.notFound, "No memory has the id \(idOrPrefix). `kb memory list` shows the memories and their ids.")
        }
        throw KBError(.unprocessable,
            "\(idOrPrefix) matches several memories (\(matches.prefix(5).joined(separator: ", "))…); give more of the id.")
    }
}

import Foundation

/// The keyword table's postings in memory (`KeywordIndex`) for one `SQLiteStore`, built from a
/// snapshot when none is held or this process's copy is older than the snapshot (another process
/// wrote), and kept up to date with every write this process makes: removals at once, additions
/// tokenized by the next search that sees them.
///
/// A ranking uses the copy only when it holds exactly the snapshot's generation — its term
/// statistics are the snapshot's — and otherwise answers nil (the caller asks FTS5), so an
/// in-memory ranking always equals FTS5's for the same snapshot.
///
/// @unchecked Sendable: `index`, `generation` and `pending` are guarded by `lock`; `loading`
/// serialises loads and the tokenizing of pending additions.
final class KeywordCache: @unchecked Sendable {
    private let lock = NSLock()
    private let loading = NSLock()
    private var index: KeywordIndex?
    /// The index generation the copy reflects (with `pending` tokenized); -1 when it must be rebuilt.
    private var generation: Int64 = -1
    /// Snippets added at or before `generation` whose tokens are not in the copy yet.
    private var pending: [Int64] = []

    /// A copy with this many removed documents in its postings per live one is rebuilt.
    static let deadFraction = 0.25

    /// Whether a copy is held (it may be older or newer than a snapshot).
    var holdsCopy: Bool { lock.withLock { index != nil } }

    /// The copy as of exactly `generation`: built with `load` when none is held or it is older,
    /// with pending additions read by `fetch` (id → tokens by column); nil when this process's copy
    /// is newer than the snapshot.
    func index(generation wanted: Int64, load: () throws -> KeywordIndex,
               fetch: ([Int64]) throws -> [(id: Int64, columns: [[String]])]) throws -> KeywordIndex? {
        let state: (index: KeywordIndex?, generation: Int64, pending: Bool) = lock.withLock { (index, generation, !pending.isEmpty) }
        if let index = state.index, state.generation == wanted, !state.pending { return index }
        if state.index != nil, state.generation > wanted { return nil }
        loading.lock()
        defer { loading.unlock() }
        let (held, heldGeneration, waiting) = lock.withLock { (index, generation, pending) }
        if let held, heldGeneration == wanted {
            guard !waiting.isEmpty else { return held }
            let documents = try fetch(waiting)
            return lock.withLock {
                // Writes may have removed some meanwhile (those left `pending`): only the rest go in.
                let stillPending = Set(pending)
                for document in documents where stillPending.contains(document.id) { held.add(document.id, columns: document.columns) }
                let done = Set(waiting)
                pending.removeAll { done.contains($0) }
                return generation == wanted ? held : nil
            }
        }
        if held != nil, heldGeneration > wanted { return nil }
        let loaded = try load()
        lock.withLock {
            if generation <= wanted {
                index = loaded
                generation = wanted
                pending = []
            }
        }
        return loaded
    }

    /// Applies one committed transaction of this process. One that does not directly follow the
    /// copy's generation (another process wrote in between) or rebuilt the keyword table marks
    /// the copy for a rebuild instead, as does a copy with too many removed documents.
    func follow(_ log: SQLiteTransaction.Log) {
        guard let after = log.generationAfter else { return }
        lock.withLock {
            guard let index, generation >= 0 else { return }
            guard !log.keywordsRebuilt, log.generationBefore == generation else {
                generation = -1
                return
            }
            index.remove(log.removedSnippets)
            if !log.removedSnippets.isEmpty {
                let removed = Set(log.removedSnippets)
                pending.removeAll { removed.contains($0) }
            }
            pending += log.addedSnippets
            generation = Double(index.dead) > Double(max(index.count, 1)) * Self.deadFraction ? -1 : after
        }
    }

    /// The copy with the generation it holds, for saving; nil when no copy is held that is exactly
    /// as of its generation (stale, or with additions not yet tokenized). Its saved form is taken
    /// after this cache's lock is released (leaving removed documents out reads every posting): a
    /// write that comes in between moves the index past the generation it is stamped with, so such
    /// a file is never read.
    func current() -> (index: KeywordIndex, generation: Int64)? {
        lock.withLock {
            guard let index, generation >= 0, pending.isEmpty else { return nil }
            return (index, generation)
        }
    }

    /// Marks the copy stale (a raw write whose effect is unknown).
    func invalidate() { lock.withLock { generation = -1 } }
}

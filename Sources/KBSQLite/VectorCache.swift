import Foundation
import KBStore

/// The searched embedder's vectors in memory, for one `SQLiteStore`: loaded from a snapshot when
/// this process's copy is older than it (another process wrote, or nothing is loaded yet), and
/// kept up to date with every write this process makes without reloading.
///
/// A copy newer than a snapshot (this process wrote meanwhile) serves that snapshot as it is:
/// snippets the snapshot does not hold drop out of its results with their summaries. One load at
/// a time: a search that finds a load under way waits for it rather than loading the same
/// vectors again.
///
/// @unchecked Sendable: `index`, `record` and `generation` are guarded by `lock`; `loading`
/// serialises loads.
final class VectorCache: @unchecked Sendable {
    /// Which vectors this copy holds: memories' or the rest's.
    let rows: VectorRows
    init(rows: VectorRows) { self.rows = rows }

    private let lock = NSLock()
    private let loading = NSLock()
    private var index: VectorMatrix?
    private var record: EmbedderRecord?
    /// The index generation the vectors reflect; -1 when they must be reloaded.
    private var generation: Int64 = -1

    /// The vectors of `record` as of `generation` or later, loading them with `load` when the
    /// copy in memory is older (or of another embedder).
    func index(for record: EmbedderRecord, generation: Int64,
               load: () throws -> (index: VectorMatrix, generation: Int64)) throws -> VectorMatrix {
        if let index = current(record, generation) { return index }
        loading.lock()
        defer { loading.unlock() }
        if let index = current(record, generation) { return index }
        let loaded = try load()
        let index = loaded.index
        lock.withLock {
            // Keep the newest: a search on an older snapshot must not replace a newer copy.
            if loaded.generation >= self.generation || self.record != record {
                self.index = index
                self.record = record
                self.generation = loaded.generation
            }
        }
        return index
    }

    /// The copy in memory when it holds `record`'s vectors as of `generation` or later.
    func current(_ record: EmbedderRecord, _ generation: Int64) -> VectorMatrix? {
        lock.withLock { self.record == record && self.generation >= generation ? index : nil }
    }

    /// Applies one committed transaction of this process. A transaction that does not directly
    /// follow the generation in memory (another process wrote in between), or that changed the
    /// searched embedder, marks the copy stale instead.
    func follow(_ log: SQLiteTransaction.Log) {
        guard let after = log.generationAfter else { return }
        lock.withLock {
            guard let index, let record else { return }
            guard !log.embedderChanged, log.generationBefore == generation else {
                generation = -1
                return
            }
            do {
                try index.remove(log.removedSnippets)
            } catch {
                generation = -1
                return
            }
            if let upserts = log.savedVectors[record.name]?.filter({ log.memoryVectors.contains($0.id) == (rows == .memories) }) {
                do {
                    try index.upsert(upserts)
                } catch {
                    generation = -1
                    return
                }
            }
            generation = after
        }
    }

    /// The copy in memory as a saved file's parts, with the embedder and generation it holds;
    /// nil when no current copy is held. (The matrix's read lock is taken inside this cache's lock,
    /// in the order `follow` takes them.)
    func savedForm() -> (record: EmbedderRecord, generation: Int64, rows: Int, numbers: [String: [Double]], sections: [SavedFile.Section])? {
        lock.withLock {
            guard let index, let record, generation >= 0 else { return nil }
            let form = index.savedForm()
            return (record, generation, index.count, form.numbers, form.sections)
        }
    }

    /// The copy in memory, whatever its generation (for tests).
    var loadedIndex: VectorMatrix? { lock.withLock { index } }

    /// Marks the copy stale (a raw write whose effect is unknown).
    func invalidate() { lock.withLock { generation = -1 } }
}

import Foundation
import GRDB

/// What each committed write did to snippets and vectors, kept in the index (`kb_search_log`) so
/// that a process finding a copy saved beside the index (`SavedSearchData`) older than the index
/// catches it up — removes the snippets those writes touched and reads them back as they are now —
/// instead of deriving the whole copy again (a million snippets: over a minute; a server killed
/// after a single write found every copy stale).
///
/// One row a write transaction, covering the generations (before, generation]: the snippets it
/// removed, and those it added or wrote vectors for. A copy made as of generation g catches up
/// only when rows chain from g to the snapshot's generation with no gap: a raw write
/// (`SQLiteStore.write`) writes no row, and a write that rebuilt the keyword table or changed the
/// embedder writes one marked `reset`, so across either the copy is derived as before. Rows are
/// written only while the folder of saved copies exists; those older than every saved copy are
/// deleted after a save, and at most `kept` generations are kept.
enum SearchLog {
    /// Generations of writes kept at most: a copy older than that is derived again.
    static let kept: Int64 = 10_000

    /// Records one committed transaction's changes (inside it, before the commit).
    static func record(_ log: SQLiteTransaction.Log, in db: Database, saved: SavedSearchData) throws {
        guard let before = log.generationBefore, let after = log.generationAfter else { return }
        guard saved.exists else {
            // No saved copy to catch up: nothing is kept.
            if saved.mayHoldLog.withLock({ $0 }) {
                try db.execute(sql: "DELETE FROM kb_search_log")
                saved.mayHoldLog.withLock { $0 = false }
            }
            return
        }
        saved.mayHoldLog.withLock { $0 = true }
        var written = Set(log.addedSnippets)
        for entries in log.savedVectors.values { written.formUnion(entries.lazy.map(\.id)) }
        let reset = log.keywordsRebuilt || log.embedderChanged
        try db.execute(sql: "INSERT OR REPLACE INTO kb_search_log (generation, before, reset, removed, written) VALUES (?, ?, ?, ?, ?)",
                       arguments: [after, before, reset ? 1 : 0, encode(reset ? [] : Set(log.removedSnippets).sorted()),
                                   encode(reset ? [] : written.sorted())])
        let floor = max(saved.logFloor.withLock { floor in defer { floor = nil }; return floor } ?? .min, after - kept)
        try db.execute(sql: "DELETE FROM kb_search_log WHERE generation <= ?", arguments: [floor])
    }

    /// What the writes after one generation up to another did.
    struct Changes: Equatable {
        /// The snippets they removed, added or wrote vectors for.
        var touched: Set<Int64> = []
        /// How many of those they removed (a copy made before holds their words and vectors).
        var removed = 0
    }

    /// What the writes after generation `from` up to `to` did; nil when the log does not tell it
    /// all (a gap, a reset, or rows deleted).
    static func changes(in db: Database, from: Int64, to: Int64) throws -> Changes? {
        guard from < to else { return from == to ? Changes() : nil }
        var cursor = from
        var changes = Changes()
        let rows = try Row.fetchCursor(db, sql: """
            SELECT generation, before, reset, removed, written FROM kb_search_log WHERE generation > ? AND generation <= ? ORDER BY generation
            """, arguments: [from, to])
        while let row = try rows.next() {
            let before: Int64 = row[1], reset: Int = row[2]
            guard before == cursor, reset == 0 else { return nil }
            guard let removed = decode(row[3]), let written = decode(row[4]) else { return nil }
            changes.touched.formUnion(removed)
            changes.touched.formUnion(written)
            changes.removed += removed.count
            cursor = row[0]
        }
        return cursor == to ? changes : nil
    }

    /// Snippet ids as 8-byte little-endian integers.
    static func encode(_ ids: [Int64]) -> Data {
        var data = Data(capacity: ids.count * 8)
        for id in ids { withUnsafeBytes(of: id.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    static func decode(_ data: Data?) -> [Int64]? {
        guard let data, data.count % 8 == 0 else { return nil }
        return data.withUnsafeBytes { bytes in
            (0..<(data.count / 8)).map { Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self)) }
        }
    }
}

import Foundation
import GRDB
import KBCore
import KBStore

/// The reads a snapshot and a write transaction of an SQLite index share (`StoredReads`), over
/// one connection inside one transaction.
protocol SQLiteReads: StoredReads {
    var db: Database { get }
}

extension SQLiteReads {
    public func meta(_ key: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM kb_meta WHERE key = ?"), arguments: [key])
    }

    public func memoryIDs(startingWith prefix: String, limit: Int) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT id FROM memories WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
                            arguments: [prefix.unicodeScalars.count, prefix, limit])
    }

    public func fetchMemory(id: String) throws -> Memory? {
        try Row.fetchOne(db, sql: "SELECT \(SQLiteStore.memoryColumns) FROM memories WHERE id = ?", arguments: [id]).map(SQLiteStore.memory)
    }

    public func currentMemory(contentKey: String, scope: MemoryScope) throws -> Memory? {
        try Row.fetchOne(db, sql: """
            SELECT \(SQLiteStore.memoryColumns) FROM memories WHERE scope = ? AND content_key = ? AND superseded_by IS NULL AND valid_to IS NULL
            """, arguments: [scope.name, contentKey]).map(SQLiteStore.memory)
    }

    public func memoryHistory(_ id: String) throws -> [MemoryVersion] {
        try Row.fetchAll(db, sql: """
            SELECT version, title, content, tags, updated_at FROM memory_versions WHERE memory_id = ? ORDER BY version
            """, arguments: [id]).map { row in
            MemoryVersion(
                version: row["version"], title: row["title"], content: row["content"], tags: StoredForms.tags(row["tags"]),
                updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
        }
    }

    public func memoryFeedback(_ id: String) throws -> [MemoryFeedbackEntry] {
        try Row.fetchAll(db, sql: "SELECT feedback, caller, note, at FROM memory_feedback WHERE memory_id = ? ORDER BY at, id", arguments: [id]).map {
            MemoryFeedbackEntry(memoryID: id, feedback: $0["feedback"], caller: $0["caller"], note: $0["note"], at: Date(timeIntervalSince1970: $0["at"]))
        }
    }

    public func nextMemoryChange(after time: Date) throws -> Date? {
        let t = time.timeIntervalSince1970
        return try Double.fetchOne(db.cachedStatement(sql: """
            SELECT MIN(t) FROM (SELECT MIN(valid_from) AS t FROM memories WHERE valid_from > ?1
                UNION ALL SELECT MIN(valid_to) FROM memories WHERE valid_to > ?1
                UNION ALL SELECT MIN(expires_at) FROM memories WHERE expires_at > ?1)
            """), arguments: [t]).map(Date.init(timeIntervalSince1970:))
    }

    public func findBot(named name: String) throws -> Bot? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM bots WHERE name = ?"), arguments: [name]).map(SQLiteStore.bot)
    }

    /// The write counter (see `SQLiteTransaction.bumpGeneration`).
    public func generation() throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM kb_meta WHERE key = 'generation'")) ?? 0
    }

    /// Ids of a source's snippets, in ordinal order.
    public func snippetIDs(ofSource path: String) throws -> [Int64] {
        try Int64.fetchAll(db, sql: "SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE so.path = ? ORDER BY sn.ordinal",
                           arguments: [path])
    }

    public func pageStarts(ofSource path: String) throws -> [PageStart] {
        let stored = try String.fetchOne(db, sql: "SELECT p.starts FROM source_pages p JOIN sources so ON so.id = p.source_id WHERE so.path = ?",
                                         arguments: [path])
        return stored.map { [PageStart](stored: $0) } ?? []
    }

    public func storedJob(id: String) throws -> StoredJob? {
        try Row.fetchOne(db, sql: "SELECT * FROM jobs WHERE id = ?", arguments: [id]).map(SQLiteStore.job)
    }

    public func originalJobID(sourcePath: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT original_job FROM sources WHERE path = ?", arguments: [sourcePath])
    }

    public func embedderID(named name: String) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM embedders WHERE name = ?"), arguments: [name])
    }
}

extension SQLiteStore {
    static func job(_ row: Row) throws -> StoredJob {
        guard let state = Job.State(rawValue: row["state"]) else {
            throw KBError(.database, "The job \(row["id"] as String) has the unknown state '\(row["state"] as String)'.")
        }
        let warnings: String = row["warnings"], bots: String = row["bots"]
        let job = Job(
            id: row["id"], source: row["source"], state: state, contentType: row["content_type"], size: row["size"],
            progress: Job.Progress(pagesDone: row["pages_done"], pagesTotal: row["pages_total"], snippetsDone: row["snippets_done"],
                                   snippetsTotal: row["snippets_total"]),
            error: row["error"], warnings: warnings.isEmpty ? [] : warnings.components(separatedBy: "\n"),
            createdAt: Date(timeIntervalSince1970: row["created_at"]), updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
        return StoredJob(job: job, title: row["title"], tags: StoredForms.tags(row["tags"]), owner: row["owner"],
                         bots: bots.isEmpty ? [] : bots.components(separatedBy: "\n"), contentHash: row["content_hash"])
    }
}

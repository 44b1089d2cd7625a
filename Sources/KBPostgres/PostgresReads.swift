import Foundation
import KBCore
import KBStore
import PostgresNIO

/// The reads a snapshot and a write transaction of a PostgreSQL index share (`StoredReads`),
/// over one leased connection inside one transaction.
protocol PostgresReads: StoredReads {
    var session: PGSession { get }
}

extension PostgresReads {
    public func meta(_ key: String) throws -> String? { try PostgresSchema.meta(key, session) }

    public func memoryIDs(startingWith prefix: String, limit: Int) throws -> [String] {
        try session.rows("SELECT id FROM memories WHERE starts_with(id, $1) ORDER BY id COLLATE \"C\" LIMIT $2",
                         .text(prefix), .int(Int64(limit))).map { try $0.get(0, String.self) }
    }

    public func fetchMemory(id: String) throws -> Memory? {
        try session.rows("SELECT \(PostgresRows.memoryColumns) FROM memories WHERE id = $1", .text(id)).first.map(PostgresRows.memory)
    }

    public func currentMemory(contentKey: String, scope: MemoryScope) throws -> Memory? {
        try session.rows("""
            SELECT \(PostgresRows.memoryColumns) FROM memories WHERE scope = $1 AND content_key = $2 AND superseded_by IS NULL AND valid_to IS NULL
            """, .text(scope.name), .text(contentKey)).first.map(PostgresRows.memory)
    }

    public func memoryHistory(_ id: String) throws -> [MemoryVersion] {
        try session.rows("""
            SELECT version, title, content, tags, updated_at FROM memory_versions WHERE memory_id = $1 ORDER BY version
            """, .text(id)).map { row in
            MemoryVersion(
                version: Int(try row.get("version", Int32.self)), title: try row.get("title"), content: try row.get("content"),
                tags: StoredForms.tags(try row.get("tags")), updatedAt: Date(timeIntervalSince1970: try row.get("updated_at")))
        }
    }

    public func memoryFeedback(_ id: String) throws -> [MemoryFeedbackEntry] {
        try session.rows("SELECT feedback, caller, note, at FROM memory_feedback WHERE memory_id = $1 ORDER BY at, id", .text(id)).map {
            MemoryFeedbackEntry(memoryID: id, feedback: try $0.get("feedback"), caller: try $0.get("caller"), note: try $0.get("note"),
                                at: Date(timeIntervalSince1970: try $0.get("at")))
        }
    }

    public func nextMemoryChange(after time: Date) throws -> Date? {
        try session.rows(prepared: """
            SELECT LEAST((SELECT MIN(valid_from) FROM memories WHERE valid_from > $1::float8),
                         (SELECT MIN(valid_to) FROM memories WHERE valid_to > $1::float8),
                         (SELECT MIN(expires_at) FROM memories WHERE expires_at > $1::float8))
            """, .double(time.timeIntervalSince1970)).first.flatMap { try $0.get(0, Double?.self) }.map(Date.init(timeIntervalSince1970:))
    }

    public func findBot(named name: String) throws -> Bot? {
        try session.rows(prepared: "SELECT * FROM bots WHERE name = $1::text", .text(name)).first.map(PostgresRows.bot)
    }

    /// The write counter (see `PostgresTransaction.bumpGeneration`).
    public func generation() throws -> Int64 { Int64(try meta("generation") ?? "0") ?? 0 }

    /// Ids of a source's snippets, in ordinal order.
    public func snippetIDs(ofSource path: String) throws -> [Int64] {
        try session.rows("SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE so.path = $1 ORDER BY sn.ordinal", .text(path))
            .map { try $0.get(0, Int64.self) }
    }

    public func pageStarts(ofSource path: String) throws -> [PageStart] {
        let stored = try session.rows("SELECT p.starts FROM source_pages p JOIN sources so ON so.id = p.source_id WHERE so.path = $1", .text(path))
            .first.map { try $0.get(0, String.self) }
        return stored.map { [PageStart](stored: $0) } ?? []
    }

    public func storedJob(id: String) throws -> StoredJob? {
        try session.rows("SELECT * FROM jobs WHERE id = $1", .text(id)).first.map(PostgresRows.job)
    }

    public func originalJobID(sourcePath: String) throws -> String? {
        try session.value(String.self, "SELECT original_job FROM sources WHERE path = $1", .text(sourcePath))
    }

    public func embedderID(named name: String) throws -> Int64? {
        try session.value(Int64.self, "SELECT id FROM embedders WHERE name = $1", .text(name))
    }
}

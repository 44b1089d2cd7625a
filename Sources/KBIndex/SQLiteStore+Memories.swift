public import Foundation
import GRDB
public import KBCore

/// What the store needs to write one memory: the memory, its normal-form key, the source
/// document that makes it searchable, and its vector (nil for a keyword-only index).
public struct MemoryWrite: Sendable {
    public var memory: Memory
    public var contentKey: String
    public var document: SourceDocument
    public var vector: [Float]?
    public var embedder: EmbedderRecord

    public init(memory: Memory, contentKey: String, document: SourceDocument, vector: [Float]?, embedder: EmbedderRecord) {
        self.memory = memory
        self.contentKey = contentKey
        self.document = document
        self.vector = vector
        self.embedder = embedder
    }
}

/// What adding a memory did.
public enum MemoryAddOutcome: Sendable {
    /// A current memory in the scope already holds the same content; nothing was written.
    case existing(Memory)
    /// The memory was stored. `neighbours` are the vectors of the other current memories of
    /// its scope as they were when it was written (for near-duplicate reports).
    case added(WriteEffect, neighbours: [(id: String, vector: [Float])])
}

/// What importing one memory did.
public enum MemoryImportOutcome: String, Sendable, Codable {
    case added, unchanged, replaced
}

extension SQLiteStore {
    static let memoryColumns = "id, scope, title, content, tags, created_at, updated_at, version, superseded_by"

    static func memory(_ row: Row) throws -> Memory {
        let tags: String = row["tags"]
        return Memory(
            id: row["id"], scope: try MemoryScope(row["scope"] as String), title: row["title"], content: row["content"],
            tags: tags.isEmpty ? [] : tags.components(separatedBy: "\n").map { Tag($0) },
            createdAt: Date(timeIntervalSince1970: row["created_at"]), updatedAt: Date(timeIntervalSince1970: row["updated_at"]),
            version: row["version"], supersededBy: row["superseded_by"])
    }

    /// The full id of the memory an id or id prefix names; throws when none or several match.
    static func resolveMemoryID(_ idOrPrefix: String, _ db: Database) throws -> String {
        try MemoryIDs.resolved(try String.fetchAll(db, sql: "SELECT id FROM memories WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6",
                                                   arguments: [idOrPrefix.unicodeScalars.count, idOrPrefix]), for: idOrPrefix)
    }

    static func fetchMemory(id: String, _ db: Database) throws -> Memory? {
        try Row.fetchOne(db, sql: "SELECT \(memoryColumns) FROM memories WHERE id = ?", arguments: [id]).map(memory)
    }

    static func history(_ id: String, _ db: Database) throws -> [MemoryVersion] {
        try Row.fetchAll(db, sql: """
            SELECT version, title, content, tags, updated_at FROM memory_versions WHERE memory_id = ? ORDER BY version
            """, arguments: [id]).map { row in
            let tags: String = row["tags"]
            return MemoryVersion(
                version: row["version"], title: row["title"], content: row["content"],
                tags: tags.isEmpty ? [] : tags.components(separatedBy: "\n").map { Tag($0) },
                updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
        }
    }

    static func current(contentKey: String, scope: MemoryScope, _ db: Database) throws -> Memory? {
        try Row.fetchOne(db, sql: """
            SELECT \(memoryColumns) FROM memories WHERE scope = ? AND content_key = ? AND superseded_by IS NULL
            """, arguments: [scope.name, contentKey]).map(memory)
    }

    /// Vectors of the current memories of a scope from one embedder.
    static func memoryVectors(scope: MemoryScope, embedder: EmbedderRecord, excluding id: String?, _ db: Database) throws -> [(id: String, vector: [Float])] {
        try Row.fetchAll(db, sql: """
            SELECT m.id, v.data FROM memories m
            JOIN snippets sn ON sn.source_id = m.source_id
            JOIN vectors v ON v.snippet_id = sn.id
            JOIN embedders e ON e.id = v.embedder_id
            WHERE m.scope = ? AND m.superseded_by IS NULL AND e.name = ? AND m.id != ?
            ORDER BY m.id
            """, arguments: [scope.name, embedder.name, id ?? ""]).compactMap { row in
            VectorCoding.decode(row[1], dimension: embedder.dimension).map { (row[0], $0) }
        }
    }

    /// Writes the source, snippet, vector and memory row of `write`, in the caller's transaction.
    static func storeMemory(_ write: MemoryWrite, history: [MemoryVersion], _ db: Database) throws -> WriteEffect {
        if let vector = write.vector {
            guard vector.count == write.embedder.dimension else {
                throw KBError(.embedding, "\(write.embedder.name) returned a \(vector.count)-dim vector; the index holds \(write.embedder.dimension)-dim vectors.")
            }
        }
        try recordEmbedder(write.vector == nil ? .none : write.embedder, db)
        let effect = try replace(write.document, ingestedAt: write.memory.updatedAt, in: db)
        if let vector = write.vector {
            try db.execute(sql: "INSERT INTO vectors (snippet_id, embedder_id, data) VALUES (?, ?, ?)",
                           arguments: [effect.insertedSnippets[0], try embedderID(write.embedder, db), VectorCoding.encode(vector)])
        }
        let m = write.memory
        do {
            try db.execute(sql: """
                INSERT INTO memories (id, source_id, scope, title, content, content_key, tags, created_at, updated_at, version, superseded_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET
                    scope = excluded.scope, title = excluded.title, content = excluded.content, content_key = excluded.content_key,
                    tags = excluded.tags, created_at = excluded.created_at, updated_at = excluded.updated_at,
                    version = excluded.version, superseded_by = excluded.superseded_by
                """, arguments: [
                    m.id, effect.sourceID, m.scope.name, m.title, m.content, write.contentKey, m.tags.map(\.name).joined(separator: "\n"),
                    m.createdAt.timeIntervalSince1970, m.updatedAt.timeIntervalSince1970, m.version, m.supersededBy,
                ])
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            let other = try current(contentKey: write.contentKey, scope: m.scope, db)
            throw KBError(.conflict,
                "The memory \(other?.id ?? "?") in scope \(m.scope) already holds this content. Update or delete that one instead.")
        }
        try db.execute(sql: "DELETE FROM memory_versions WHERE memory_id = ?", arguments: [m.id])
        for v in history { try insertVersion(v, of: m.id, db) }
        return effect
    }

    static func insertVersion(_ v: MemoryVersion, of id: String, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO memory_versions (memory_id, version, title, content, tags, updated_at) VALUES (?, ?, ?, ?, ?, ?)
            """, arguments: [id, v.version, v.title, v.content, v.tags.map(\.name).joined(separator: "\n"), v.updatedAt.timeIntervalSince1970])
    }

    // The rules are MemoryTransaction's; each call is one write transaction.

    public func addMemory(_ write: MemoryWrite, superseding: String?) async throws -> MemoryAddOutcome {
        try await self.write { db in try SQLiteMemoryTransaction(db: db).addMemory(write, superseding: superseding) }
    }

    public func updateMemory(_ write: MemoryWrite, expectedVersion: Int) async throws -> WriteEffect {
        try await self.write { db in try SQLiteMemoryTransaction(db: db).updateMemory(write, expectedVersion: expectedVersion) }
    }

    public func deleteMemory(_ idOrPrefix: String) async throws -> (memory: Memory, effect: WriteEffect) {
        try await write { db in try SQLiteMemoryTransaction(db: db).deleteMemory(idOrPrefix) }
    }

    public func importMemory(_ write: MemoryWrite, history: [MemoryVersion], replacing: Bool) async throws -> (MemoryImportOutcome, WriteEffect?) {
        try await self.write { db in try SQLiteMemoryTransaction(db: db).importMemory(write, history: history, replacing: replacing) }
    }
}

/// The steps of memory writes in one SQLite write transaction.
struct SQLiteMemoryTransaction: MemoryTransaction {
    let db: Database

    func resolveMemoryID(_ idOrPrefix: String) throws -> String { try SQLiteStore.resolveMemoryID(idOrPrefix, db) }
    func fetchMemory(id: String) throws -> Memory? { try SQLiteStore.fetchMemory(id: id, db) }
    func currentMemory(contentKey: String, scope: MemoryScope) throws -> Memory? { try SQLiteStore.current(contentKey: contentKey, scope: scope, db) }
    func memoryHistory(_ id: String) throws -> [MemoryVersion] { try SQLiteStore.history(id, db) }

    func memoriesSuperseded(by id: String) throws -> [(id: String, scope: MemoryScope, contentKey: String)] {
        try Row.fetchAll(db, sql: "SELECT id, scope, content_key FROM memories WHERE superseded_by = ? ORDER BY id", arguments: [id])
            .map { (id: $0["id"], scope: try MemoryScope($0["scope"] as String), contentKey: $0["content_key"]) }
    }

    func setSupersededBy(_ newer: String?, of id: String) throws {
        try db.execute(sql: "UPDATE memories SET superseded_by = ? WHERE id = ?", arguments: [newer, id])
    }

    func memoryVectors(scope: MemoryScope, embedder: EmbedderRecord, excluding id: String?) throws -> [(id: String, vector: [Float])] {
        try SQLiteStore.memoryVectors(scope: scope, embedder: embedder, excluding: id, db)
    }

    func storeMemory(_ write: MemoryWrite, history: [MemoryVersion]) throws -> WriteEffect {
        try SQLiteStore.storeMemory(write, history: history, db)
    }

    func deleteMemorySource(_ memory: Memory) throws -> [Int64] {
        let removed = try SQLiteStore.snippetIDs(ofPath: memory.sourcePath, db)
        try db.execute(sql: "DELETE FROM sources WHERE path = ?", arguments: [memory.sourcePath])
        return removed
    }

    func finishDelete() throws -> Int64 {
        let generation = try SQLiteStore.bumpGeneration(db)
        try SQLiteStore.deleteUnusedTags(db)
        return generation
    }
}

extension SQLiteStore.Snapshot {
    /// The memory with this id (or unique id prefix).
    public func memory(_ idOrPrefix: String) throws -> Memory {
        let id = try SQLiteStore.resolveMemoryID(idOrPrefix, db)
        guard let memory = try SQLiteStore.fetchMemory(id: id, db) else {
            throw KBError(.notFound, "The memory \(id) was deleted while it was being read.")
        }
        return memory
    }

    /// Memories, oldest first; `scopes` empty means all; every tag must be present.
    public func memories(scopes: [MemoryScope] = [], tags: [Tag] = [], includeSuperseded: Bool = false) throws -> [Memory] {
        var sql = "SELECT \(SQLiteStore.memoryColumns) FROM memories m WHERE 1"
        var arguments = StatementArguments()
        if !includeSuperseded { sql += " AND superseded_by IS NULL" }
        if !scopes.isEmpty {
            sql += " AND scope IN (\(scopes.map { _ in "?" }.joined(separator: ", ")))"
            arguments += StatementArguments(scopes.map(\.name))
        }
        for tag in tags {
            sql += " AND m.source_id IN (SELECT st.source_id FROM source_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = ?)"
            arguments += [tag.name]
        }
        sql += " ORDER BY created_at, id"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map(SQLiteStore.memory)
    }

    /// Memories by the index path of their source (`memory:ID`).
    public func memories(sourcePaths paths: [String]) throws -> [String: Memory] {
        let ids = paths.compactMap { $0.hasPrefix("memory:") ? String($0.dropFirst(7)) : nil }
        var result: [String: Memory] = [:]
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let list = SQLiteStore.inList(Array(ids[chunk..<min(chunk + 500, ids.count)]))
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(SQLiteStore.memoryColumns) FROM memories WHERE id IN (\(list.sql))
                """), arguments: list.arguments) {
                let memory = try SQLiteStore.memory(row)
                result[memory.sourcePath] = memory
            }
        }
        return result
    }

    /// Earlier versions of a memory, oldest first.
    public func memoryHistory(_ id: String) throws -> [MemoryVersion] { try SQLiteStore.history(id, db) }

    /// The current memory of a scope that holds this content key, if any.
    public func memory(contentKey: String, scope: MemoryScope) throws -> Memory? {
        try SQLiteStore.current(contentKey: contentKey, scope: scope, db)
    }
}

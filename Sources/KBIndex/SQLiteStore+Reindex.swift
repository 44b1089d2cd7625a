public import Foundation
import GRDB
public import KBCore

extension SQLiteStore.Snapshot {
    /// Up to `limit` snippets (id and text) that have no vector from `embedder` yet.
    public func snippetsWithoutVectors(embedder: EmbedderRecord, limit: Int) throws -> [SnippetText] {
        let embedderID = try Int64.fetchOne(db, sql: "SELECT id FROM embedders WHERE name = ?", arguments: [embedder.name]) ?? -1
        return try Row.fetchAll(db, sql: """
            SELECT sn.id, sn.text FROM snippets sn
            WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.snippet_id = sn.id AND v.embedder_id = ?)
            ORDER BY sn.id LIMIT ?
            """, arguments: [embedderID, limit]).map { SnippetText(id: $0[0], text: $0[1]) }
    }
}

/// A snippet's id and text.
public struct SnippetText: Sendable, Hashable {
    public var id: Int64
    public var text: String

    public init(id: Int64, text: String) {
        self.id = id
        self.text = text
    }
}

extension SQLiteStore {
    /// Stores vectors of another embedder beside the current ones, without changing which
    /// embedder the index searches with. Snippets deleted meanwhile are skipped.
    public func addVectors(embedder: EmbedderRecord, _ entries: [(id: Int64, vector: [Float])]) async throws {
        if let bad = entries.first(where: { $0.vector.count != embedder.dimension }) {
            throw KBError(.embedding, "\(embedder.name) returned a \(bad.vector.count)-dim vector; it gave \(embedder.dimension)-dim vectors before.")
        }
        let entries = entries.map { SnippetVector(id: $0.id, vector: $0.vector) }
        try await write { db in
            let embedderID = try Self.embedderID(embedder, db)
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO vectors (snippet_id, embedder_id, data)
                SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM snippets WHERE id = ?)
                """)
            for entry in entries { try insert.execute(arguments: [entry.id, embedderID, VectorCoding.encode(entry.vector), entry.id]) }
        }
    }

    /// Makes `embedder` the one the index searches with, in one transaction, once every snippet
    /// has its vector; with `dropOthers`, other embedders' vectors are deleted. Returns false (and
    /// changes nothing) when some snippet still lacks a vector.
    public func switchEmbedder(to embedder: EmbedderRecord, dropOthers: Bool) async throws -> Bool {
        try await write { db in
            let embedderID = try Self.embedderID(embedder, db)
            let missing = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM snippets sn WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.snippet_id = sn.id AND v.embedder_id = ?)
                """, arguments: [embedderID]) ?? 0
            guard missing == 0 else { return false }
            for (key, value) in [("embedder", embedder.name), ("dimension", String(embedder.dimension)), ("embedder_spec", embedder.spec)] {
                try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               arguments: [key, value])
            }
            if dropOthers {
                try db.execute(sql: "DELETE FROM vectors WHERE embedder_id != ?", arguments: [embedderID])
                try db.execute(sql: "DELETE FROM embedders WHERE id != ?", arguments: [embedderID])
            }
            try Self.bumpGeneration(db)
            return true
        }
    }
}

/// A snippet's id and a vector (a Sendable pair for write closures).
struct SnippetVector: Sendable {
    var id: Int64
    var vector: [Float]
}

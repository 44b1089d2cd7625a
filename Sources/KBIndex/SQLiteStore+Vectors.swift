public import Foundation
import GRDB
public import KBCore

/// The embedder an index uses for its vectors, as `kb_meta` records it.
public struct EmbedderRecord: Sendable, Hashable, Codable {
    /// The embedder's id (`all-MiniLM-L6-v2`), or `none` for a keyword-only index.
    public var name: String
    /// Vector length; 0 for `none`.
    public var dimension: Int
    /// How to make the embedder again (`local`, `none`, `hashing`).
    public var spec: String

    public init(name: String, dimension: Int, spec: String) {
        self.name = name
        self.dimension = dimension
        self.spec = spec
    }

    public static let none = EmbedderRecord(name: "none", dimension: 0, spec: "none")

    /// Checks that `vectors` holds one vector of this embedder's dimension per snippet of
    /// `document` (nil, for a keyword-only index, passes).
    public func check(_ vectors: [[Float]]?, for document: SourceDocument) throws {
        guard let vectors else { return }
        guard vectors.count == document.snippets.count else {
            throw KBError(.embedding, "\(document.source.path): \(vectors.count) vectors for \(document.snippets.count) snippets.")
        }
        if let bad = vectors.first(where: { $0.count != dimension }) {
            throw KBError(.embedding, "\(name) returned a \(bad.count)-dim vector; the index holds \(dimension)-dim vectors.")
        }
    }
}

extension SQLiteStore.Snapshot {
    /// The embedder recorded in `kb_meta`, or nil for an index nothing was ingested into yet.
    public func embedderRecord() throws -> EmbedderRecord? { try SQLiteStore.embedderRecord(db) }

    /// Checks that vectors from `record` may be written into this index (before any work is done).
    public func checkEmbedder(_ record: EmbedderRecord) throws {
        if let existing = try embedderRecord(), existing.name != record.name || existing.dimension != record.dimension {
            throw KBError(.embedderMismatch, SQLiteStore.mismatchMessage(index: existing, requested: record))
        }
    }

    /// Vectors the index already holds for a source, keyed by snippet text: what a changed
    /// file can reuse for the paragraphs that did not change.
    public func vectorsByText(path: String, embedder: String) throws -> [String: [Float]] {
        guard let dimension = try Int.fetchOne(db, sql: "SELECT dimension FROM embedders WHERE name = ?", arguments: [embedder]) else { return [:] }
        let rows = try Row.fetchAll(db, sql: """
            SELECT sn.text, v.data FROM snippets sn
            JOIN sources so ON so.id = sn.source_id
            JOIN vectors v ON v.snippet_id = sn.id
            JOIN embedders e ON e.id = v.embedder_id
            WHERE so.path = ? AND e.name = ?
            """, arguments: [path, embedder])
        var result: [String: [Float]] = [:]
        for row in rows {
            if let vector = VectorCoding.decode(row[1], dimension: dimension) { result[row[0]] = vector }
        }
        return result
    }

    /// How many vectors each embedder has in the index.
    public func vectorCounts() throws -> [String: Int] {
        try Row.fetchAll(db, sql: """
            SELECT e.name, count(v.snippet_id) FROM embedders e LEFT JOIN vectors v ON v.embedder_id = e.id GROUP BY e.id
            """).reduce(into: [String: Int]()) { $0[$1[0]] = $1[1] }
    }
}

extension SQLiteStore {
    static func embedderRecord(_ db: Database) throws -> EmbedderRecord? {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM kb_meta WHERE key IN ('embedder', 'dimension', 'embedder_spec')"))
        let values = rows.reduce(into: [String: String]()) { $0[$1["key"]] = $1["value"] }
        guard let name = values["embedder"] else { return nil }
        return EmbedderRecord(name: name, dimension: Int(values["dimension"] ?? "0") ?? 0, spec: values["embedder_spec"] ?? name)
    }

    /// Records the index's embedder, unless one is recorded already (then it must be the same).
    static func recordEmbedder(_ record: EmbedderRecord, _ db: Database) throws {
        if let existing = try embedderRecord(db) {
            guard existing.name == record.name, existing.dimension == record.dimension else {
                throw KBError(.embedderMismatch, mismatchMessage(index: existing, requested: record))
            }
            return
        }
        for (key, value) in [("embedder", record.name), ("dimension", String(record.dimension)), ("embedder_spec", record.spec)] {
            try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           arguments: [key, value])
        }
    }

    public static func mismatchMessage(index: EmbedderRecord, requested: EmbedderRecord) -> String {
        if index.name == "none" {
            return "The index was built without embeddings (--embedder none), so '\(requested.name)' cannot add vectors to it. "
                + "Ingest with --embedder none, or start a new index with --db."
        }
        if requested.name == "none" {
            return "The index holds \(index.dimension)-dim vectors from '\(index.name)'; ingesting with --embedder none would leave new snippets without vectors. "
                + "Ingest with --embedder \(index.spec), or start a new index with --db."
        }
        return "The index holds \(index.dimension)-dim vectors from '\(index.name)', but '\(requested.name)' returns \(requested.dimension). "
            + "Use --embedder \(index.spec) with this index, run `kb reindex --embedder \(requested.spec.hasPrefix("openai:") ? "openai:…" : requested.spec)` to switch it, or build a new index with --db."
    }

    static func embedderID(_ record: EmbedderRecord, _ db: Database) throws -> Int64 {
        try db.execute(sql: "INSERT INTO embedders (name, dimension, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       arguments: [record.name, record.dimension, Date().timeIntervalSince1970])
        return try Int64.fetchOne(db, sql: "SELECT id FROM embedders WHERE name = ?", arguments: [record.name])!
    }

    /// Stores a source, its snippets and their vectors in one transaction. `vectors` holds
    /// one vector per snippet, in order, from `embedder`; pass nil for a keyword-only index.
    @discardableResult
    public func replace(_ document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord, ingestedAt: Date) async throws -> WriteEffect {
        try embedder.check(vectors, for: document)
        return try await write { db in
            try Self.recordEmbedder(vectors == nil ? .none : embedder, db)
            let effect = try Self.replace(document, ingestedAt: ingestedAt, in: db)
            guard let vectors else { return effect }
            let embedderID = try Self.embedderID(embedder, db)
            let insert = try db.cachedStatement(sql: "INSERT INTO vectors (snippet_id, embedder_id, data) VALUES (?, ?, ?)")
            for (id, vector) in zip(effect.insertedSnippets, vectors) {
                try insert.execute(arguments: [id, embedderID, VectorCoding.encode(vector)])
            }
            return effect
        }
    }
}

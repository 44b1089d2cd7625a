public import Foundation
import GRDB
public import KBCore
public import KBStore

extension SQLiteStore.Snapshot {
    public func source(path: String) throws -> Source? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM sources WHERE path = ?", arguments: [path]) else { return nil }
        let id: Int64 = row["id"]
        let tags = try String.fetchAll(db, sql: """
            SELECT t.name FROM source_tags st JOIN tags t ON t.id = st.tag_id WHERE st.source_id = ? ORDER BY t.name
            """, arguments: [id]).map { Tag($0) }
        let keywords: String = row["keywords"]
        return Source(
            path: row["path"], kind: SourceKind(rawValue: row["kind"]) ?? .note, title: row["title"], contentHash: row["content_hash"],
            size: row["size"], modifiedAt: (row["modified_at"] as Double?).map(Date.init(timeIntervalSince1970:)), tags: tags,
            keywords: keywords.isEmpty ? [] : keywords.components(separatedBy: "\n"), ocr: row["ocr"], owner: row["owner"])
    }

    public func embedderDimensions() throws -> [(name: String, dimension: Int)] {
        try Row.fetchAll(db, sql: """
            SELECT name, dimension FROM embedders e WHERE EXISTS (SELECT 1 FROM vectors v WHERE v.embedder_id = e.id) ORDER BY name
            """).map { ($0[0], $0[1]) }
    }

    public func cacheEntries(embedder: EmbedderRecord) throws -> [(hash: Data, vector: [Float])] {
        try Row.fetchAll(db, sql: "SELECT text_hash, data FROM embedding_cache WHERE embedder = ? ORDER BY text_hash", arguments: [embedder.name])
            .compactMap { row in VectorCoding.decode(row[1], dimension: embedder.dimension).map { (row[0], $0) } }
    }
}

extension SQLiteStore.Snapshot {
    public func jobChunks(id: String) throws -> [Data] {
        try Data.fetchAll(db, sql: "SELECT data FROM job_chunks WHERE job_id = ? ORDER BY seq", arguments: [id])
    }

    public func unfinishedJobs() throws -> [StoredJob] {
        try Row.fetchAll(db, sql: "SELECT * FROM jobs WHERE state IN ('receiving', 'queued', 'running') ORDER BY created_at, id")
            .map(SQLiteStore.job)
    }
}

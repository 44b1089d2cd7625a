import Foundation
import GRDB
public import KBCore
public import KBStore

extension SQLiteStore.Snapshot {
    /// Content hashes of stored sources, by path: what ingest compares files against.
    public func contentHashes() throws -> [String: String] {
        var result: [String: String] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT path, content_hash FROM sources")
        while let row = try rows.next() { result[row["path"]] = row["content_hash"] }
        return result
    }

    /// Paths of stored sources that start with `prefix`.
    public func sourcePaths(under prefix: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT path FROM sources WHERE substr(path, 1, ?) = ? ORDER BY path",
                            arguments: [prefix.unicodeScalars.count, prefix])
    }

    /// Every stored source, by path, with its snippet count and tags.
    public func sources() throws -> [StoredSource] {
        var tagsBySource: [Int64: [Tag]] = [:]
        for row in try Row.fetchAll(db, sql: """
            SELECT st.source_id, t.name FROM source_tags st JOIN tags t ON t.id = st.tag_id ORDER BY t.name
            """) {
            tagsBySource[row[0], default: []].append(Tag(row[1] as String))
        }
        return try Row.fetchAll(db, sql: """
            SELECT s.*, (SELECT count(*) FROM snippets n WHERE n.source_id = s.id) AS snippet_count,
                   (SELECT avg(n.ocr_confidence) FROM snippets n WHERE n.source_id = s.id) AS ocr_confidence
            FROM sources s ORDER BY s.path
            """).map { row in
            let id: Int64 = row["id"]
            return StoredSource(
                id: id, path: row["path"], kind: SourceKind(rawValue: row["kind"]) ?? .note,
                title: row["title"], contentHash: row["content_hash"], size: row["size"],
                modifiedAt: (row["modified_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
                ingestedAt: Date(timeIntervalSince1970: row["ingested_at"]),
                snippetCount: row["snippet_count"], tags: tagsBySource[id] ?? [], ocr: row["ocr"],
                ocrConfidence: row["ocr_confidence"], owner: row["owner"])
        }
    }

    /// The language keyword search is tuned for (`kb_meta` `language`; English by default).
    public func keywordLanguage() throws -> KeywordLanguage {
        try SQLiteStore.keywordLanguage(recorded: try meta(SQLiteStore.languageKey))
    }

    /// How OCR read each source it read (`Source.ocr`), by path.
    public func ocrRecords() throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT path, ocr FROM sources WHERE ocr IS NOT NULL") { result[row[0]] = row[1] }
        return result
    }

    public func pagedSources() throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT so.path FROM sources so JOIN source_pages p ON p.source_id = so.id"))
    }

    /// Pages recognised earlier in the file with this hash, with the same settings.
    public func ocrPages(contentHash: String, key: String) throws -> [OCRPage] {
        try Row.fetchAll(db, sql: """
            SELECT page, text, confidence, words, quarter_turns FROM ocr_pages WHERE content_hash = ? AND settings = ? ORDER BY page
            """, arguments: [contentHash, key]).map { row in
            OCRPage(page: row[0], text: row[1], confidence: row[2], words: row[3], quarterTurns: row[4])
        }
    }

    /// Counts and size on disk.
    public func status() throws -> IndexStatus {
        let byKind = try Row.fetchAll(db, sql: "SELECT kind, count(*) FROM sources GROUP BY kind")
            .reduce(into: [String: Int]()) { $0[$1[0]] = $1[1] }
        let snippets = try Int.fetchOne(db, sql: "SELECT count(*) FROM snippets") ?? 0
        let tags = try Int.fetchOne(db, sql: "SELECT count(*) FROM tags") ?? 0
        let version = try meta("schema_version").flatMap(Int.init) ?? 0
        let size = ["", "-wal", "-shm"].reduce(Int64(0)) { total, suffix in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + suffix)
            return total + ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
        var status = IndexStatus(
            path: path, schemaVersion: version, sources: byKind.values.reduce(0, +), sourcesByKind: byKind,
            snippets: snippets, tags: tags, embedder: try embedderRecord(), vectors: try vectorCounts(),
            tokensUsed: try tokensUsed(), cachedVectors: try cachedVectorCounts(), sizeOnDisk: size)
        status.keywordLanguage = try keywordLanguage().rawValue
        status.setLanguages(try Row.fetchAll(db, sql: """
            SELECT substr(t.name, 6), count(*) FROM snippet_tags st JOIN tags t ON t.id = st.tag_id
            WHERE t.name LIKE 'lang:%' GROUP BY t.name
            """).reduce(into: [String: Int]()) { $0[$1[0]] = $1[1] })
        return status
    }
}

extension SQLiteStore {
    /// The `kb_meta` key of the keyword language.
    static let languageKey = "language"

    /// The keyword language an index records (English when it records none). A value this kb
    /// does not know is an error naming it, not a silent English.
    static func keywordLanguage(recorded: String?) throws -> KeywordLanguage {
        guard let recorded else { return .english }
        do {
            return try KeywordLanguage(recorded)
        } catch {
            throw KBError(.newerSchema,
                "The index records the keyword language '\(recorded)', which this kb does not know. Upgrade kb, or rebuild the keyword index with `kb ingest --language LANGUAGE`.")
        }
    }

    /// Tunes keyword search for `language`: the keyword table is rebuilt with that language's
    /// tokenizer from the stored snippets, in one transaction. False when it already was.
    @discardableResult
    public func setKeywordLanguage(_ language: KeywordLanguage) async throws -> Bool {
        try await transaction { transaction in
            let db = transaction.db
            guard try SQLiteStore.keywordLanguage(recorded: try transaction.meta(SQLiteStore.languageKey)) != language else { return false }
            try db.execute(sql: """
                DROP TABLE snippets_fts;
                CREATE VIRTUAL TABLE snippets_fts USING fts5(text, title, heading_path, keywords, tokenize = '\(language.ftsTokenizer)');
                INSERT INTO snippets_fts (rowid, text, title, heading_path, keywords)
                    SELECT sn.id, sn.text, so.title, sn.heading_path, so.keywords FROM snippets sn JOIN sources so ON so.id = sn.source_id;
                """)
            try transaction.setMeta(SQLiteStore.languageKey, language.rawValue)
            transaction.noteKeywordTableRebuilt()
            _ = try transaction.bumpGeneration()
            return true
        }
    }

    /// Keyword search can be tuned for another language at any time: the keyword table is rebuilt.
    public var retunesKeywordLanguage: Bool { true }
}

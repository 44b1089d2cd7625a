public import Foundation
import GRDB
public import KBCore

extension SQLiteStore.Snapshot {
    /// Content hashes of stored sources, by path: what ingest compares files against.
    public func contentHashes() throws -> [String: String] {
        var result: [String: String] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT path, content_hash FROM sources")
        while let row = try rows.next() { result[row["path"]] = row["content_hash"] }
        return result
    }

    /// The write counter (see `SQLiteStore.bumpGeneration`).
    public func generation() throws -> Int64 { try SQLiteStore.generation(db) }

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
            SELECT s.*, (SELECT count(*) FROM snippets n WHERE n.source_id = s.id) AS snippet_count
            FROM sources s ORDER BY s.path
            """).map { row in
            let id: Int64 = row["id"]
            return StoredSource(
                id: id, path: row["path"], kind: SourceKind(rawValue: row["kind"]) ?? .note,
                title: row["title"], contentHash: row["content_hash"], size: row["size"],
                modifiedAt: (row["modified_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
                ingestedAt: Date(timeIntervalSince1970: row["ingested_at"]),
                snippetCount: row["snippet_count"], tags: tagsBySource[id] ?? [], ocr: row["ocr"])
        }
    }

    /// The language keyword search is tuned for (`kb_meta` `language`; English by default).
    public func keywordLanguage() throws -> KeywordLanguage {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM kb_meta WHERE key = 'language'")).flatMap { try? KeywordLanguage($0) } ?? .english
    }

    /// How OCR read each source it read (`Source.ocr`), by path.
    public func ocrRecords() throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT path, ocr FROM sources WHERE ocr IS NOT NULL") { result[row[0]] = row[1] }
        return result
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
        let version = try String.fetchOne(db, sql: "SELECT value FROM kb_meta WHERE key = 'schema_version'").flatMap(Int.init) ?? 0
        let size = ["", "-wal", "-shm"].reduce(Int64(0)) { total, suffix in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + suffix)
            return total + ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
        var status = IndexStatus(
            path: path, schemaVersion: version, sources: byKind.values.reduce(0, +), sourcesByKind: byKind,
            snippets: snippets, tags: tags, embedder: try embedderRecord(), vectors: try vectorCounts(),
            tokensUsed: try tokensUsed(), cachedVectors: try cachedVectorCounts(), sizeOnDisk: size)
        status.keywordLanguage = try keywordLanguage().rawValue
        return status
    }
}

extension SQLiteStore {
    /// Stores a source and its snippets in one transaction, replacing whatever the index held
    /// for the same path. On any error nothing changes.
    @discardableResult
    public func replace(_ document: SourceDocument, ingestedAt: Date = Date()) async throws -> WriteEffect {
        try await write { db in try Self.replace(document, ingestedAt: ingestedAt, in: db) }
    }

    static func replace(_ document: SourceDocument, ingestedAt: Date, in db: Database) throws -> WriteEffect {
        let source = document.source
        try db.execute(sql: """
            INSERT INTO sources (path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET
                kind = excluded.kind, title = excluded.title, content_hash = excluded.content_hash,
                size = excluded.size, modified_at = excluded.modified_at,
                ingested_at = excluded.ingested_at, keywords = excluded.keywords, ocr = excluded.ocr
            """,
            arguments: [source.path, source.kind.rawValue, source.title, source.contentHash, source.size,
                        source.modifiedAt?.timeIntervalSince1970, ingestedAt.timeIntervalSince1970,
                        source.keywords.joined(separator: "\n"), source.ocr])
        guard let sourceID = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE path = ?", arguments: [source.path]) else {
            throw KBError(.database, "The source \(source.path) vanished while it was being written.")
        }
        var effect = WriteEffect(sourceID: sourceID)
        effect.removedSnippets = try Int64.fetchAll(db, sql: "SELECT id FROM snippets WHERE source_id = ?", arguments: [sourceID])
        try db.execute(sql: "DELETE FROM snippets WHERE source_id = ?", arguments: [sourceID])
        try db.execute(sql: "DELETE FROM source_tags WHERE source_id = ?", arguments: [sourceID])

        var tagIDs: [Tag: Int64] = [:]
        func tagID(_ tag: Tag) throws -> Int64 {
            if let id = tagIDs[tag] { return id }
            try db.cachedStatement(sql: "INSERT INTO tags (name) VALUES (?) ON CONFLICT(name) DO NOTHING").execute(arguments: [tag.name])
            let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM tags WHERE name = ?"), arguments: [tag.name])!
            tagIDs[tag] = id
            return id
        }
        let sourceTag = try db.cachedStatement(sql: "INSERT OR IGNORE INTO source_tags (source_id, tag_id) VALUES (?, ?)")
        for tag in source.tags { try sourceTag.execute(arguments: [sourceID, tagID(tag)]) }

        let insertSnippet = try db.cachedStatement(sql: """
            INSERT INTO snippets (source_id, ordinal, text, start_offset, end_offset, heading_path,
                                  page_start, page_end, page_label_start, page_label_end, ocr_confidence)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let snippetTag = try db.cachedStatement(sql: "INSERT OR IGNORE INTO snippet_tags (snippet_id, tag_id) VALUES (?, ?)")
        for snippet in document.snippets {
            try insertSnippet.execute(arguments: [
                sourceID, snippet.ordinal, snippet.text, snippet.start, snippet.end, snippet.headingPathString,
                snippet.pages?.start, snippet.pages?.end, snippet.pages?.startLabel, snippet.pages?.endLabel, snippet.ocr?.confidence,
            ])
            let snippetID = db.lastInsertedRowID
            effect.insertedSnippets.append(snippetID)
            for tag in snippet.tags { try snippetTag.execute(arguments: [snippetID, tagID(tag)]) }
        }
        effect.generation = try Self.bumpGeneration(db)
        return effect
    }

    /// Counts every write that changes snippets or vectors, so that a process holding vectors in
    /// memory can tell whether another process changed the index since it loaded them.
    @discardableResult
    static func bumpGeneration(_ db: Database) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO kb_meta (key, value) VALUES ('generation', '1')
            ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
            """)
        return try generation(db)
    }

    static func generation(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM kb_meta WHERE key = 'generation'")) ?? 0
    }

    /// Tunes keyword search for `language`: the keyword table is rebuilt with that language's
    /// tokenizer from the stored snippets, in one transaction. False when it already was.
    @discardableResult
    public func setKeywordLanguage(_ language: KeywordLanguage) async throws -> Bool {
        try await write { db in
            let current = try String.fetchOne(db, sql: "SELECT value FROM kb_meta WHERE key = 'language'").flatMap { try? KeywordLanguage($0) } ?? .english
            guard current != language else { return false }
            try db.execute(sql: """
                DROP TABLE snippets_fts;
                CREATE VIRTUAL TABLE snippets_fts USING fts5(text, title, heading_path, keywords, tokenize = '\(language.ftsTokenizer)');
                INSERT INTO snippets_fts (rowid, text, title, heading_path, keywords)
                    SELECT sn.id, sn.text, so.title, sn.heading_path, so.keywords FROM snippets sn JOIN sources so ON so.id = sn.source_id;
                INSERT INTO kb_meta (key, value) VALUES ('language', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value;
                """, arguments: [language.rawValue])
            try Self.bumpGeneration(db)
            return true
        }
    }

    /// Keeps one recognised page (see `ocrPages`).
    public func cacheOCRPage(_ page: OCRPage, contentHash: String, key: String) async throws {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO ocr_pages (content_hash, settings, page, text, confidence, words, quarter_turns) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (content_hash, settings, page) DO UPDATE SET
                    text = excluded.text, confidence = excluded.confidence, words = excluded.words, quarter_turns = excluded.quarter_turns
                """, arguments: [contentHash, key, page.page, page.text, page.confidence, page.words, page.quarterTurns])
        }
    }

    /// Records a new modification time for a source whose content did not change.
    public func touch(path: String, modifiedAt: Date?) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE sources SET modified_at = ? WHERE path = ?",
                           arguments: [modifiedAt?.timeIntervalSince1970, path])
        }
    }

    /// Removes sources by exact path, or every source under a folder path. Returns the removed paths.
    @discardableResult
    public func removeSources(matching paths: [String]) async throws -> (paths: [String], effect: WriteEffect) {
        try await write { db in
            var removed: [String] = []
            var effect = WriteEffect()
            for path in paths {
                let folder = path.folderPrefix
                let matches = try String.fetchAll(db, sql: """
                    SELECT path FROM sources WHERE path = ? OR substr(path, 1, ?) = ?
                    """, arguments: [path, folder.unicodeScalars.count, folder])
                for match in matches where !removed.contains(match) {
                    effect.removedSnippets += try Self.snippetIDs(ofPath: match, db)
                    try db.execute(sql: "DELETE FROM sources WHERE path = ?", arguments: [match])
                    removed.append(match)
                }
            }
            if !removed.isEmpty { effect.generation = try Self.bumpGeneration(db) }
            try Self.deleteUnusedTags(db)
            return (removed, effect)
        }
    }

    static func snippetIDs(ofPath path: String, _ db: Database) throws -> [Int64] {
        try Int64.fetchAll(db, sql: "SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE so.path = ? ORDER BY sn.ordinal",
                           arguments: [path])
    }

    /// Removes sources by exact path. Returns how many were removed.
    @discardableResult
    public func removeSources(exactly paths: [String]) async throws -> (count: Int, effect: WriteEffect) {
        try await write { db in
            var count = 0
            var effect = WriteEffect()
            for path in paths {
                effect.removedSnippets += try Self.snippetIDs(ofPath: path, db)
                try db.execute(sql: "DELETE FROM sources WHERE path = ?", arguments: [path])
                count += db.changesCount
            }
            if count > 0 { effect.generation = try Self.bumpGeneration(db) }
            try Self.deleteUnusedTags(db)
            return (count, effect)
        }
    }

    /// Drops tags no source or snippet uses any more.
    public func deleteUnusedTags() async throws {
        try await write { db in try Self.deleteUnusedTags(db) }
    }

    static func deleteUnusedTags(_ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM tags WHERE id NOT IN (SELECT tag_id FROM source_tags)
                               AND id NOT IN (SELECT tag_id FROM snippet_tags)
            """)
    }
}

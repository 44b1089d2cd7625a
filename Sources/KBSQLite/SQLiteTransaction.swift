public import Foundation
import GRDB
public import KBCore
public import KBStore

/// The steps of writes (`MemoryTransaction`) in one SQLite write transaction, and a log of what
/// they did to snippets and vectors, which the store's vectors in memory follow once the
/// transaction is committed.
///
/// Not Sendable: it lives inside one `SQLiteStore.transaction` call, on GRDB's writer queue.
public final class SQLiteTransaction: MemoryTransaction, SQLiteReads {
    /// What a transaction did that the vectors in memory must follow.
    struct Log {
        /// The generation before the transaction's first bump, and after its last; nil when it
        /// changed nothing searches see.
        var generationBefore: Int64?
        var generationAfter: Int64?
        var removedSnippets: [Int64] = []
        /// Snippets inserted (their keyword rows with them).
        var addedSnippets: [Int64] = []
        /// The keyword table was rebuilt (another language's tokenizer).
        var keywordsRebuilt = false
        /// Vectors written, by embedder name.
        var savedVectors: [String: [(id: Int64, vector: [Float])]] = [:]
        /// Which of the written vectors are memories' (kept in a matrix of their own).
        var memoryVectors: Set<Int64> = []
        /// The recorded embedder changed (a first ingest, a reindex).
        var embedderChanged = false
    }

    let db: Database
    private(set) var log = Log()

    init(db: Database) { self.db = db }

    /// Records that the keyword table was rebuilt: keyword postings in memory are rebuilt too.
    func noteKeywordTableRebuilt() { log.keywordsRebuilt = true }

    public func setMeta(_ key: String, _ value: String) throws {
        try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       arguments: [key, value])
        if key == EmbedderRecord.MetaKey.name || key == EmbedderRecord.MetaKey.dimension { log.embedderChanged = true }
    }

    static let bumpGenerationSQL = """
        INSERT INTO kb_meta (key, value) VALUES ('generation', '1')
        ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
        """

    /// Counts every write that changes snippets or vectors, so that a process holding vectors in
    /// memory can tell whether another process changed the index since it loaded them.
    public func bumpGeneration() throws -> Int64 {
        if log.generationBefore == nil { log.generationBefore = try generation() }
        try db.execute(sql: Self.bumpGenerationSQL)
        let after = try generation()
        log.generationAfter = after
        return after
    }

    // MARK: - Sources

    public func saveSource(_ source: Source, ingestedAt: Date) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO sources (path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr, owner)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET
                kind = excluded.kind, title = excluded.title, content_hash = excluded.content_hash,
                size = excluded.size, modified_at = excluded.modified_at,
                ingested_at = excluded.ingested_at, keywords = excluded.keywords, ocr = excluded.ocr, owner = excluded.owner
            """,
            arguments: [source.path, source.kind.rawValue, source.title, source.contentHash, source.size,
                        source.modifiedAt?.timeIntervalSince1970, ingestedAt.timeIntervalSince1970,
                        source.keywords.joined(separator: "\n"), source.ocr, source.owner])
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE path = ?", arguments: [source.path]) else {
            throw KBError(.database, "The source \(source.path) vanished while it was being written.")
        }
        return id
    }

    public func clearSource(id: Int64) throws -> [Int64] {
        let removed = try Int64.fetchAll(db, sql: "SELECT id FROM snippets WHERE source_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM snippets WHERE source_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM source_tags WHERE source_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM source_pages WHERE source_id = ?", arguments: [id])
        log.removedSnippets += removed
        return removed
    }

    public func insertContent(_ document: SourceDocument, sourceID: Int64) throws -> [Int64] {
        var tagIDs: [Tag: Int64] = [:]
        func tagID(_ tag: Tag) throws -> Int64 {
            if let id = tagIDs[tag] { return id }
            try db.cachedStatement(sql: "INSERT INTO tags (name) VALUES (?) ON CONFLICT(name) DO NOTHING").execute(arguments: [tag.name])
            guard let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM tags WHERE name = ?"), arguments: [tag.name]) else {
                throw KBError(.database, "The tag \(tag.name) vanished while it was being written.")
            }
            tagIDs[tag] = id
            return id
        }
        let sourceTag = try db.cachedStatement(sql: "INSERT OR IGNORE INTO source_tags (source_id, tag_id) VALUES (?, ?)")
        for tag in document.source.tags { try sourceTag.execute(arguments: [sourceID, tagID(tag)]) }
        if let pages = document.pageStarts, !pages.isEmpty {
            try db.execute(sql: "INSERT OR REPLACE INTO source_pages (source_id, starts) VALUES (?, ?)", arguments: [sourceID, pages.stored])
        }

        let insertSnippet = try db.cachedStatement(sql: """
            INSERT INTO snippets (source_id, ordinal, text, start_offset, end_offset, heading_path,
                                  page_start, page_end, page_label_start, page_label_end, ocr_confidence, weight)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let snippetTag = try db.cachedStatement(sql: "INSERT OR IGNORE INTO snippet_tags (snippet_id, tag_id) VALUES (?, ?)")
        var inserted: [Int64] = []
        inserted.reserveCapacity(document.snippets.count)
        for snippet in document.snippets {
            try insertSnippet.execute(arguments: [
                sourceID, snippet.ordinal, snippet.text, snippet.start, snippet.end, snippet.headingPathString,
                snippet.pages?.start, snippet.pages?.end, snippet.pages?.startLabel, snippet.pages?.endLabel, snippet.ocr?.confidence,
                snippet.weight,
            ])
            let snippetID = db.lastInsertedRowID
            inserted.append(snippetID)
            for tag in snippet.tags { try snippetTag.execute(arguments: [snippetID, tagID(tag)]) }
        }
        log.addedSnippets += inserted
        return inserted
    }

    public func sourcePaths(matching path: String) throws -> [String] {
        let folder = path.folderPrefix
        return try String.fetchAll(db, sql: "SELECT path FROM sources WHERE path = ? OR substr(path, 1, ?) = ? ORDER BY path",
                                   arguments: [path, folder.unicodeScalars.count, folder])
    }

    public func deleteSource(path: String) throws -> [Int64]? {
        let snippets = try snippetIDs(ofSource: path)
        try db.execute(sql: "DELETE FROM sources WHERE path = ?", arguments: [path])
        guard db.changesCount > 0 else { return nil }
        log.removedSnippets += snippets
        return snippets
    }

    public func insertRequestLog(_ entries: [RequestLogEntry]) throws {
        let statement = try db.cachedStatement(sql: "INSERT INTO request_log (" + RequestLogSQL.columns.joined(separator: ", ")
            + ") VALUES (" + RequestLogSQL.columns.map { _ in "?" }.joined(separator: ", ") + ")")
        for entry in entries {
            try statement.execute(arguments: [
                entry.at.timeIntervalSince1970, entry.route, entry.status, entry.requestID, entry.caller, entry.bot, entry.report,
                entry.userHash, entry.results, entry.tokens, entry.budget, entry.degraded ? 1 : 0, entry.latencyMilliseconds, entry.query,
            ])
        }
    }

    public func deleteRequestLog(before: Date) throws -> Int {
        try db.execute(sql: "DELETE FROM request_log WHERE at < ?", arguments: [before.timeIntervalSince1970])
        return db.changesCount
    }

    public func deleteUnusedTags() throws {
        try db.execute(sql: """
            DELETE FROM tags WHERE id NOT IN (SELECT tag_id FROM source_tags)
                               AND id NOT IN (SELECT tag_id FROM snippet_tags)
            """)
    }

    public func cacheOCRPage(_ page: OCRPage, contentHash: String, key: String) throws {
        try db.execute(sql: """
            INSERT INTO ocr_pages (content_hash, settings, page, text, confidence, words, quarter_turns) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (content_hash, settings, page) DO UPDATE SET
                text = excluded.text, confidence = excluded.confidence, words = excluded.words, quarter_turns = excluded.quarter_turns
            """, arguments: [contentHash, key, page.page, page.text, page.confidence, page.words, page.quarterTurns])
    }

    // MARK: - Vectors

    public func insertEmbedder(_ record: EmbedderRecord) throws {
        try db.execute(sql: "INSERT INTO embedders (name, dimension, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       arguments: [record.name, record.dimension, Date().timeIntervalSince1970])
    }

    public func saveVectors(_ entries: [(id: Int64, vector: [Float])], embedder: EmbedderRecord) throws {
        guard !entries.isEmpty else { return }
        let embedderID = try makeEmbedderID(embedder)
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO vectors (snippet_id, embedder_id, data)
            SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM snippets WHERE id = ?)
            """)
        var saved: [(id: Int64, vector: [Float])] = []
        saved.reserveCapacity(entries.count)
        for entry in entries {
            try insert.execute(arguments: [entry.id, embedderID, VectorCoding.encode(entry.vector), entry.id])
            if db.changesCount > 0 { saved.append(entry) }
        }
        log.savedVectors[embedder.name, default: []] += saved
        for chunk in stride(from: 0, to: saved.count, by: 500) {
            let list = SQLiteStore.inList(saved[chunk..<min(chunk + 500, saved.count)].map(\.id))
            log.memoryVectors.formUnion(try Int64.fetchAll(db, sql: """
                SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE so.kind = 'memory' AND sn.id IN (\(list.sql))
                """, arguments: list.arguments))
        }
    }

    public func cacheVectors(embedder: EmbedderRecord, _ entries: [(hash: Data, vector: [Float])], tokens: Int) throws {
        let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO embedding_cache (embedder, text_hash, data) VALUES (?, ?, ?)")
        for entry in entries { try insert.execute(arguments: [embedder.name, entry.hash, VectorCoding.encode(entry.vector)]) }
        if tokens > 0 {
            try db.execute(sql: """
                INSERT INTO embedder_usage (embedder, tokens) VALUES (?, ?)
                ON CONFLICT(embedder) DO UPDATE SET tokens = tokens + excluded.tokens
                """, arguments: [embedder.name, tokens])
        }
    }

    public func countSnippetsWithoutVectors(embedder: EmbedderRecord) throws -> Int {
        let embedderID = try embedderID(named: embedder.name) ?? -1
        return try Int.fetchOne(db, sql: """
            SELECT count(*) FROM snippets sn WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.snippet_id = sn.id AND v.embedder_id = ?)
            """, arguments: [embedderID]) ?? 0
    }

    public func deleteVectors(except embedder: EmbedderRecord) throws {
        let embedderID = try embedderID(named: embedder.name) ?? -1
        try db.execute(sql: "DELETE FROM vectors WHERE embedder_id != ?", arguments: [embedderID])
        try db.execute(sql: "DELETE FROM embedders WHERE id != ?", arguments: [embedderID])
    }

    public func moveVectors(from staging: EmbedderRecord, to embedder: EmbedderRecord) throws {
        guard let stagingID = try embedderID(named: staging.name) else { return }
        let embedderID = try makeEmbedderID(embedder)
        try db.execute(sql: "DELETE FROM vectors WHERE embedder_id = ?", arguments: [embedderID])
        try db.execute(sql: "UPDATE vectors SET embedder_id = ? WHERE embedder_id = ?", arguments: [embedderID, stagingID])
        try db.execute(sql: "DELETE FROM embedders WHERE id = ?", arguments: [stagingID])
    }

    // MARK: - Bots

    public func saveBot(_ bot: Bot) throws {
        try db.execute(sql: """
            INSERT INTO bots (name, system_prompt, sources, memory_scopes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET system_prompt = excluded.system_prompt, sources = excluded.sources,
                memory_scopes = excluded.memory_scopes, updated_at = excluded.updated_at
            """, arguments: [bot.name, bot.systemPrompt, try StoredForms.text(bot.sources),
                             bot.memoryScopes.joined(separator: "\n"), bot.createdAt.timeIntervalSince1970, bot.updatedAt.timeIntervalSince1970])
    }

    public func removeBot(named name: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM bots WHERE name = ?", arguments: [name])
        return db.changesCount > 0
    }

    // MARK: - Jobs

    public func insertJob(_ job: StoredJob) throws {
        try db.execute(sql: """
            INSERT INTO jobs (id, source, state, content_type, size, content_hash, title, tags, owner, bots, created_at, updated_at, heartbeat)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [job.job.id, job.job.source, job.job.state.rawValue, job.job.contentType, job.job.size, job.contentHash,
                             job.title, StoredForms.text(job.tags), job.owner, job.bots.joined(separator: "\n"),
                             job.job.createdAt.timeIntervalSince1970, job.job.updatedAt.timeIntervalSince1970,
                             job.job.updatedAt.timeIntervalSince1970])
    }

    public func updateJob(_ job: StoredJob, now: Date) throws {
        let j = job.job, p = j.progress
        try db.execute(sql: """
            UPDATE jobs SET state = ?, size = ?, content_hash = ?, pages_done = ?, pages_total = ?, snippets_done = ?,
                            snippets_total = ?, error = ?, warnings = ?, updated_at = ?, heartbeat = ?
            WHERE id = ?
            """, arguments: [j.state.rawValue, j.size, job.contentHash, p.pagesDone, p.pagesTotal, p.snippetsDone, p.snippetsTotal,
                             j.error, j.warnings.joined(separator: "\n"), j.updatedAt.timeIntervalSince1970, now.timeIntervalSince1970, j.id])
    }

    public func deleteJob(id: String) throws {
        try db.execute(sql: "DELETE FROM jobs WHERE id = ?", arguments: [id])
    }

    public func insertJobChunk(id: String, seq: Int, data: Data) throws {
        try db.execute(sql: "INSERT INTO job_chunks (job_id, seq, data) VALUES (?, ?, ?)", arguments: [id, seq, data])
    }

    public func copyJobChunks(from: String, to: String) throws {
        try db.execute(sql: "INSERT INTO job_chunks (job_id, seq, data) SELECT ?, seq, data FROM job_chunks WHERE job_id = ?", arguments: [to, from])
    }

    public func deleteJobChunks(id: String) throws {
        try db.execute(sql: "DELETE FROM job_chunks WHERE job_id = ?", arguments: [id])
    }

    public func jobIDs(ofSource source: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT id FROM jobs WHERE source = ? ORDER BY created_at, id", arguments: [source])
    }

    public func oldestJob(in state: Job.State) throws -> StoredJob? {
        try Row.fetchOne(db, sql: "SELECT * FROM jobs WHERE state = ? ORDER BY created_at, id LIMIT 1", arguments: [state.rawValue])
            .map(SQLiteStore.job)
    }

    public func staleJobIDs(in state: Job.State, before: Date) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT id FROM jobs WHERE state = ? AND heartbeat < ? ORDER BY created_at",
                            arguments: [state.rawValue, before.timeIntervalSince1970])
    }

    public func setOriginal(sourcePath: String, jobID: String?) throws {
        try db.execute(sql: "UPDATE sources SET original_job = ? WHERE path = ?", arguments: [jobID, sourcePath])
    }

    // MARK: - Memories

    public func memoriesSuperseded(by id: String) throws -> [(id: String, scope: MemoryScope, contentKey: String)] {
        try Row.fetchAll(db, sql: "SELECT id, scope, content_key FROM memories WHERE superseded_by = ? ORDER BY id", arguments: [id])
            .map { (id: $0["id"], scope: try MemoryScope($0["scope"] as String), contentKey: $0["content_key"]) }
    }

    public func saveMemoryState(_ m: Memory) throws {
        try db.execute(sql: """
            UPDATE memories SET version = ?, updated_at = ?, superseded_by = ?, valid_from = ?, valid_to = ?, expires_at = ?,
                flagged_wrong = ?, useful = ? WHERE id = ?
            """, arguments: [m.version, m.updatedAt.timeIntervalSince1970, m.supersededBy, m.validFrom.timeIntervalSince1970,
                             m.validTo?.timeIntervalSince1970, m.expiresAt?.timeIntervalSince1970, m.flaggedWrong ? 1 : 0, m.useful, m.id])
    }

    public func recordFeedback(_ entry: MemoryFeedbackEntry) throws {
        try db.execute(sql: "INSERT INTO memory_feedback (memory_id, feedback, caller, note, at) VALUES (?, ?, ?, ?, ?)",
                       arguments: [entry.memoryID, entry.feedback, entry.caller, entry.note, entry.at.timeIntervalSince1970])
    }

    public func memoryIDs(scope: MemoryScope) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT id FROM memories WHERE scope = ? ORDER BY id", arguments: [scope.name])
    }

    public func forgetCachedVectors(textHashes: [Data]) throws -> Int {
        var count = 0
        for hash in textHashes {
            try db.execute(sql: "DELETE FROM embedding_cache WHERE text_hash = ?", arguments: [hash])
            count += db.changesCount
        }
        return count
    }

    public func memoryVectors(scope: MemoryScope, embedder: EmbedderRecord, excluding id: String?) throws -> [(id: String, vector: [Float])] {
        try Row.fetchAll(db, sql: """
            SELECT m.id, v.data FROM memories m
            JOIN snippets sn ON sn.source_id = m.source_id
            JOIN vectors v ON v.snippet_id = sn.id
            JOIN embedders e ON e.id = v.embedder_id
            WHERE m.scope = ? AND m.superseded_by IS NULL AND m.valid_to IS NULL AND e.name = ? AND m.id != ?
            ORDER BY m.id
            """, arguments: [scope.name, embedder.name, id ?? ""]).compactMap { row in
            VectorCoding.decode(row[1], dimension: embedder.dimension).map { (row[0], $0) }
        }
    }

    public func saveMemoryRow(_ m: Memory, sourceID: Int64, contentKey: String) throws {
        try db.execute(sql: """
            INSERT INTO memories (id, source_id, scope, title, content, content_key, tags, created_at, updated_at, version, superseded_by,
                                  valid_from, valid_to, expires_at, flagged_wrong, useful)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET
                scope = excluded.scope, title = excluded.title, content = excluded.content, content_key = excluded.content_key,
                tags = excluded.tags, created_at = excluded.created_at, updated_at = excluded.updated_at,
                version = excluded.version, superseded_by = excluded.superseded_by, valid_from = excluded.valid_from,
                valid_to = excluded.valid_to, expires_at = excluded.expires_at, flagged_wrong = excluded.flagged_wrong, useful = excluded.useful
            """, arguments: [
                m.id, sourceID, m.scope.name, m.title, m.content, contentKey, StoredForms.text(m.tags),
                m.createdAt.timeIntervalSince1970, m.updatedAt.timeIntervalSince1970, m.version, m.supersededBy,
                m.validFrom.timeIntervalSince1970, m.validTo?.timeIntervalSince1970, m.expiresAt?.timeIntervalSince1970,
                m.flaggedWrong ? 1 : 0, m.useful,
            ])
    }

    public func replaceHistory(_ versions: [MemoryVersion], of id: String) throws {
        try db.execute(sql: "DELETE FROM memory_versions WHERE memory_id = ?", arguments: [id])
        for v in versions {
            try db.execute(sql: """
                INSERT INTO memory_versions (memory_id, version, title, content, tags, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [id, v.version, v.title, v.content, StoredForms.text(v.tags), v.updatedAt.timeIntervalSince1970])
        }
    }
}

public import Foundation
public import KBCore
public import KBStore
import PostgresNIO

/// The steps of writes (`MemoryTransaction`) in one PostgreSQL write transaction, which holds
/// the store's write lock (one writer at a time across replicas, as in SQLite).
///
/// Not Sendable in spirit: it lives inside one `PostgresStore.transaction` call, on one of the
/// store's threads.
public struct PostgresTransaction: MemoryTransaction, PostgresReads {
    let session: PGSession
    /// How keyword rows are made.
    let keywords: PostgresKeywords
    /// While `kb export` fills the index: where the snippets' keyword postings go instead of the tail.
    var bulk: KeywordBulkLoad? = nil
    /// Snippets' keyword analyses made before the transaction (on every core), by source path.
    var prepared: [String: [PostgresKeywords.Analysis]]? = nil

    public func setMeta(_ key: String, _ value: String) throws { try PostgresSchema.setMeta(key, value, session) }

    /// The generation this transaction's writes made, once one of them has counted.
    let counted = GenerationCount()

    /// Counts every write that changes what searches see: once a transaction (the writes it holds
    /// commit together), so that one holding thousands (a batch of `kb export`) does not update
    /// the same row thousands of times.
    public func bumpGeneration() throws -> Int64 {
        if let generation = counted.value { return generation }
        let generation = try session.value(String.self, """
            UPDATE kb_meta SET value = (value::bigint + 1)::text WHERE key = 'generation' RETURNING value
            """).flatMap { Int64($0) } ?? 0
        counted.value = generation
        return generation
    }

    // MARK: - Sources

    public func saveSource(_ source: Source, ingestedAt: Date) throws -> Int64 {
        guard let id = try session.value(Int64.self, """
            INSERT INTO sources (path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr, owner)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (path) DO UPDATE SET
                kind = excluded.kind, title = excluded.title, content_hash = excluded.content_hash,
                size = excluded.size, modified_at = excluded.modified_at,
                ingested_at = excluded.ingested_at, keywords = excluded.keywords, ocr = excluded.ocr, owner = excluded.owner
            RETURNING id
            """, .text(source.path), .text(source.kind.rawValue), .text(source.title), .text(source.contentHash),
            .int(Int64(source.size)), .double(source.modifiedAt?.timeIntervalSince1970), .double(ingestedAt.timeIntervalSince1970),
            .text(source.keywords.joined(separator: "\n")), .text(source.ocr), .text(source.owner)) else {
            throw KBError(.database, "The source \(source.path) vanished while it was being written.")
        }
        return id
    }

    public func clearSource(id: Int64) throws -> [Int64] {
        let removed = try session.rows("DELETE FROM snippets WHERE source_id = $1 RETURNING id", .int(id)).map { try $0.get(0, Int64.self) }
        bulk?.remove(removed)
        try session.execute("DELETE FROM source_tags WHERE source_id = $1", .int(id))
        try session.execute("DELETE FROM source_pages WHERE source_id = $1", .int(id))
        return removed
    }

    public func insertContent(_ document: SourceDocument, sourceID: Int64) throws -> [Int64] {
        try insertContents([(document, sourceID)])[0]
    }

    /// `insertContent` for several sources at once: their tags, pages, snippets and snippets' tags
    /// in one statement each (a batch of `kb export` is thousands of snippets). Returns each
    /// source's snippet ids in ordinal order.
    func insertContents(_ items: [(document: SourceDocument, sourceID: Int64)]) throws -> [[Int64]] {
        guard !items.isEmpty else { return [] }
        let tagIDs = try self.tagIDs(Set(items.flatMap { $0.document.source.tags + $0.document.snippets.flatMap(\.tags) }))
        var sourceTags: [(Int64, Int64)] = []
        var pages: [(Int64, String)] = []
        for (document, sourceID) in items {
            for tagID in Set(document.source.tags.compactMap({ tagIDs[$0] })).sorted() { sourceTags.append((sourceID, tagID)) }
            if let starts = document.pageStarts, !starts.isEmpty { pages.append((sourceID, starts.stored)) }
        }
        if !sourceTags.isEmpty {
            try session.execute("INSERT INTO source_tags (source_id, tag_id) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING",
                                .ints(sourceTags.map(\.0)), .ints(sourceTags.map(\.1)))
        }
        if !pages.isEmpty {
            try session.execute("""
                INSERT INTO source_pages (source_id, starts) SELECT * FROM unnest($1::bigint[], $2::text[])
                ON CONFLICT (source_id) DO UPDATE SET starts = excluded.starts
                """, .ints(pages.map(\.0)), .texts(pages.map(\.1)))
        }
        // Every snippet of every source in one statement (ids come back with source and ordinal).
        let rows = items.flatMap { item in item.document.snippets.map { (item.document.source, item.sourceID, $0) } }
        guard !rows.isEmpty else { return items.map { _ in [] } }
        var sql = SQL()
        let fts: String
        var analysed = ""   // kb's analysis: each snippet's tsvector and length made here, two more columns of u
        var lengthColumn = "", lengthValue = ""
        var made: [PostgresKeywords.Analysis] = []
        if let analyzer = self.keywords.analyzer {
            made = items.flatMap { item -> [PostgresKeywords.Analysis] in
                if let ready = prepared?[item.document.source.path], ready.count == item.document.snippets.count { return ready }
                return PostgresKeywords.analyses(of: item.document, analyzer)
            }
            analysed = ", \(sql.bind(.texts(made.map(\.tsvector))))::text[], \(sql.bind(.floats(made.map { Float($0.length) / 2 })))::real[]"
            fts = "u.fts::tsvector"
            lengthColumn = ", fts_length"
            lengthValue = ", u.fts_length"
        } else {
            fts = PostgresRows.ftsExpression(config: self.keywords.config, text: "u.text", title: "u.title", heading: "u.heading_path", keywords: "u.keywords")
        }
        // Labels, pages and OCR confidences absent are sent as chr(1) and -1 (arrays of one type),
        // and stored as NULL.
        sql += """
            INSERT INTO snippets (source_id, ordinal, text, start_offset, end_offset, heading_path,
                                  page_start, page_end, page_label_start, page_label_end, ocr_confidence, weight, fts\(lengthColumn))
            SELECT u.source_id, u.ordinal, u.text, u.start_offset, u.end_offset, u.heading_path,
                   NULLIF(u.page_start, -1), NULLIF(u.page_end, -1), NULLIF(u.label_start, chr(1)), NULLIF(u.label_end, chr(1)),
                   NULLIF(u.ocr_confidence, -1), NULLIF(u.weight, 1), \(fts)\(lengthValue)
            FROM unnest(\(sql.bind(.ints(rows.map(\.1))))::bigint[], \(sql.bind(.ints(rows.map { Int64($0.2.ordinal) })))::bigint[],
                        \(sql.bind(.texts(rows.map(\.2.text))))::text[],
                        \(sql.bind(.ints(rows.map { Int64($0.2.start) })))::bigint[], \(sql.bind(.ints(rows.map { Int64($0.2.end) })))::bigint[],
                        \(sql.bind(.texts(rows.map(\.2.headingPathString))))::text[],
                        \(sql.bind(.ints(rows.map { Int64($0.2.pages?.start ?? -1) })))::bigint[],
                        \(sql.bind(.ints(rows.map { Int64($0.2.pages?.end ?? -1) })))::bigint[],
                        \(sql.bind(.texts(rows.map { $0.2.pages?.startLabel ?? "\u{1}" })))::text[],
                        \(sql.bind(.texts(rows.map { $0.2.pages?.endLabel ?? "\u{1}" })))::text[],
                        \(sql.bind(.floats(rows.map { Float($0.2.ocr?.confidence ?? -1) })))::real[],
                        \(sql.bind(.doubles(rows.map { $0.2.weight ?? 1 })))::double precision[],
                        \(sql.bind(.texts(rows.map(\.0.title))))::text[], \(sql.bind(.texts(rows.map { $0.0.keywords.joined(separator: "\n") })))::text[]\(analysed))
                 AS u(source_id, ordinal, text, start_offset, end_offset, heading_path, page_start, page_end, label_start, label_end,
                      ocr_confidence, weight, title, keywords\(analysed.isEmpty ? "" : ", fts, fts_length"))
            ORDER BY u.source_id, u.ordinal
            RETURNING id, source_id, ordinal
            """
        var idByRow: [Int64: [Int: Int64]] = [:]
        for row in try session.rows(sql) {
            idByRow[try row.get(1, Int64.self), default: [:]][Int(try row.get(2, Int32.self))] = try row.get(0, Int64.self)
        }
        let ids = try items.map { item in
            try item.document.snippets.map { snippet in
                guard let id = idByRow[item.sourceID]?[snippet.ordinal] else {
                    throw KBError(.database, "The snippet \(snippet.ordinal) of \(item.document.source.path) was not stored.")
                }
                return id
            }
        }
        let flatIDs = ids.flatMap { $0 }
        if let bulk {
            for (analysis, id) in zip(made, flatIDs) { bulk.add(id: id, terms: analysis.terms, length: analysis.length) }
        }
        var pairs: [(Int64, Int64)] = []
        for (row, id) in zip(rows, flatIDs) {
            for tag in Set(row.2.tags) { if let tagID = tagIDs[tag] { pairs.append((id, tagID)) } }
        }
        if !pairs.isEmpty {
            try session.execute("""
                INSERT INTO snippet_tags (snippet_id, tag_id) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING
                """, .ints(pairs.map(\.0)), .ints(pairs.map(\.1)))
        }
        return ids
    }

    func tagIDs(_ tags: Set<Tag>) throws -> [Tag: Int64] {
        guard !tags.isEmpty else { return [:] }
        let names = tags.map(\.name).sorted()
        try session.execute("INSERT INTO tags (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING", .texts(names))
        let ids = try session.rows("SELECT name, id FROM tags WHERE name = ANY ($1)", .texts(names))
            .reduce(into: [String: Int64]()) { $0[try $1.get(0, String.self)] = try $1.get(1, Int64.self) }
        return tags.reduce(into: [Tag: Int64]()) { result, tag in result[tag] = ids[tag.name] }
    }

    public func sourcePaths(matching path: String) throws -> [String] {
        try session.rows("SELECT path FROM sources WHERE path = $1 OR starts_with(path, $2) ORDER BY path COLLATE \"C\"",
                         .text(path), .text(path.folderPrefix)).map { try $0.get(0, String.self) }
    }

    public func deleteSource(path: String) throws -> [Int64]? {
        let snippets = try snippetIDs(ofSource: path)
        guard try !session.rows("DELETE FROM sources WHERE path = $1 RETURNING id", .text(path)).isEmpty else { return nil }
        bulk?.remove(snippets)
        return snippets
    }

    /// The entries in one statement (a second's requests, written once a second), as JSON rows in
    /// the table's column order, oldest first.
    public func insertRequestLog(_ entries: [RequestLogEntry]) throws {
        guard !entries.isEmpty else { return }
        struct Row: Encodable {
            let at: Double, route: String, status: Int, request_id: String, caller, bot, report, user_hash: String?
            let results, tokens, budget: Int?, degraded: Int, latency_ms: Double, query: String?
        }
        let rows = entries.map {
            Row(at: $0.at.timeIntervalSince1970, route: $0.route, status: $0.status, request_id: $0.requestID, caller: $0.caller, bot: $0.bot,
                report: $0.report, user_hash: $0.userHash, results: $0.results, tokens: $0.tokens, budget: $0.budget,
                degraded: $0.degraded ? 1 : 0, latency_ms: $0.latencyMilliseconds, query: $0.query)
        }
        let columns = RequestLogSQL.columns.joined(separator: ", ")
        try session.execute("""
            INSERT INTO request_log (\(columns))
            SELECT \(columns) FROM ROWS FROM (json_to_recordset($1::json) AS (at float8, route text, status integer, request_id text,
                caller text, bot text, report text, user_hash text, results integer, tokens integer, budget integer, degraded integer,
                latency_ms float8, query text)) WITH ORDINALITY AS r(\(columns), n)
            ORDER BY n
            """, .text(String(decoding: try JSONEncoder().encode(rows), as: UTF8.self)))
    }

    public func deleteRequestLog(before: Date) throws -> Int {
        let rows = try session.rows("WITH gone AS (DELETE FROM request_log WHERE at < $1 RETURNING 1) SELECT count(*) FROM gone",
                                    .double(before.timeIntervalSince1970))
        return Int(try rows.first?.get(0, Int64.self) ?? 0)
    }

    public func deleteUnusedTags() throws {
        try session.execute("""
            DELETE FROM tags t WHERE NOT EXISTS (SELECT 1 FROM source_tags st WHERE st.tag_id = t.id)
                                 AND NOT EXISTS (SELECT 1 FROM snippet_tags st WHERE st.tag_id = t.id)
            """)
    }

    public func cacheOCRPage(_ page: OCRPage, contentHash: String, key: String) throws {
        try session.execute("""
            INSERT INTO ocr_pages (content_hash, settings, page, text, confidence, words, quarter_turns) VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (content_hash, settings, page) DO UPDATE SET
                text = excluded.text, confidence = excluded.confidence, words = excluded.words, quarter_turns = excluded.quarter_turns
            """, .text(contentHash), .text(key), .int(Int64(page.page)), .text(page.text), .double(page.confidence),
            .int(Int64(page.words)), .int(Int64(page.quarterTurns)))
    }

    // MARK: - Vectors

    public func insertEmbedder(_ record: EmbedderRecord) throws {
        try session.execute("INSERT INTO embedders (name, dimension, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
                            .text(record.name), .int(Int64(record.dimension)), .double(Date().timeIntervalSince1970))
    }

    public func saveVectors(_ entries: [(id: Int64, vector: [Float])], embedder: EmbedderRecord) throws {
        guard !entries.isEmpty else { return }
        let embedderID = try makeEmbedderID(embedder)
        // The vectors go as one binary real[] (no text to format or parse), cut into rows by the
        // statement.
        let d = embedder.dimension
        for start in stride(from: 0, to: entries.count, by: 2_000) {
            let part = entries[start..<min(start + 2_000, entries.count)]
            var flat: [Float] = []
            flat.reserveCapacity(part.count * d)
            for entry in part {
                guard entry.vector.count == d else {
                    throw KBError(.embedding, "A \(entry.vector.count)-dim vector for \(embedder.name)'s \(d)-dim vectors.")
                }
                for value in entry.vector { flat.append(value.isFinite ? value : 0) }
            }
            try session.execute("""
                INSERT INTO vectors (snippet_id, embedder_id, embedding, memory)
                SELECT u.id, $1, ($3::real[])[(u.i - 1) * \(d) + 1 : u.i * \(d)]::vector, so.kind = 'memory'
                FROM unnest($2::bigint[]) WITH ORDINALITY AS u(id, i)
                JOIN snippets sn ON sn.id = u.id JOIN sources so ON so.id = sn.source_id
                ON CONFLICT (snippet_id, embedder_id) DO UPDATE SET embedding = excluded.embedding
                """, .int(embedderID), .ints(part.map(\.id)), .floats(flat))
        }
    }

    public func cacheVectors(embedder: EmbedderRecord, _ entries: [(hash: Data, vector: [Float])], tokens: Int) throws {
        if !entries.isEmpty {
            try session.execute("""
                INSERT INTO embedding_cache (embedder, text_hash, data)
                SELECT $1, decode(h, 'hex'), decode(d, 'hex') FROM unnest($2::text[], $3::text[]) AS u(h, d)
                ON CONFLICT (embedder, text_hash) DO UPDATE SET data = excluded.data
                """, .text(embedder.name), .texts(entries.map { PostgresRows.hex($0.hash) }),
                .texts(entries.map { PostgresRows.hex(VectorCoding.encode($0.vector)) }))
        }
        if tokens > 0 {
            try session.execute("""
                INSERT INTO embedder_usage (embedder, tokens) VALUES ($1, $2)
                ON CONFLICT (embedder) DO UPDATE SET tokens = embedder_usage.tokens + excluded.tokens
                """, .text(embedder.name), .int(Int64(tokens)))
        }
    }

    public func countSnippetsWithoutVectors(embedder: EmbedderRecord) throws -> Int {
        let embedderID = try embedderID(named: embedder.name) ?? -1
        return Int(try session.value(Int64.self, """
            SELECT count(*) FROM snippets sn WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.snippet_id = sn.id AND v.embedder_id = $1)
            """, .int(embedderID)) ?? 0)
    }

    public func deleteVectors(except embedder: EmbedderRecord) throws {
        let embedderID = try embedderID(named: embedder.name) ?? -1
        try session.execute("DELETE FROM vectors WHERE embedder_id != $1", .int(embedderID))
        try session.execute("DELETE FROM embedders WHERE id != $1", .int(embedderID))
    }

    /// The moved rows keep `embedder`'s id, so an HNSW index built for it covers them.
    public func moveVectors(from staging: EmbedderRecord, to embedder: EmbedderRecord) throws {
        guard let stagingID = try embedderID(named: staging.name) else { return }
        let embedderID = try makeEmbedderID(embedder)
        try session.execute("DELETE FROM vectors WHERE embedder_id = $1", .int(embedderID))
        try session.execute("UPDATE vectors SET embedder_id = $1 WHERE embedder_id = $2", .int(embedderID), .int(stagingID))
        try session.execute("DELETE FROM embedders WHERE id = $1", .int(stagingID))
    }

    // MARK: - Bots

    public func saveBot(_ bot: Bot) throws {
        try session.execute("""
            INSERT INTO bots (name, system_prompt, sources, memory_scopes, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (name) DO UPDATE SET system_prompt = excluded.system_prompt, sources = excluded.sources,
                memory_scopes = excluded.memory_scopes, updated_at = excluded.updated_at
            """, .text(bot.name), .text(bot.systemPrompt), .text(try StoredForms.text(bot.sources)), .text(bot.memoryScopes.joined(separator: "\n")),
            .double(bot.createdAt.timeIntervalSince1970), .double(bot.updatedAt.timeIntervalSince1970))
    }

    public func removeBot(named name: String) throws -> Bool {
        try !session.rows("DELETE FROM bots WHERE name = $1 RETURNING name", .text(name)).isEmpty
    }

    // MARK: - Jobs

    public func insertJob(_ job: StoredJob) throws {
        try session.execute("""
            INSERT INTO jobs (id, source, state, content_type, size, content_hash, title, tags, owner, bots, created_at, updated_at, heartbeat)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """, .text(job.job.id), .text(job.job.source), .text(job.job.state.rawValue), .text(job.job.contentType),
            .int(Int64(job.job.size)), .text(job.contentHash), .text(job.title), .text(StoredForms.text(job.tags)), .text(job.owner),
            .text(job.bots.joined(separator: "\n")), .double(job.job.createdAt.timeIntervalSince1970),
            .double(job.job.updatedAt.timeIntervalSince1970), .double(job.job.updatedAt.timeIntervalSince1970))
    }

    public func updateJob(_ job: StoredJob, now: Date) throws {
        let j = job.job, p = j.progress
        try session.execute("""
            UPDATE jobs SET state = $1, size = $2, content_hash = $3, pages_done = $4, pages_total = $5, snippets_done = $6,
                            snippets_total = $7, error = $8, warnings = $9, updated_at = $10, heartbeat = $11
            WHERE id = $12
            """, .text(j.state.rawValue), .int(Int64(j.size)), .text(job.contentHash), .int(Int64(p.pagesDone)), .int(Int64(p.pagesTotal)),
            .int(Int64(p.snippetsDone)), .int(Int64(p.snippetsTotal)), .text(j.error), .text(j.warnings.joined(separator: "\n")),
            .double(j.updatedAt.timeIntervalSince1970), .double(now.timeIntervalSince1970), .text(j.id))
    }

    public func deleteJob(id: String) throws {
        try session.execute("DELETE FROM jobs WHERE id = $1", .text(id))
    }

    public func insertJobChunk(id: String, seq: Int, data: Data) throws {
        try session.execute("INSERT INTO job_chunks (job_id, seq, data) VALUES ($1, $2, $3)", .text(id), .int(Int64(seq)), .bytes(data))
    }

    public func copyJobChunks(from: String, to: String) throws {
        try session.execute("INSERT INTO job_chunks (job_id, seq, data) SELECT $1, seq, data FROM job_chunks WHERE job_id = $2", .text(to), .text(from))
    }

    public func deleteJobChunks(id: String) throws {
        try session.execute("DELETE FROM job_chunks WHERE job_id = $1", .text(id))
    }

    public func jobIDs(ofSource source: String) throws -> [String] {
        try session.rows("SELECT id FROM jobs WHERE source = $1 ORDER BY created_at, id COLLATE \"C\"", .text(source))
            .map { try $0.get(0, String.self) }
    }

    public func oldestJob(in state: Job.State) throws -> StoredJob? {
        try session.rows("SELECT * FROM jobs WHERE state = $1 ORDER BY created_at, id COLLATE \"C\" LIMIT 1", .text(state.rawValue))
            .first.map(PostgresRows.job)
    }

    public func staleJobIDs(in state: Job.State, before: Date) throws -> [String] {
        try session.rows("SELECT id FROM jobs WHERE state = $1 AND heartbeat < $2 ORDER BY created_at",
                         .text(state.rawValue), .double(before.timeIntervalSince1970)).map { try $0.get(0, String.self) }
    }

    public func setOriginal(sourcePath: String, jobID: String?) throws {
        try session.execute("UPDATE sources SET original_job = $1 WHERE path = $2", .text(jobID), .text(sourcePath))
    }

    // MARK: - Memories

    public func memoriesSuperseded(by id: String) throws -> [(id: String, scope: MemoryScope, contentKey: String)] {
        try session.rows("SELECT id, scope, content_key FROM memories WHERE superseded_by = $1 ORDER BY id COLLATE \"C\"", .text(id))
            .map { (id: try $0.get(0, String.self), scope: try MemoryScope(try $0.get(1, String.self)), contentKey: try $0.get(2, String.self)) }
    }

    public func saveMemoryState(_ m: Memory) throws {
        try session.execute("""
            UPDATE memories SET version = $1, updated_at = $2, superseded_by = $3, valid_from = $4, valid_to = $5, expires_at = $6,
                flagged_wrong = $7, useful = $8 WHERE id = $9
            """, .int(Int64(m.version)), .double(m.updatedAt.timeIntervalSince1970), .text(m.supersededBy),
            .double(m.validFrom.timeIntervalSince1970), .double(m.validTo?.timeIntervalSince1970), .double(m.expiresAt?.timeIntervalSince1970),
            .int(m.flaggedWrong ? 1 : 0), .int(Int64(m.useful)), .text(m.id))
    }

    public func recordFeedback(_ entry: MemoryFeedbackEntry) throws {
        try session.execute("INSERT INTO memory_feedback (memory_id, feedback, caller, note, at) VALUES ($1, $2, $3, $4, $5)",
                            .text(entry.memoryID), .text(entry.feedback), .text(entry.caller), .text(entry.note),
                            .double(entry.at.timeIntervalSince1970))
    }

    public func memoryIDs(scope: MemoryScope) throws -> [String] {
        try session.rows("SELECT id FROM memories WHERE scope = $1 ORDER BY id COLLATE \"C\"", .text(scope.name)).map { try $0.get(0, String.self) }
    }

    public func forgetCachedVectors(textHashes: [Data]) throws -> Int {
        guard !textHashes.isEmpty else { return 0 }
        let rows = try session.rows("""
            WITH gone AS (DELETE FROM embedding_cache WHERE text_hash = ANY (SELECT decode(h, 'hex') FROM unnest($1::text[]) h) RETURNING 1)
            SELECT count(*) FROM gone
            """, .texts(textHashes.map(PostgresRows.hex)))
        return Int(try rows.first?.get(0, Int64.self) ?? 0)
    }

    public func memoryVectors(scope: MemoryScope, embedder: EmbedderRecord, excluding id: String?) throws -> [(id: String, vector: [Float])] {
        try session.rows("""
            SELECT m.id, v.embedding::real[] FROM memories m
            JOIN snippets sn ON sn.source_id = m.source_id
            JOIN vectors v ON v.snippet_id = sn.id
            JOIN embedders e ON e.id = v.embedder_id
            WHERE m.scope = $1 AND m.superseded_by IS NULL AND m.valid_to IS NULL AND e.name = $2 AND m.id != $3
            ORDER BY m.id COLLATE "C"
            """, .text(scope.name), .text(embedder.name), .text(id ?? "")).map { (try $0.get(0, String.self), try $0.array(1, of: Float.self)) }
    }

    public func saveMemoryRow(_ m: Memory, sourceID: Int64, contentKey: String) throws {
        try session.execute("""
            INSERT INTO memories (id, source_id, scope, title, content, content_key, tags, created_at, updated_at, version, superseded_by,
                                  valid_from, valid_to, expires_at, flagged_wrong, useful)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
            ON CONFLICT (id) DO UPDATE SET
                scope = excluded.scope, title = excluded.title, content = excluded.content, content_key = excluded.content_key,
                tags = excluded.tags, created_at = excluded.created_at, updated_at = excluded.updated_at,
                version = excluded.version, superseded_by = excluded.superseded_by, valid_from = excluded.valid_from,
                valid_to = excluded.valid_to, expires_at = excluded.expires_at, flagged_wrong = excluded.flagged_wrong, useful = excluded.useful
            """, .text(m.id), .int(sourceID), .text(m.scope.name), .text(m.title), .text(m.content), .text(contentKey),
            .text(StoredForms.text(m.tags)), .double(m.createdAt.timeIntervalSince1970),
            .double(m.updatedAt.timeIntervalSince1970), .int(Int64(m.version)), .text(m.supersededBy),
            .double(m.validFrom.timeIntervalSince1970), .double(m.validTo?.timeIntervalSince1970),
            .double(m.expiresAt?.timeIntervalSince1970), .int(m.flaggedWrong ? 1 : 0), .int(Int64(m.useful)))
    }

    public func replaceHistory(_ versions: [MemoryVersion], of id: String) throws {
        try session.execute("DELETE FROM memory_versions WHERE memory_id = $1", .text(id))
        for v in versions {
            try session.execute("""
                INSERT INTO memory_versions (memory_id, version, title, content, tags, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
                """, .text(id), .int(Int64(v.version)), .text(v.title), .text(v.content),
                .text(StoredForms.text(v.tags)), .double(v.updatedAt.timeIntervalSince1970))
        }
    }
}

/// The generation a write transaction counted (`PostgresTransaction.bumpGeneration`).
///
/// @unchecked Sendable: used inside one transaction, on one thread.
final class GenerationCount: @unchecked Sendable {
    var value: Int64?
}

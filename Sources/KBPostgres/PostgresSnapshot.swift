import Foundation
import KBCore
import KBStore
import PostgresNIO

/// One REPEATABLE READ transaction of a `PostgresStore`.
struct PostgresSnapshot: IndexSnapshot, PostgresReads {
    let session: PGSession
    let location: String
    let keywords: PostgresKeywords
    /// Keyword blocks this process keeps (nil: none).
    var blockCache: KeywordBlockCache? = nil
    /// Bitmaps of the large id sets the keyword walk tests (nil: the sets are tested as they are).
    var idBitmaps: IDBitmapCache? = nil
    /// `kb_meta`, read whole at the first `meta` call: a request asks for five or six of its
    /// keys (embedder, dimension, generation, HNSW…), which cannot change inside this snapshot.
    let metaValues = LockedValue<[String: String]?>(nil)
    /// Embedders' ids by name, read in the same statement as `kb_meta` (a request's two rankings
    /// and its hits each ask).
    let embedderIDs = LockedValue<[String: Int64]>([:])

    func embedderID(named name: String) throws -> Int64? {
        try loadMeta()
        return embedderIDs.withLock { $0[name] }
    }

    /// The HNSW index recorded for an embedder, from the `kb_meta` this snapshot read.
    func hnswSettings(_ embedderID: Int64) throws -> HNSWSettings? {
        guard let text = try meta(HNSWSettings.key(embedderID)) else { return nil }
        return try JSONDecoder().decode(HNSWSettings.self, from: Data(text.utf8))
    }

    func meta(_ key: String) throws -> String? {
        try loadMeta()[key]
    }

    /// `kb_meta` and the embedders' ids, read in one statement the first time either is asked for.
    @discardableResult
    private func loadMeta() throws -> [String: String] {
        if let values = metaValues.withLock({ $0 }) { return values }
        var values: [String: String] = [:], ids: [String: Int64] = [:]
        for row in try session.rows(prepared: "SELECT false, key, value FROM kb_meta UNION ALL SELECT true, name, id::text FROM embedders") {
            let name = try row.get(1, String.self), value = try row.get(2, String.self)
            if try row.get(0, Bool.self) { ids[name] = Int64(value) } else { values[name] = value }
        }
        embedderIDs.withLock { $0 = ids }
        metaValues.withLock { $0 = values }
        return values
    }

    func status() throws -> IndexStatus {
        let byKind = try session.rows("SELECT kind, count(*) FROM sources GROUP BY kind")
            .reduce(into: [String: Int]()) { $0[try $1.get(0, String.self)] = Int(try $1.get(1, Int64.self)) }
        let snippets = try session.value(Int64.self, "SELECT count(*) FROM snippets") ?? 0
        let tags = try session.value(Int64.self, "SELECT count(*) FROM tags") ?? 0
        let vectors = try session.rows("SELECT e.name, count(*) FROM vectors v JOIN embedders e ON e.id = v.embedder_id GROUP BY e.name")
            .reduce(into: [String: Int]()) { $0[try $1.get(0, String.self)] = Int(try $1.get(1, Int64.self)) }
        let tokens = try session.rows("SELECT embedder, tokens FROM embedder_usage")
            .reduce(into: [String: Int]()) { $0[try $1.get(0, String.self)] = Int(try $1.get(1, Int64.self)) }
        let cached = try session.rows("SELECT embedder, count(*) FROM embedding_cache GROUP BY embedder")
            .reduce(into: [String: Int]()) { $0[try $1.get(0, String.self)] = Int(try $1.get(1, Int64.self)) }
        let size = try session.value(Int64.self, "SELECT pg_database_size(current_database())") ?? 0
        var status = IndexStatus(
            path: location, schemaVersion: Int(try meta("schema_version") ?? "0") ?? 0, sources: byKind.values.reduce(0, +),
            sourcesByKind: byKind, snippets: Int(snippets), tags: Int(tags), embedder: try embedderRecord(), vectors: vectors,
            tokensUsed: tokens, cachedVectors: cached, sizeOnDisk: size)
        status.keywordLanguage = try keywordLanguage().rawValue
        status.setLanguages(try session.rows("""
            SELECT substr(t.name, 6), count(*) FROM snippet_tags st JOIN tags t ON t.id = st.tag_id
            WHERE starts_with(t.name, 'lang:') GROUP BY t.name
            """).reduce(into: [String: Int]()) { $0[try $1.get(0, String.self)] = Int(try $1.get(1, Int64.self)) })
        return status
    }

    /// kb's own invariants (PostgreSQL keeps its files consistent itself): every memory has its
    /// source, every vector its embedder's dimension.
    func integrityCheck() throws -> String {
        var problems: [String] = []
        let orphans = try session.value(Int64.self, "SELECT count(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = m.source_id)") ?? 0
        if orphans > 0 { problems.append("\(orphans) memories without their source") }
        let wrong = try session.value(Int64.self, "SELECT count(*) FROM vectors v JOIN embedders e ON e.id = v.embedder_id WHERE vector_dims(v.embedding) != e.dimension") ?? 0
        if wrong > 0 { problems.append("\(wrong) vectors of the wrong dimension") }
        return problems.isEmpty ? "ok" : problems.joined(separator: "; ")
    }

    // MARK: - Sources

    func contentHashes() throws -> [String: String] {
        try session.rows("SELECT path, content_hash FROM sources")
            .reduce(into: [String: String]()) { $0[try $1.get(0, String.self)] = try $1.get(1, String.self) }
    }

    func sourcePaths(under prefix: String) throws -> [String] {
        try session.rows("SELECT path FROM sources WHERE starts_with(path, $1) ORDER BY path COLLATE \"C\"",
                         .text(prefix)).map { try $0.get(0, String.self) }
    }

    func sources() throws -> [StoredSource] {
        var tagsBySource: [Int64: [Tag]] = [:]
        for row in try session.rows("SELECT st.source_id, t.name FROM source_tags st JOIN tags t ON t.id = st.tag_id ORDER BY t.name COLLATE \"C\"") {
            tagsBySource[try row.get(0, Int64.self), default: []].append(Tag(try row.get(1, String.self)))
        }
        return try session.rows("""
            SELECT s.id, s.path, s.kind, s.title, s.content_hash, s.size, s.modified_at, s.ingested_at, s.ocr, s.owner,
                   (SELECT count(*) FROM snippets n WHERE n.source_id = s.id) AS snippet_count,
                   (SELECT avg(n.ocr_confidence) FROM snippets n WHERE n.source_id = s.id) AS ocr_confidence
            FROM sources s ORDER BY s.path COLLATE "C"
            """).map { row in
            let id = try row.get("id", Int64.self)
            return StoredSource(
                id: id, path: try row.get("path"), kind: SourceKind(rawValue: try row.get("kind", String.self)) ?? .note,
                title: try row.get("title"), contentHash: try row.get("content_hash"), size: Int(try row.get("size", Int64.self)),
                modifiedAt: try row.get("modified_at", Double?.self).map(Date.init(timeIntervalSince1970:)),
                ingestedAt: Date(timeIntervalSince1970: try row.get("ingested_at", Double.self)),
                snippetCount: Int(try row.get("snippet_count", Int64.self)), tags: tagsBySource[id] ?? [],
                ocr: try row.get("ocr", String?.self), ocrConfidence: try row.get("ocr_confidence", Double?.self),
                owner: try row.get("owner", String?.self))
        }
    }

    /// The keyword language follows the text search configuration the index was made with.
    func keywordLanguage() throws -> KeywordLanguage {
        PostgresStore.keywordLanguage(textSearchConfig: keywords.config)
    }

    func ocrRecords() throws -> [String: String] {
        try session.rows("SELECT path, ocr FROM sources WHERE ocr IS NOT NULL")
            .reduce(into: [String: String]()) { $0[try $1.get(0, String.self)] = try $1.get(1, String.self) }
    }

    func pagedSources() throws -> Set<String> {
        Set(try session.rows("SELECT so.path FROM sources so JOIN source_pages p ON p.source_id = so.id").map { try $0.get(0, String.self) })
    }

    func ocrPages(contentHash: String, key: String) throws -> [OCRPage] {
        try session.rows("""
            SELECT page, text, confidence, words, quarter_turns FROM ocr_pages WHERE content_hash = $1 AND settings = $2 ORDER BY page
            """, .text(contentHash), .text(key)).map { row in
            OCRPage(page: Int(try row.get(0, Int32.self)), text: try row.get(1), confidence: try row.get(2, Double.self),
                    words: Int(try row.get(3, Int32.self)), quarterTurns: Int(try row.get(4, Int32.self)))
        }
    }

    // MARK: - Embedders and vectors

    func vectorsByText(path: String, embedder: String, context: EmbeddingInput.Context) throws -> [String: [Float]] {
        try session.rows("""
            SELECT v.embedding::real[], sn.id, sn.text, \(Self.previousTurnColumn), \(SnippetText.titleColumns) FROM snippets sn
            JOIN sources so ON so.id = sn.source_id
            JOIN vectors v ON v.snippet_id = sn.id JOIN embedders e ON e.id = v.embedder_id
            WHERE so.path = $1 AND e.name = $2
            """, .text(path), .text(embedder)).reduce(into: [String: [Float]]()) {
            $0[try Self.snippetText($1, from: 1).embeddingInput(context)] = try $1.array(0, of: Float.self)
        }
    }

    func cachedVectors(embedder: EmbedderRecord, hashes: [Data]) throws -> [Data: [Float]] {
        guard !hashes.isEmpty else { return [:] }
        var result: [Data: [Float]] = [:]
        for row in try session.rows("""
            SELECT text_hash, data FROM embedding_cache
            WHERE embedder = $1 AND text_hash = ANY (SELECT decode(h, 'hex') FROM unnest($2::text[]) h)
            """, .text(embedder.name), .texts(hashes.map(PostgresRows.hex))) {
            if let vector = VectorCoding.decode(try row.get(1, Data.self), dimension: embedder.dimension) {
                result[try row.get(0, Data.self)] = vector
            }
        }
        return result
    }

    func snippetsWithoutVectors(embedder: EmbedderRecord, limit: Int) throws -> [SnippetText] {
        try session.rows("""
            SELECT sn.id, sn.text, \(Self.previousTurnColumn), \(SnippetText.titleColumns) FROM snippets sn
            JOIN sources so ON so.id = sn.source_id
            WHERE NOT EXISTS (SELECT 1 FROM vectors v JOIN embedders e ON e.id = v.embedder_id WHERE v.snippet_id = sn.id AND e.name = $1)
            ORDER BY sn.id LIMIT $2
            """, .text(embedder.name), .int(Int64(limit))).map { try Self.snippetText($0, from: 0) }
    }

    /// A `SnippetText` from id, text, `previousTurnColumn` and `SnippetText.titleColumns` at `start`.
    static func snippetText(_ row: PostgresRandomAccessRow, from start: Int) throws -> SnippetText {
        SnippetText(id: try row.get(start), text: try row.get(start + 1), previousTurn: try row.get(start + 2, String?.self),
                    title: try row.get(start + 3, String?.self), path: try row.get(start + 4))
    }

    /// The text of the turn before `sn` when `sn` is a conversation's turn, else NULL
    /// (`EmbeddingInput`).
    static let previousTurnColumn = """
        (SELECT prev.text FROM snippets prev JOIN sources so ON so.id = prev.source_id AND so.kind = 'conversation'
         WHERE prev.source_id = sn.source_id AND prev.ordinal = sn.ordinal - 1)
        """

    /// Ranked by the database: negative inner product (`<#>`; the vectors are unit length, so this
    /// orders as cosine). Exact by default. When `kb index build --hnsw` made an HNSW index for
    /// the embedder, a query without `allowed` walks it (approximate, `hnsw.ef_search` as
    /// recorded); a filtered query stays exact, because HNSW filters after its walk and could
    /// return fewer than `k`. Filters are conditions of the same statement, applied before the limit.
    /// `quantized` changes nothing here: pgvector has no int8 scan.
    func vectorRanking(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?,
                       excluded: Set<Int64>, quantized: Bool, rows: VectorRows) throws -> [(id: Int64, score: Float)] {
        guard k > 0 else { return [] }
        if let allowed, allowed.isEmpty { return [] }
        guard vector.count == embedder.dimension else {
            throw KBError(.embedding, "A \(vector.count)-dim query for \(embedder.name)'s \(embedder.dimension)-dim vectors.")
        }
        guard let embedderID = try embedderID(named: embedder.name) else { return [] }
        let hnsw = try hnswSettings(embedderID)
        let nearest = { (tieBreak: Bool) in
            try Self.nearest(vector, dimension: embedder.dimension, embedderID: embedderID, k: k, allowed: allowed,
                             excluded: excluded, knowledgeOnly: rows == .knowledge, tieBreak: tieBreak, self.session)
        }
        // The HNSW index holds the knowledge's vectors (not memories'). pgvector filters the walk's
        // candidates (as many as its ef_search): when fewer than `k` of them pass the excluded ids,
        // the exact ranking answers instead, as `vectorRankingWork`'s conditions form does.
        if let hnsw, allowed == nil, rows == .knowledge {
            try session.set("hnsw.ef_search", to: String(hnsw.efSearch))
            let walked = try nearest(false)
            if walked.count >= k { return walked }
        }
        return try nearest(true)
    }

    /// Beyond this many ids, a ranking states its candidates as conditions rather than as a list
    /// of ids to bind (a bot's sources on a shelf of a million snippets would be a million).
    static let idListLimit = 2_000

    /// `vectorRanking` with the candidates as the database can state them: a short list of ids is
    /// bound as it is; a long one becomes the query's filters (or, without filters, the hidden
    /// snippets' rule — memories and other users' private sources) as conditions of the statement,
    /// the same set. With an HNSW index the walk takes those conditions too (pgvector filters the
    /// walk's candidates); when fewer than `k` pass, the exact ranking under the same conditions
    /// answers instead.
    func vectorRankingWork(_ vector: [Float], embedder: EmbedderRecord, k: Int, candidates: VectorCandidates,
                           quantized: Bool, rows: VectorRows) throws -> @Sendable () throws -> [(id: Int64, score: Float)] {
        let listed = candidates.allowed?.count ?? candidates.excluded.count
        guard listed > Self.idListLimit, k > 0 else {
            let ranking = try vectorRanking(vector, embedder: embedder, k: k, allowed: candidates.allowed, excluded: candidates.excluded,
                                            quantized: quantized, rows: rows)
            return { ranking }
        }
        guard vector.count == embedder.dimension else {
            throw KBError(.embedding, "A \(vector.count)-dim query for \(embedder.name)'s \(embedder.dimension)-dim vectors.")
        }
        guard let embedderID = try embedderID(named: embedder.name) else { return { [] } }
        // `walk`: the HNSW index's candidates (as many as its ef_search) in a subquery of their
        // own, the filters applied to them outside it — the plan pgvector's filtering gives, stated
        // so that the planner cannot trade the walk for a filtered exact scan. Else: exact.
        let statement = { (walk: Int?) -> SQL in
            // Not prepared (`SQL.prepared`): a generic plan would cast the query vector from text for every
            // row it ranks; a custom plan casts it once.
            var sql = SQL()
            let query = sql.bind(.text(PostgresRows.vectorLiteral(vector)))
            let d = embedder.dimension
            let distance = "(v.embedding::vector(\(d))) <#> \(query)::vector(\(d))"
            if let walk {
                sql += """
                    SELECT v.snippet_id, -v.distance FROM (
                        SELECT v.snippet_id, \(distance) AS distance FROM vectors v
                        WHERE v.embedder_id = \(embedderID) AND NOT v.memory ORDER BY \(distance) LIMIT \(walk)) v
                    JOIN snippets sn ON sn.id = v.snippet_id JOIN sources so ON so.id = sn.source_id
                    WHERE true
                    """
            } else {
                sql += """
                    SELECT v.snippet_id, -(\(distance))
                    FROM vectors v JOIN snippets sn ON sn.id = v.snippet_id JOIN sources so ON so.id = sn.source_id
                    WHERE v.embedder_id = \(embedderID)
                    """
                if rows == .knowledge { sql += " AND NOT v.memory" }
            }
            if let filters = candidates.filters {
                sql.appendFilters(filters)
            } else {
                sql += " AND so.kind <> 'memory' AND (so.owner IS NULL OR so.owner = \(sql.bind(.text(candidates.user))))"
            }
            sql += walk == nil ? " ORDER BY \(Self.exactOrder(distance)), v.snippet_id" : " ORDER BY v.distance"
            sql += " LIMIT \(sql.bind(.int(Int64(k))))"
            return sql
        }
        let read = { (sql: SQL) in try session.rows(sql).map { (try $0.get(0, Int64.self), Float(try $0.get(1, Double.self))) } }
        // The HNSW index holds the knowledge's vectors (not memories'): only such a ranking walks it.
        if rows == .knowledge, let hnsw = try hnswSettings(embedderID) {
            try session.set("hnsw.ef_search", to: String(hnsw.efSearch))
            let walked = try read(statement(hnsw.efSearch))
            if walked.count >= k { return { walked } }
        }
        let exact = try read(statement(nil))
        return { exact }
    }

    /// The exact ranking's order: nearest first, as `distance` ascending, written so that no HNSW
    /// index matches it (an index answers only `ORDER BY distance` itself), which would make the
    /// ranking approximate. (It replaces turning index scans off and on around the statement: two
    /// statements fewer a request.)
    static func exactOrder(_ distance: String) -> String { "-(\(distance)) DESC NULLS LAST" }

    /// The nearest vectors of one embedder. Without `tieBreak` the order is the distance alone,
    /// the form an HNSW index can answer.
    static func nearest(_ vector: [Float], dimension d: Int, embedderID: Int64, k: Int, allowed: Set<Int64>?, excluded: Set<Int64>,
                        knowledgeOnly: Bool, tieBreak: Bool, _ session: PGSession) throws -> [(id: Int64, score: Float)] {
        // Not prepared (`SQL.prepared`): a generic plan would cast the query vector from text for every
        // row it ranks; a custom plan casts it once.
        var sql = SQL()
        let query = sql.bind(.text(PostgresRows.vectorLiteral(vector)))
        // The embedder id is written into the statement so that it matches the partial HNSW index.
        sql += "SELECT snippet_id, -((embedding::vector(\(d))) <#> \(query)::vector(\(d))) FROM vectors WHERE embedder_id = \(embedderID)"
        if knowledgeOnly { sql += " AND NOT memory" }
        if let allowed { sql += " AND snippet_id = ANY (\(sql.bind(.ints(allowed.sorted()))))" }
        if !excluded.isEmpty { sql += " AND NOT (snippet_id = ANY (\(sql.bind(.ints(excluded.sorted())))))" }
        let distance = "(embedding::vector(\(d))) <#> \(query)::vector(\(d))"
        sql += tieBreak ? " ORDER BY \(exactOrder(distance)), snippet_id" : " ORDER BY \(distance)"
        sql += " LIMIT \(sql.bind(.int(Int64(k))))"
        return try session.rows(sql).map { (try $0.get(0, Int64.self), Float(try $0.get(1, Double.self))) }
    }

    func vectors(of snippetIDs: [Int64], embedder: EmbedderRecord) throws -> [Int64: [Float]] {
        guard !snippetIDs.isEmpty else { return [:] }
        return try session.rows("""
            SELECT v.snippet_id, v.embedding::real[] FROM vectors v JOIN embedders e ON e.id = v.embedder_id
            WHERE e.name = $1 AND v.snippet_id = ANY ($2)
            """, .text(embedder.name), .ints(snippetIDs)).reduce(into: [Int64: [Float]]()) {
            $0[try $1.get(0, Int64.self)] = try $1.array(1, of: Float.self)
        }
    }

    // MARK: - Search

    /// Keyword ranking: the snippets holding any of the query's words (as `KeywordQuery` finds
    /// them, normalised by the index's analysis), scored with BM25 (k1 1.2, b 0.75) over
    /// column-weighted term frequencies (title 2, heading path and keywords 1.5, text 1, as
    /// SQLite's bm25 weighs the columns), from the blocks and tail of `PostgresKeywordIndex` and
    /// the statistics the triggers keep. Higher is better. Only the query's filters' snippets
    /// (`allowed`, read here when not given), else those a search without filters may show.
    func keywordRanking(_ query: SearchQuery, limit: Int, allowed: Set<Int64>?) throws -> [(id: Int64, score: Double)] {
        let allowed = try allowed ?? filteredSnippetIDs(query)
        let excluded = allowed == nil ? try hiddenSnippetIDs(user: query.user, everyUser: query.everyUser) : []
        // Sets read for this call alone: no bitmaps (making one costs more than this walk's tests).
        return try keywordWalk(query, limit: limit, allowed: allowed, excluded: excluded, pruning: true, bitmaps: false).ranking
    }

    func keywordRanking(_ query: SearchQuery, limit: Int, allowed: Set<Int64>?, excluded: Set<Int64>) throws -> [(id: Int64, score: Double)] {
        try keywordWalk(query, limit: limit, allowed: allowed, excluded: excluded, pruning: true).ranking
    }

    /// The keyword ranking and what it read; without `pruning`, every block of the query's terms.
    /// With `bitmaps`, large sets are tested as the bitmaps `idBitmaps` keeps for them: for sets a
    /// caller keeps and passes again (the retriever's, per index generation).
    func keywordWalk(_ query: SearchQuery, limit: Int, allowed: Set<Int64>?, excluded: Set<Int64>, pruning: Bool, bitmaps: Bool = true) throws
        -> (ranking: [(id: Int64, score: Double)], counts: KeywordWalk.Counts) {
        guard let words = keywords.words(query.text) else {
            throw KBError(.unprocessable, "The query \"\(query.text)\" has no words to search for. Type some words.")
        }
        guard limit > 0 else { return ([], KeywordWalk.Counts()) }
        if let allowed, allowed.isEmpty { return ([], KeywordWalk.Counts()) }
        var sql = SQL(prepared: true)
        let lexemes = keywords.lexemes(words, sql: &sql)
        let reading = try PostgresKeywordIndex.read(lexemes: lexemes, &sql, session)
        if let bulk = reading.bulkLoad {
            throw KBError(.database, "\(location) was being filled by `kb export` (\(bulk)), which did not finish, so its keyword index is incomplete. Export again into an empty database.")
        }
        let deleted = reading.deleted
        let among = allowed.flatMap { $0.count <= PostgresKeywordIndex.lookupLimit ? $0 : nil }
        let bitmaps = bitmaps ? idBitmaps : nil
        let allowedBits = allowed.flatMap { bitmaps?.bitmap($0) }, excludedBits = bitmaps?.bitmap(excluded)
        return try PostgresKeywordIndex.rank(reading, limit: limit, among: among, accept: { id in
            guard deleted.isEmpty || !deleted.contains(id) else { return false }
            if let allowedBits { return allowedBits.contains(id) }
            if let allowed { return allowed.contains(id) }
            if let excludedBits { return !excludedBits.contains(id) }
            return !excluded.contains(id)
        }, pruning: pruning, cache: blockCache, session)
    }

    /// `IndexSnapshot.keywordCoverage`: the query's lexemes, their document frequencies as the
    /// keyword ranking reads them (`term_stats`), and whether the snippet's `tsvector` holds each.
    func keywordCoverage(_ query: SearchQuery, of ids: [Int64]) throws -> [KeywordCoverage] {
        guard !ids.isEmpty, let words = keywords.words(query.text) else { return [] }
        var sql = SQL()
        let lexemes = keywords.lexemes(words, sql: &sql)
        sql += """
            WITH q AS (SELECT lexeme, min(slot) AS slot FROM unnest(\(lexemes)) WITH ORDINALITY AS u(lexeme, slot) GROUP BY lexeme),
            st AS (\(Self.keywordStatistics)),
            held AS (SELECT id, tsvector_to_array(fts) AS lexemes FROM snippets WHERE id = ANY (\(sql.bind(.ints(ids)))))
            SELECT q.lexeme, coalesce(ts.snippets, 0)::float8, coalesce(st.n, 0)::float8,
                   ARRAY(SELECT h.id FROM held h WHERE q.lexeme = ANY (h.lexemes))
            FROM q CROSS JOIN st LEFT JOIN term_stats ts ON ts.lexeme = q.lexeme ORDER BY q.slot
            """
        var terms: [(term: String, df: Double, holders: Set<Int64>)] = [], snippets = 0.0
        for row in try session.rows(sql) {
            terms.append((try row.get(0, String.self), try row.get(1, Double.self), Set(try row.array(3, of: Int64.self))))
            snippets = try row.get(2, Double.self)
        }
        guard !terms.isEmpty else { return [] }
        return ids.map { id in
            KeywordCoverage(terms: terms.map { .init(term: $0.term, documentFrequency: $0.df, held: $0.holders.contains(id)) }, snippets: snippets)
        }
    }

    /// The index's snippet count and average length, as the keyword rankings read them.
    static let keywordStatistics = """
        SELECT max(CASE key WHEN 'fts_snippets' THEN value::float8 END) AS n,
               greatest(max(CASE key WHEN 'fts_total_length' THEN value::float8 END)
                        / greatest(max(CASE key WHEN 'fts_snippets' THEN value::float8 END), 1), 1) AS average
        FROM kb_meta WHERE key IN ('fts_snippets', 'fts_total_length')
        """

    func filteredSnippetIDs(_ query: SearchQuery) throws -> Set<Int64>? {
        guard query.hasFilters else { return nil }
        var sql = SQL("SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE true", prepared: true)
        sql.appendFilters(query)
        return Set(try session.rows(sql).map { try $0.get(0, Int64.self) })
    }

    func sourcePaths(passing query: SearchQuery) throws -> Set<String> {
        var sql = SQL("SELECT DISTINCT so.path FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE true")
        sql.appendFilters(query)
        return Set(try session.rows(sql).map { try $0.get(0, String.self) })
    }

    func sourceOwners() throws -> Set<String> {
        Set(try session.rows("SELECT DISTINCT owner FROM sources WHERE owner IS NOT NULL").map { try $0.get(0, String.self) })
    }

    func hiddenSnippetIDs(user: String?) throws -> Set<Int64> {
        try hiddenSnippetIDs(user: user, everyUser: false)
    }

    /// Memories' snippets and (unless `everyUser`) those of private sources not `user`'s: from
    /// the sources they belong to, looked up in the snippets' index by source. (As a join, the
    /// planner, which takes memory sources for as large as books, scanned every snippet: 382 ms
    /// against 42 ms on a million snippets and 10,000 memories.)
    func hiddenSnippetIDs(user: String?, everyUser: Bool) throws -> Set<Int64> {
        var sql = "SELECT sn.id FROM snippets sn WHERE sn.source_id = ANY (ARRAY(SELECT id FROM sources WHERE kind = 'memory'))"
        if !everyUser {
            sql += """
                 UNION ALL SELECT sn.id FROM snippets sn WHERE sn.source_id = ANY (ARRAY(
                    SELECT id FROM sources WHERE owner IS NOT NULL AND kind <> 'memory' AND owner IS DISTINCT FROM $1))
                """
            return Set(try session.rows(sql, .text(user)).map { try $0.get(0, Int64.self) })
        }
        return Set(try session.rows(sql).map { try $0.get(0, Int64.self) })
    }

    func hits(for ids: [Int64], highlighting text: String?) throws -> [Int64: SearchHit] {
        guard !ids.isEmpty else { return [:] }
        var sql = SQL(prepared: true)
        let idList = sql.bind(.ints(ids))
        var excerpt = "NULL::text"
        // kb's analysis marks the words in Swift (below); a text search configuration, ts_headline.
        let queryTerms = text.flatMap(keywords.words).flatMap { words in keywords.analyzer.map { Set(keywords.terms(of: words, $0)) } }
        if keywords.analyzer == nil, let text, let words = keywords.words(text) {
            let tsquery = PostgresRows.tsquery(words, config: keywords.config, sql: &sql)
            excerpt = """
                CASE WHEN sn.fts @@ \(tsquery) THEN ts_headline('\(keywords.config)'::regconfig, sn.text, \(tsquery),
                    'StartSel=**, StopSel=**, MaxWords=32, MinWords=12') END
                """
        }
        sql += """
            SELECT sn.id, sn.ordinal, sn.text, sn.start_offset, sn.end_offset, sn.heading_path,
                   sn.page_start, sn.page_end, sn.page_label_start, sn.page_label_end,
                   so.path, so.title, so.kind, \(excerpt) AS excerpt, sn.ocr_confidence, sn.weight, \(PostgresRows.tagsColumn("sn.id"))
            FROM snippets sn JOIN sources so ON so.id = sn.source_id
            WHERE sn.id = ANY (\(idList))
            """
        let rows = try session.rows(sql)
        var result: [Int64: SearchHit] = [:]
        for row in rows {
            let id = try row.get(0, Int64.self)
            var pages: PageRange?
            if let start = try row.get(6, Int32?.self), let end = try row.get(7, Int32?.self) {
                pages = PageRange(start: Int(start), end: Int(end), startLabel: try row.get(8), endLabel: try row.get(9))
            }
            let heading = try row.get(5, String.self)
            let snippet = Snippet(
                ordinal: Int(try row.get(1, Int32.self)), text: try row.get(2), start: Int(try row.get(3, Int32.self)),
                end: Int(try row.get(4, Int32.self)),
                headingPath: heading.isEmpty ? [] : heading.components(separatedBy: Snippet.headingSeparator),
                pages: pages, tags: try row.get(16, [String].self).map { Tag($0) }, ocr: try row.get(14, Double?.self).map(OCRMark.init(confidence:)),
                weight: try row.get(15, Double?.self))
            var highlighted = try row.get(13, String?.self)
            if let queryTerms, let analyzer = keywords.analyzer {
                highlighted = KeywordExcerpt.excerpt(of: snippet.text, matching: queryTerms, analyze: analyzer.terms)
            }
            result[id] = SearchHit(
                rank: 0, score: 0, snippetID: id, sourcePath: try row.get(10), sourceTitle: try row.get(11),
                kind: SourceKind(rawValue: try row.get(12, String.self)) ?? .note, snippet: snippet,
                excerpt: highlighted.flatMap { $0.contains("**") ? $0 : nil } ?? snippet.text)
        }
        return result
    }

    func snippetSummaries(_ ids: [Int64], texts: Bool) throws -> [Int64: SnippetSummary] {
        guard !ids.isEmpty else { return [:] }
        var result: [Int64: SnippetSummary] = [:]
        for row in try session.rows(prepared: """
            SELECT sn.id, so.path, \(texts ? "sn.text" : "''"), sn.weight FROM snippets sn JOIN sources so ON so.id = sn.source_id
            WHERE sn.id = ANY ($1::int8[])
            """, .ints(ids)) {
            result[try row.get(0, Int64.self)] = SnippetSummary(sourcePath: try row.get(1), text: try row.get(2), weight: try row.get(3, Double?.self))
        }
        return result
    }

    func hasConversations() throws -> Bool {
        try session.value(Bool.self, "SELECT EXISTS (SELECT 1 FROM sources WHERE kind = 'conversation')") ?? false
    }

    func tagValues(of ids: [Int64], prefix: String) throws -> [Int64: String] {
        guard !ids.isEmpty else { return [:] }
        var result: [Int64: String] = [:]
        for row in try session.rows(prepared: """
            SELECT st.snippet_id, substr(t.name, length($2::text) + 1) FROM snippet_tags st JOIN tags t ON t.id = st.tag_id
            WHERE st.snippet_id = ANY ($1::int8[]) AND starts_with(t.name, $2::text)
            """, .ints(ids), .text(prefix)) {
            result[try row.get(0, Int64.self)] = try row.get(1, String.self)
        }
        return result
    }

    func conversationNeighbours(of ids: [Int64], within: Int) throws -> [Int64: [(id: Int64, distance: Int)]] {
        guard !ids.isEmpty else { return [:] }
        var result: [Int64: [(id: Int64, distance: Int)]] = [:]
        for row in try session.rows("""
            SELECT turn.id, other.id, abs(other.ordinal - turn.ordinal) FROM snippets turn
            JOIN sources so ON so.id = turn.source_id AND so.kind = 'conversation'
            JOIN snippets other ON other.source_id = turn.source_id AND other.ordinal BETWEEN turn.ordinal - $2 AND turn.ordinal + $2
                AND other.id != turn.id
            WHERE turn.id = ANY ($1)
            """, .ints(ids), .int(Int64(within))) {
            result[try row.get(0, Int64.self), default: []].append((try row.get(1, Int64.self), try row.get(2, Int.self)))
        }
        return result
    }

    // MARK: - Memories

    func memories(scopes: [MemoryScope], tags: [Tag], includeSuperseded: Bool) throws -> [Memory] {
        var sql = SQL("SELECT \(PostgresRows.memoryColumns) FROM memories m WHERE true")
        if !includeSuperseded { sql += " AND superseded_by IS NULL AND valid_to IS NULL" }
        if !scopes.isEmpty { sql += " AND scope = ANY (\(sql.bind(.texts(scopes.map(\.name)))))" }
        for tag in tags {
            sql += " AND m.source_id IN (SELECT st.source_id FROM source_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = \(sql.bind(.text(tag.name))))"
        }
        sql += " ORDER BY created_at, id COLLATE \"C\""
        return try session.rows(sql).map(PostgresRows.memory)
    }

    func memories(sourcePaths paths: [String]) throws -> [String: Memory] {
        let ids = paths.compactMap { $0.hasPrefix("memory:") ? String($0.dropFirst(7)) : nil }
        guard !ids.isEmpty else { return [:] }
        return try session.rows("SELECT \(PostgresRows.memoryColumns) FROM memories WHERE id = ANY ($1)", .texts(ids))
            .map(PostgresRows.memory).reduce(into: [String: Memory]()) { $0[$1.sourcePath] = $1 }
    }

    // MARK: - Bots

    func bots() throws -> [Bot] {
        try session.rows("SELECT * FROM bots ORDER BY name COLLATE \"C\"").map(PostgresRows.bot)
    }

    // MARK: - Copying

    func source(path: String) throws -> Source? {
        guard let row = try session.rows("""
            SELECT id, path, kind, title, content_hash, size, modified_at, keywords, ocr, owner FROM sources WHERE path = $1
            """, .text(path)).first else { return nil }
        let tags = try session.rows("""
            SELECT t.name FROM source_tags st JOIN tags t ON t.id = st.tag_id WHERE st.source_id = $1 ORDER BY t.name COLLATE "C"
            """, .int(try row.get("id", Int64.self))).map { Tag(try $0.get(0, String.self)) }
        let keywords = try row.get("keywords", String.self)
        return Source(
            path: try row.get("path"), kind: SourceKind(rawValue: try row.get("kind", String.self)) ?? .note, title: try row.get("title"),
            contentHash: try row.get("content_hash"), size: Int(try row.get("size", Int64.self)),
            modifiedAt: try row.get("modified_at", Double?.self).map(Date.init(timeIntervalSince1970:)), tags: tags,
            keywords: keywords.isEmpty ? [] : keywords.components(separatedBy: "\n"), ocr: try row.get("ocr", String?.self),
            owner: try row.get("owner", String?.self))
    }

    func embedderDimensions() throws -> [(name: String, dimension: Int)] {
        try session.rows("""
            SELECT name, dimension FROM embedders e WHERE EXISTS (SELECT 1 FROM vectors v WHERE v.embedder_id = e.id) ORDER BY name COLLATE "C"
            """).map { (try $0.get(0, String.self), Int(try $0.get(1, Int32.self))) }
    }

    func cacheEntries(embedder: EmbedderRecord) throws -> [(hash: Data, vector: [Float])] {
        try session.rows("SELECT text_hash, data FROM embedding_cache WHERE embedder = $1 ORDER BY text_hash", .text(embedder.name))
            .compactMap { row in
                let hash = try row.get(0, Data.self)
                return VectorCoding.decode(try row.get(1, Data.self), dimension: embedder.dimension).map { (hash, $0) }
            }
    }

    // MARK: - Jobs

    func jobChunks(id: String) throws -> [Data] {
        try session.rows("SELECT data FROM job_chunks WHERE job_id = $1 ORDER BY seq", .text(id)).map { try $0.get(0, Data.self) }
    }

    func unfinishedJobs() throws -> [StoredJob] {
        try session.rows("SELECT * FROM jobs WHERE state IN ('receiving', 'queued', 'running') ORDER BY created_at, id COLLATE \"C\"")
            .map(PostgresRows.job)
    }
}

extension PostgresSnapshot {
    func usage(since: Date, by grouping: UsageGrouping) throws -> [UsageRow] {
        try session.rows(RequestLogSQL.usage(by: grouping, day: "to_char(to_timestamp(at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')", since: "$1"),
                         .double(since.timeIntervalSince1970)).map { row in
            UsageRow(key: try row.get(0, String.self), requests: Int(try row.get(1, Int64.self)), errors: Int(try row.get(2, Int64.self)),
                     degraded: Int(try row.get(3, Int64.self)), results: Int(try row.get(4, Int64.self)), tokens: Int(try row.get(5, Int64.self)),
                     meanLatencyMilliseconds: try row.get(6, Double.self), maxLatencyMilliseconds: try row.get(7, Double.self),
                     p50LatencyMilliseconds: try row.get(8, Double.self), p99LatencyMilliseconds: try row.get(9, Double.self))
        }
    }
}

extension PostgresSnapshot {
    func requestLogEntries() throws -> [RequestLogEntry] {
        try session.rows(RequestLogSQL.entries).map { row in
            var entry = RequestLogEntry(at: Date(timeIntervalSince1970: try row.get(0, Double.self)), route: try row.get(1, String.self),
                                        status: Int(try row.get(2, Int32.self)), requestID: try row.get(3, String.self),
                                        latencyMilliseconds: try row.get(12, Double.self))
            entry.caller = try row.get(4, String?.self)
            entry.bot = try row.get(5, String?.self)
            entry.report = try row.get(6, String?.self)
            entry.userHash = try row.get(7, String?.self)
            entry.results = try row.get(8, Int32?.self).map(Int.init)
            entry.tokens = try row.get(9, Int32?.self).map(Int.init)
            entry.budget = try row.get(10, Int32?.self).map(Int.init)
            entry.degraded = try row.get(11, Int32.self) != 0
            entry.query = try row.get(13, String?.self)
            return entry
        }
    }
}

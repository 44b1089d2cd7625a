import Foundation
import GRDB
public import KBCore
public import KBStore

extension SQLiteStore.Snapshot {
    /// Every vector of an embedder as one row-major matrix, with the snippet ids in row order
    /// and the generation they were read at.
    /// `rows` chooses memories' vectors, the rest's, or all.
    public func loadVectors(embedder: EmbedderRecord, rows wanted: VectorRows = .all) throws -> (ids: [Int64], matrix: [Float], generation: Int64) {
        guard let embedderID = try embedderID(named: embedder.name) else { return ([], [], try generation()) }
        let from = Self.vectorsSQL(wanted)
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(from)", arguments: [embedderID]) ?? 0
        let d = embedder.dimension
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        var matrix = [Float](repeating: 0, count: count * d)
        let rows = try Row.fetchCursor(db, sql: "SELECT v.snippet_id, v.data FROM \(from)", arguments: [embedderID])
        try matrix.withUnsafeMutableBytes { m in
            var offset = 0
            while let row = try rows.next() {
                guard ids.count < count else { break }
                let bytes = try row.withUnsafeData(atIndex: 1) { data -> Int in
                    guard let data, data.count == d * 4 else { return -1 }
                    data.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: m[offset..<offset + d * 4]))
                    return d * 4
                }
                if bytes < 0 {
                    throw KBError(.database, "A stored vector of snippet \(row[0] as Int64) does not hold \(d) floats; the index is damaged. Re-ingest its source.")
                }
                ids.append(row[0])
                offset += bytes
            }
        }
        #if _endian(big)
        matrix = matrix.map { Float(bitPattern: UInt32(littleEndian: $0.bitPattern)) }
        #endif
        if ids.count * d != matrix.count { matrix.removeLast(matrix.count - ids.count * d) }   // rows vanished mid-read
        return (ids, matrix, try generation())
    }

    /// The vectors of one embedder (its id the statement's first argument) among `rows`: the SQL
    /// after `FROM`, `v` being the vectors table.
    static func vectorsSQL(_ rows: VectorRows) -> String {
        switch rows {
        case .all: "vectors v WHERE v.embedder_id = ?"
        case .memories, .knowledge: """
            vectors v JOIN snippets sn ON sn.id = v.snippet_id JOIN sources so ON so.id = sn.source_id
            WHERE v.embedder_id = ? AND so.kind \(rows == .memories ? "=" : "!=") 'memory'
            """
        }
    }

    /// Vectors of the given snippets from one embedder: from memory when the store's copy is
    /// current for this snapshot, else from the file (the same values either way).
    public func vectors(of snippetIDs: [Int64], embedder: EmbedderRecord) throws -> [Int64: [Float]] {
        var result: [Int64: [Float]] = [:]
        let generation = try generation()
        // From the copies in memory that are current; the rest (or all) from the file.
        let current = [vectors, memoryVectors].compactMap { $0.current(embedder, generation) }
        var unread: [Int64] = []
        for id in snippetIDs {
            if let vector = current.lazy.compactMap({ $0.vector(for: id) }).first { result[id] = vector } else { unread.append(id) }
        }
        if current.count == 2 { return result }   // both copies hold every vector there is
        for chunk in stride(from: 0, to: unread.count, by: 500) {
            let part = Array(unread[chunk..<min(chunk + 500, unread.count)])
            let rows = try Row.fetchAll(db, sql: """
                SELECT v.snippet_id, v.data FROM vectors v JOIN embedders e ON e.id = v.embedder_id
                WHERE e.name = ? AND v.snippet_id IN (\(part.map { _ in "?" }.joined(separator: ",")))
                """, arguments: StatementArguments([embedder.name]) + StatementArguments(part))
            for row in rows {
                if let vector = VectorCoding.decode(row[1], dimension: embedder.dimension) { result[row[0]] = vector }
            }
        }
        return result
    }

    /// The nearest snippets by an exact scan of the vectors in memory (loaded when the store's
    /// copy is older than this snapshot), or of their int8 copy with exact rescoring when
    /// `quantized`. `excluded` snippets (memories, when a search does not ask for them) are left
    /// out after scanning deeper by their number, so they never shrink `k`.
    public func vectorRanking(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?,
                              excluded: Set<Int64>, quantized: Bool, rows: VectorRows) throws -> [(id: Int64, score: Float)] {
        try vectorRankingWork(vector, embedder: embedder, k: k, allowed: allowed, excluded: excluded, quantized: quantized, rows: rows)()
    }

    /// The copies in memory are found (and loaded, when older than the snapshot) in the call; the
    /// work searches only them.
    public func vectorRankingWork(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?, excluded: Set<Int64>,
                                  quantized: Bool, rows: VectorRows) throws -> @Sendable () throws -> [(id: Int64, score: Float)] {
        let indexes = try [vectors, memoryVectors].filter { rows == .all || rows == $0.rows }.map { try vectorIndex($0, embedder: embedder) }
        return {
            var entries: [TopK.Entry] = []
            for index in indexes {
                if quantized { index.enableQuantization() }
                entries += try index.search(vector, k: k + excluded.count, allowed: allowed, quantized: quantized)
            }
            if rows == .all {
                var top = TopK(k: k + excluded.count)
                for entry in entries { top.offer(id: entry.id, score: entry.score) }
                entries = top.sorted()
            }
            if !excluded.isEmpty { entries = entries.filter { !excluded.contains($0.id) } }
            return entries.prefix(k).map { ($0.id, $0.score) }
        }
    }

    /// One of the store's vector copies, loaded from this snapshot when it is older.
    func vectorIndex(_ cache: VectorCache, embedder: EmbedderRecord) throws -> VectorMatrix {
        try cache.index(for: embedder, generation: try generation()) { try loadVectorIndex(cache, embedder: embedder) }
    }

    /// Ids of the snippets that pass a query's filters (tags, kinds, source prefixes); nil when
    /// the query has no filters (everything passes).
    public func filteredSnippetIDs(_ query: SearchQuery) throws -> Set<Int64>? {
        guard query.hasFilters else { return nil }
        var dialect = SQLiteDialect()
        let sql = "SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE 1 = 1" + FilterSQL.conditions(query, &dialect)
        return Set(try Int64.fetchAll(db, sql: sql, arguments: dialect.arguments))
    }

    /// Paths of the sources with a snippet that passes the query's filters.
    public func sourcePaths(passing query: SearchQuery) throws -> Set<String> {
        var dialect = SQLiteDialect()
        let sql = "SELECT DISTINCT so.path FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE 1 = 1" + FilterSQL.conditions(query, &dialect)
        return Set(try String.fetchAll(db, sql: sql, arguments: dialect.arguments))
    }

    /// Hits for snippet ids (score and rank left at 0). With `highlighting`, snippets that match
    /// its words get an FTS5 excerpt with the matches in `**`; others show their text.
    public func hits(for ids: [Int64], highlighting text: String? = nil) throws -> [Int64: SearchHit] {
        guard !ids.isEmpty else { return [:] }
        let match = try text.flatMap { KeywordQuery.match(for: $0, language: try keywordLanguage()) }
        var result: [Int64: SearchHit] = [:]
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let part = Array(ids[chunk..<min(chunk + 500, ids.count)])
            let list = SQLiteStore.inList(part)
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT sn.id, sn.ordinal, sn.text, sn.start_offset, sn.end_offset, sn.heading_path,
                       sn.page_start, sn.page_end, sn.page_label_start, sn.page_label_end,
                       so.path, so.title, so.kind, sn.text AS excerpt, sn.ocr_confidence, sn.weight
                FROM snippets sn JOIN sources so ON so.id = sn.source_id
                WHERE sn.id IN (\(list.sql))
                """), arguments: list.arguments)
            var excerpts: [Int64: String] = [:]
            if let match {
                for row in try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT rowid, snippet(snippets_fts, 0, '**', '**', '…', 32) FROM snippets_fts
                    WHERE snippets_fts MATCH ? AND rowid IN (\(list.sql))
                    """), arguments: StatementArguments([match]) + list.arguments) {
                    if let excerpt = row[1] as String?, excerpt.contains("**") { excerpts[row[0]] = excerpt }
                }
            }
            let tags = try SQLiteStore.tags(ofSnippets: part, in: db)
            for row in rows {
                var hit = SQLiteStore.hit(row, rank: 0, score: 0, tags: tags)
                if let excerpt = excerpts[hit.snippetID] { hit.excerpt = excerpt }
                result[hit.snippetID] = hit
            }
        }
        return result
    }
}

extension SQLiteStore {
    /// A hit from a row of `hits(for:)`'s query (read by position: looking a column up by name
    /// compares names).
    static func hit(_ row: Row, rank: Int, score: Double, tags: [Int64: [Tag]]) -> SearchHit {
        let id: Int64 = row[0]
        var pages: PageRange?
        if let start = row[6] as Int?, let end = row[7] as Int? {
            pages = PageRange(start: start, end: end, startLabel: row[8], endLabel: row[9])
        }
        let heading: String = row[5]
        let snippet = Snippet(
            ordinal: row[1], text: row[2], start: row[3], end: row[4],
            headingPath: heading.isEmpty ? [] : heading.components(separatedBy: Snippet.headingSeparator),
            pages: pages, tags: tags[id] ?? [], ocr: (row[14] as Double?).map(OCRMark.init(confidence:)),
            weight: row[15])
        return SearchHit(
            rank: rank, score: score, snippetID: id,
            sourcePath: row[10], sourceTitle: row[11], kind: SourceKind(rawValue: row[12]) ?? .note,
            snippet: snippet, excerpt: row[13])
    }
}

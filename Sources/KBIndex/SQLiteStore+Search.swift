import Foundation
import GRDB
public import KBCore

extension SQLiteStore {
    /// Column weights for bm25: snippet text, source title, heading path, source keywords.
    static let bm25Weights = "1.0, 2.0, 1.5, 1.5"

    /// Keyword search with FTS5 bm25. Filters (tags, kinds, source prefixes) apply before the
    /// limit, so a filtered search returns `limit` hits whenever that many match.
    public func keywordSearch(_ query: SearchQuery) throws -> [SearchHit] {
        guard let match = KeywordQuery.match(for: query.text) else {
            throw KBError(.invalidArgument, "The query \"\(query.text)\" has no words to search for. Type some words.")
        }
        guard query.limit > 0 else { return [] }
        var sql = """
            SELECT sn.id, sn.ordinal, sn.text, sn.start_offset, sn.end_offset, sn.heading_path,
                   sn.page_start, sn.page_end, sn.page_label_start, sn.page_label_end,
                   so.path, so.title, so.kind,
                   bm25(snippets_fts, \(Self.bm25Weights)) AS rank,
                   snippet(snippets_fts, 0, '**', '**', '…', 32) AS excerpt
            FROM snippets_fts
            JOIN snippets sn ON sn.id = snippets_fts.rowid
            JOIN sources so ON so.id = sn.source_id
            WHERE snippets_fts MATCH ?
            """
        var arguments: StatementArguments = [match]
        appendFilters(query, to: &sql, arguments: &arguments)
        sql += " ORDER BY rank, sn.id LIMIT ?"
        arguments += [query.limit]

        let finalSQL = sql
        let finalArguments = arguments
        return try read { db in
            let rows = try Row.fetchAll(db, sql: finalSQL, arguments: finalArguments)
            let tags = try Self.tags(ofSnippets: rows.map { $0[0] as Int64 }, in: db)
            return rows.enumerated().map { index, row in
                Self.hit(row, rank: index + 1, score: -(row["rank"] as Double), tags: tags)
            }
        }
    }

    /// Adds `AND …` clauses for the query's filters; `sn` is the snippet alias, `so` the source alias.
    func appendFilters(_ query: SearchQuery, to sql: inout String, arguments: inout StatementArguments) {
        if !query.kinds.isEmpty {
            let kinds = query.kinds.map(\.rawValue).sorted()
            sql += " AND so.kind IN (\(kinds.map { _ in "?" }.joined(separator: ", ")))"
            arguments += StatementArguments(kinds)
        }
        if !query.sourcePrefixes.isEmpty {
            sql += " AND (" + query.sourcePrefixes.map { _ in "substr(so.path, 1, ?) = ?" }.joined(separator: " OR ") + ")"
            for prefix in query.sourcePrefixes { arguments += [prefix.count, prefix] }
        }
        for tag in query.tags {
            sql += " AND sn.id IN (SELECT st.snippet_id FROM snippet_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = ?)"
            arguments += [tag.name]
        }
    }

    static func tags(ofSnippets ids: [Int64], in db: Database) throws -> [Int64: [Tag]] {
        guard !ids.isEmpty else { return [:] }
        var result: [Int64: [Tag]] = [:]
        let rows = try Row.fetchAll(db, sql: """
            SELECT st.snippet_id, t.name FROM snippet_tags st JOIN tags t ON t.id = st.tag_id
            WHERE st.snippet_id IN (\(ids.map { _ in "?" }.joined(separator: ","))) ORDER BY t.name
            """, arguments: StatementArguments(ids))
        for row in rows { result[row[0], default: []].append(Tag(row[1] as String)) }
        return result
    }
}

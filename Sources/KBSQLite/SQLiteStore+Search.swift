import Foundation
import GRDB
public import KBCore
public import KBStore

extension SQLiteStore {
    /// Column weights for bm25: snippet text, source title, heading path, source keywords.
    static let bm25Weights = "1.0, 2.0, 1.5, 1.5"
    /// Filtered keyword rankings whose snippets form at most this many runs of consecutive ids
    /// seek them by rowid ranges (each seek well under a millisecond to about 2 ms).
    static let rankedByRowidRanges = 64
}

extension SQLiteStore.Snapshot {
    /// Snippet ids and scores (negated bm25, higher is better) of the best keyword matches.
    public func keywordRanking(_ query: SearchQuery, limit: Int, allowed: Set<Int64>?) throws -> [(id: Int64, score: Double)] {
        let language = try keywordLanguage()
        guard let match = KeywordQuery.match(for: query.text, language: language) else {
            throw KBError(.unprocessable, "The query \"\(query.text)\" has no words to search for. Type some words.")
        }
        guard limit > 0 else { return [] }
        guard query.hasFilters else {
            let sql = """
                SELECT snippets_fts.rowid, bm25(snippets_fts, \(SQLiteStore.bm25Weights)) AS rank
                FROM snippets_fts WHERE snippets_fts MATCH ? AND snippets_fts.rowid NOT IN (\(SQLiteStore.hiddenSnippetIDs))
                ORDER BY rank, snippets_fts.rowid LIMIT ?
                """
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [match, query.user, limit]).map { ($0[0], -($0[1] as Double)) }
        }
        let allowed = try allowed ?? filteredSnippetIDs(query) ?? []
        if allowed.count <= 16 * SQLiteStore.rankedByRowidRanges {
            // A few snippets (a user's memories): from the postings when a server holds them (a
            // lookup per snippet and word), else FTS5 seeks them — loading the postings for one
            // small search would cost far more.
            if keywords.holdsCopy, let ranking = try keywordRankingInMemory(query.text, language: language, limit: limit, allowed: allowed) {
                return ranking
            }
            let runs = Self.runs(of: allowed)
            if runs.count <= SQLiteStore.rankedByRowidRanges { return try keywordRanking(match: match, limit: limit, within: runs) }
        }
        if let ranking = try keywordRankingInMemory(query.text, language: language, limit: limit, allowed: allowed) { return ranking }
        // The index's ranking, unjoined, read until `limit` snippets the filters let through have
        // come: joining every match with its snippet and source (or ranking twice) cost a lookup
        // per match, tens of thousands for common words at 100,000 snippets.
        let matches = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT snippets_fts.rowid, bm25(snippets_fts, \(SQLiteStore.bm25Weights)) AS rank
            FROM snippets_fts WHERE snippets_fts MATCH ? ORDER BY rank, snippets_fts.rowid
            """), arguments: [match])
        var ranking: [(id: Int64, score: Double)] = []
        while ranking.count < limit, let row = try matches.next() {
            let id: Int64 = row[0]
            if allowed.contains(id) { ranking.append((id, -(row[1] as Double))) }
        }
        return ranking
    }

    /// The keyword ranking of a few snippets (a user's memories): FTS5 seeks each run of
    /// consecutive ids with a rowid range (FTS5 does not seek for `rowid IN (…)`, and reads every
    /// match of every word instead: ~50 ms for common words at 100,000 snippets, against well under
    /// a millisecond a range). bm25 scores a snippet the same whatever else is asked for.
    private func keywordRanking(match: String, limit: Int, within runs: [ClosedRange<Int64>]) throws -> [(id: Int64, score: Double)] {
        let statement = try db.cachedStatement(sql: """
            SELECT rowid, bm25(snippets_fts, \(SQLiteStore.bm25Weights)) FROM snippets_fts
            WHERE snippets_fts MATCH ? AND rowid BETWEEN ? AND ?
            """)
        var ranking: [(id: Int64, score: Double)] = []
        for run in runs {
            for row in try Row.fetchAll(statement, arguments: [match, run.lowerBound, run.upperBound]) {
                ranking.append((row[0], -(row[1] as Double)))
            }
        }
        // As the SQL ranking orders: by bm25, then by id.
        ranking.sort { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
        return Array(ranking.prefix(limit))
    }

    /// The runs of consecutive ids in `ids`, in order.
    static func runs(of ids: Set<Int64>) -> [ClosedRange<Int64>] {
        var runs: [ClosedRange<Int64>] = []
        for id in ids.sorted() {
            if let last = runs.last, last.upperBound + 1 == id { runs[runs.count - 1] = last.lowerBound...id } else { runs.append(id...id) }
        }
        return runs
    }

    /// Source path, text and weight of snippets: what weighting, grouping and near-duplicate checks need.
    public func snippetSummaries(_ ids: [Int64], texts: Bool) throws -> [Int64: SnippetSummary] {
        var result: [Int64: SnippetSummary] = [:]
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let list = SQLiteStore.inList(Array(ids[chunk..<min(chunk + 500, ids.count)]))
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT sn.id, so.path, \(texts ? "sn.text" : "''"), sn.weight FROM snippets sn JOIN sources so ON so.id = sn.source_id
                WHERE sn.id IN (\(list.sql))
                """), arguments: list.arguments) {
                result[row[0]] = SnippetSummary(sourcePath: row[1], text: row[2], weight: row[3])
            }
        }
        return result
    }

    public func hasConversations() throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sources WHERE kind = 'conversation')") ?? false
    }

    public func tagValues(of ids: [Int64], prefix: String) throws -> [Int64: String] {
        var result: [Int64: String] = [:]
        let length = prefix.unicodeScalars.count
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let list = SQLiteStore.inList(Array(ids[chunk..<min(chunk + 500, ids.count)]))
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT st.snippet_id, substr(t.name, \(length + 1)) FROM snippet_tags st JOIN tags t ON t.id = st.tag_id
                WHERE st.snippet_id IN (\(list.sql)) AND substr(t.name, 1, \(length)) = ?
                """), arguments: list.arguments + [prefix]) {
                result[row[0]] = row[1]
            }
        }
        return result
    }

    public func conversationNeighbours(of ids: [Int64], within: Int) throws -> [Int64: [(id: Int64, distance: Int)]] {
        var result: [Int64: [(id: Int64, distance: Int)]] = [:]
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let list = SQLiteStore.inList(Array(ids[chunk..<min(chunk + 500, ids.count)]))
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT turn.id, other.id, abs(other.ordinal - turn.ordinal) FROM snippets turn
                JOIN sources so ON so.id = turn.source_id AND so.kind = 'conversation'
                JOIN snippets other ON other.source_id = turn.source_id AND other.ordinal BETWEEN turn.ordinal - ? AND turn.ordinal + ?
                    AND other.id != turn.id
                WHERE turn.id IN (\(list.sql))
                """), arguments: [within, within] + list.arguments) {
                result[row[0], default: []].append((row[1], row[2]))
            }
        }
        return result
    }
}

/// SQLite's way of binding values (`?`, positional), "starts with" (`substr`, which compares
/// exactly, where LIKE would fold case and treat `%` and `_` as patterns) and "is one of" (`IN`),
/// for `FilterSQL`.
struct SQLiteDialect: SQLDialect {
    var arguments = StatementArguments()

    mutating func bind(_ value: SQLValue) -> String {
        switch value {
        case .text(let text): arguments += [text]
        case .int(let number): arguments += [number]
        case .double(let number): arguments += [number]
        }
        return "?"
    }

    mutating func startsWith(_ column: String, _ prefix: String) -> String {
        let length = bind(.int(Int64(prefix.unicodeScalars.count)))
        return "substr(\(column), 1, \(length)) = \(bind(.text(prefix)))"
    }

    mutating func isOneOf(_ column: String, _ values: [String]) -> String {
        "\(column) IN (" + values.map { bind(.text($0)) }.joined(separator: ", ") + ")"
    }
}

extension SQLiteStore {
    /// SQL for the snippet ids a search without filters leaves out: every memory's (searched only
    /// when asked for), and those of private sources of other users than the one bound (none: all).
    static let hiddenSnippetIDs = """
        SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id
        WHERE so.kind = 'memory' OR (so.owner IS NOT NULL AND so.owner IS NOT ?)
        """

    static func tags(ofSnippets ids: [Int64], in db: Database) throws -> [Int64: [Tag]] {
        guard !ids.isEmpty else { return [:] }
        var result: [Int64: [Tag]] = [:]
        let list = inList(ids)
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT st.snippet_id, t.name FROM snippet_tags st JOIN tags t ON t.id = st.tag_id
            WHERE st.snippet_id IN (\(list.sql)) ORDER BY t.name
            """), arguments: list.arguments)
        for row in rows { result[row[0], default: []].append(Tag(row[1] as String)) }
        return result
    }
}

extension SQLiteStore.Snapshot {
    /// Snippet ids a search without filters leaves out (see `SQLiteStore.hiddenSnippetIDs`).
    public func sourceOwners() throws -> Set<String> {
        Set(try String.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT owner FROM sources WHERE owner IS NOT NULL")))
    }

    public func hiddenSnippetIDs(user: String?) throws -> Set<Int64> {
        Set(try Int64.fetchAll(db.cachedStatement(sql: SQLiteStore.hiddenSnippetIDs), arguments: [user]))
    }
}

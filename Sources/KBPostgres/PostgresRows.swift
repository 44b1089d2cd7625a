import Foundation
import KBCore
import KBStore
import PostgresNIO

/// Statements and row readers that reads and writes share.
enum PostgresRows {
    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// pgvector's text form, `[x,y,…]`, with each float written so that it reads back exactly.
    static func vectorLiteral(_ vector: [Float]) -> String {
        "[" + vector.map { $0.isFinite ? "\($0)" : "0" }.joined(separator: ",") + "]"
    }

    /// A tsquery expression ORing the words, each a quoted lexeme (nothing typed is syntax).
    static func tsquery(_ words: [String], config: String, sql: inout SQL) -> String {
        let list = sql.bind(.texts(words))
        let regconfig = sql.bind(.text(config))
        return "to_tsquery(\(regconfig)::regconfig, array_to_string(ARRAY(SELECT quote_literal(w) FROM unnest(\(list)::text[]) w), ' | '))"
    }

    /// The snippet's tsvector under a text search configuration: text (C), source title (A),
    /// heading path and keywords (B).
    static func ftsExpression(config: String, text: String, title: String, heading: String, keywords: String) -> String {
        let c = "'\(config)'::regconfig"
        return """
            setweight(to_tsvector(\(c), \(text)), 'C') || setweight(to_tsvector(\(c), \(title)), 'A')
            || setweight(to_tsvector(\(c), \(heading)), 'B') || setweight(to_tsvector(\(c), \(keywords)), 'B')
            """
    }

    /// A column of the tags of the snippet `id` names, in name order (in the snippets' statement:
    /// one round trip instead of two).
    static func tagsColumn(_ id: String) -> String {
        "ARRAY(SELECT t.name FROM snippet_tags st JOIN tags t ON t.id = st.tag_id WHERE st.snippet_id = \(id) ORDER BY t.name COLLATE \"C\")"
    }

    // MARK: - Memories

    static let memoryColumns = StoredForms.memoryColumns

    static func memory(_ row: PostgresRandomAccessRow) throws -> Memory {
        try StoredForms.memory(
            id: try row.get("id"), scope: try row.get("scope"), title: try row.get("title"), content: try row.get("content"),
            tags: try row.get("tags"), createdAt: try row.get("created_at"), updatedAt: try row.get("updated_at"),
            version: Int(try row.get("version", Int32.self)), supersededBy: try row.get("superseded_by"),
            validFrom: try row.get("valid_from"), validTo: try row.get("valid_to"), expiresAt: try row.get("expires_at"),
            flaggedWrong: Int(try row.get("flagged_wrong", Int32.self)), useful: Int(try row.get("useful", Int32.self)))
    }

    // MARK: - Bots

    static func bot(_ row: PostgresRandomAccessRow) throws -> Bot {
        try StoredForms.bot(
            name: try row.get("name"), systemPrompt: try row.get("system_prompt"), sources: try row.get("sources"),
            memoryScopes: try row.get("memory_scopes"), createdAt: try row.get("created_at"), updatedAt: try row.get("updated_at"))
    }
}

extension PostgresRows {
    static func job(_ row: PostgresRandomAccessRow) throws -> StoredJob {
        let stateName = try row.get("state", String.self)
        guard let state = Job.State(rawValue: stateName) else {
            throw KBError(.database, "The job \(try row.get("id", String.self)) has the unknown state '\(stateName)'.")
        }
        let warnings = try row.get("warnings", String.self), bots = try row.get("bots", String.self)
        let job = Job(
            id: try row.get("id"), source: try row.get("source"), state: state, contentType: try row.get("content_type"),
            size: Int(try row.get("size", Int64.self)),
            progress: Job.Progress(pagesDone: Int(try row.get("pages_done", Int32.self)), pagesTotal: Int(try row.get("pages_total", Int32.self)),
                                   snippetsDone: Int(try row.get("snippets_done", Int32.self)),
                                   snippetsTotal: Int(try row.get("snippets_total", Int32.self))),
            error: try row.get("error"), warnings: warnings.isEmpty ? [] : warnings.components(separatedBy: "\n"),
            createdAt: Date(timeIntervalSince1970: try row.get("created_at")), updatedAt: Date(timeIntervalSince1970: try row.get("updated_at")))
        return StoredJob(job: job, title: try row.get("title"), tags: StoredForms.tags(try row.get("tags")), owner: try row.get("owner"),
                         bots: bots.isEmpty ? [] : bots.components(separatedBy: "\n"), contentHash: try row.get("content_hash"))
    }
}

/// PostgreSQL's way of binding values (`$n`), "starts with" (`starts_with`) and "is one of"
/// (`= ANY` of one array parameter), for `FilterSQL`.
struct PostgresDialect: SQLDialect {
    var sql: SQL

    mutating func bind(_ value: SQLValue) -> String {
        switch value {
        case .text(let text): sql.bind(.text(text))
        case .int(let number): sql.bind(.int(number))
        case .double(let number): sql.bind(.double(number))
        }
    }

    mutating func startsWith(_ column: String, _ prefix: String) -> String {
        "starts_with(\(column), \(bind(.text(prefix))))"
    }

    mutating func isOneOf(_ column: String, _ values: [String]) -> String {
        "\(column) = ANY (\(sql.bind(.texts(values))))"
    }
}

extension SQL {
    /// Appends the conditions of a query's filters (`FilterSQL`), binding their values.
    mutating func appendFilters(_ query: SearchQuery) {
        var dialect = PostgresDialect(sql: self)
        let conditions = FilterSQL.conditions(query, &dialect)
        self = dialect.sql
        self += conditions
    }
}

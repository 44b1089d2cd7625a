import Foundation
import KBCore
import KBIndex
import PostgresNIO

/// Statements and row readers that reads and writes share.
enum PostgresRows {
    static func generation(_ session: PGSession) throws -> Int64 {
        Int64(try PostgresSchema.meta("generation", session) ?? "0") ?? 0
    }

    /// Counts every write that changes what searches see.
    @discardableResult
    static func bumpGeneration(_ session: PGSession) throws -> Int64 {
        try session.value(String.self, """
            UPDATE kb_meta SET value = (value::bigint + 1)::text WHERE key = 'generation' RETURNING value
            """).flatMap { Int64($0) } ?? 0
    }

    static func embedderRecord(_ session: PGSession) throws -> EmbedderRecord? {
        let values = try session.rows("SELECT key, value FROM kb_meta WHERE key IN ('embedder', 'dimension', 'embedder_spec')")
            .reduce(into: [String: String]()) { $0[try $1.get(0, String.self)] = try $1.get(1, String.self) }
        guard let name = values["embedder"] else { return nil }
        return EmbedderRecord(name: name, dimension: Int(values["dimension"] ?? "0") ?? 0, spec: values["embedder_spec"] ?? name)
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// pgvector's text form, `[x,y,…]`, with each float written so that it reads back exactly.
    static func vectorLiteral(_ vector: [Float]) -> String {
        "[" + vector.map { $0.isFinite ? "\($0)" : "0" }.joined(separator: ",") + "]"
    }

    /// The words a keyword query searches for (English function words left out unless nothing
    /// else is left), as SQLite's FTS5 query takes them; nil when the text has none.
    static func keywordWords(_ text: String) -> [String]? {
        let all = KeywordQuery.words(in: text)
        guard !all.isEmpty else { return nil }
        let content = all.filter { !KeywordQuery.stopwords.contains($0) }
        return content.isEmpty ? all : content
    }

    /// A tsquery expression ORing the words, each a quoted lexeme (nothing typed is syntax).
    static func tsquery(_ words: [String], config: String, sql: inout SQL) -> String {
        let list = sql.bind(.texts(words))
        let regconfig = sql.bind(.text(config))
        return "to_tsquery(\(regconfig)::regconfig, array_to_string(ARRAY(SELECT quote_literal(w) FROM unnest(\(list)::text[]) w), ' | '))"
    }

    /// The snippet's tsvector: text (C), source title (A), heading path and keywords (B).
    static func ftsExpression(config: String, text: String, title: String, heading: String, keywords: String) -> String {
        let c = "'\(config)'::regconfig"
        return """
            setweight(to_tsvector(\(c), \(text)), 'C') || setweight(to_tsvector(\(c), \(title)), 'A')
            || setweight(to_tsvector(\(c), \(heading)), 'B') || setweight(to_tsvector(\(c), \(keywords)), 'B')
            """
    }

    /// `AND …` conditions for a query's filters (`sn` snippets, `so` sources), as in SQLite:
    /// memories only when asked for, then current ones of the query's scopes.
    static func appendFilters(_ query: SearchQuery, to sql: inout SQL) {
        if query.kinds.isEmpty {
            sql += " AND so.kind != 'memory'"
        } else {
            sql += " AND so.kind = ANY (\(sql.bind(.texts(query.kinds.map(\.rawValue).sorted()))))"
        }
        if query.kinds.contains(.memory) && (!query.scopes.isEmpty || !query.includeSuperseded) {
            var memories = "SELECT source_id FROM memories WHERE true"
            if !query.includeSuperseded { memories += " AND superseded_by IS NULL" }
            if !query.scopes.isEmpty { memories += " AND scope = ANY (\(sql.bind(.texts(query.scopes.map(\.name)))))" }
            sql += " AND (so.kind != 'memory' OR so.id IN (\(memories)))"
        }
        if !query.sourcePrefixes.isEmpty {
            let clauses = query.sourcePrefixes.map { prefix in
                "starts_with(so.path, \(sql.bind(.text(prefix))))"
            }
            sql += " AND (" + clauses.joined(separator: " OR ") + ")"
        }
        for tag in query.tags {
            sql += " AND sn.id IN (SELECT st.snippet_id FROM snippet_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = \(sql.bind(.text(tag.name))))"
        }
        if !query.selectors.isEmpty {
            var clauses: [String] = []
            for selector in query.selectors {
                switch selector {
                case .path(let path):
                    let folder = path.folderPrefix
                    clauses.append("so.path = \(sql.bind(.text(path))) OR starts_with(so.path, \(sql.bind(.text(folder))))")
                case .tag(let tag):
                    clauses.append("sn.id IN (SELECT st.snippet_id FROM snippet_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = \(sql.bind(.text(tag.name))))")
                case .kind(let kind):
                    clauses.append("so.kind = \(sql.bind(.text(kind.rawValue)))")
                }
            }
            sql += " AND (" + clauses.map { "(\($0))" }.joined(separator: " OR ") + ")"
        }
    }

    static func tags(ofSnippets ids: [Int64], _ session: PGSession) throws -> [Int64: [Tag]] {
        guard !ids.isEmpty else { return [:] }
        var result: [Int64: [Tag]] = [:]
        for row in try session.rows("""
            SELECT st.snippet_id, t.name FROM snippet_tags st JOIN tags t ON t.id = st.tag_id
            WHERE st.snippet_id = ANY ($1) ORDER BY t.name COLLATE "C"
            """, .ints(ids)) {
            result[try row.get(0, Int64.self), default: []].append(Tag(try row.get(1, String.self)))
        }
        return result
    }

    static func snippetIDs(ofPath path: String, _ session: PGSession) throws -> [Int64] {
        try session.rows("SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE so.path = $1 ORDER BY sn.ordinal", .text(path))
            .map { try $0.get(0, Int64.self) }
    }

    // MARK: - Memories

    static let memoryColumns = "id, scope, title, content, tags, created_at, updated_at, version, superseded_by"

    static func memory(_ row: PostgresRandomAccessRow) throws -> Memory {
        let tags = try row.get("tags", String.self)
        return Memory(
            id: try row.get("id"), scope: try MemoryScope(try row.get("scope", String.self)), title: try row.get("title"),
            content: try row.get("content"), tags: tags.isEmpty ? [] : tags.components(separatedBy: "\n").map { Tag($0) },
            createdAt: Date(timeIntervalSince1970: try row.get("created_at")),
            updatedAt: Date(timeIntervalSince1970: try row.get("updated_at")),
            version: Int(try row.get("version", Int32.self)), supersededBy: try row.get("superseded_by"))
    }

    static func resolveMemoryID(_ idOrPrefix: String, _ session: PGSession) throws -> String {
        try MemoryIDs.resolved(try session.rows("SELECT id FROM memories WHERE starts_with(id, $1) ORDER BY id COLLATE \"C\" LIMIT 6",
                                                .text(idOrPrefix)).map { try $0.get(0, String.self) }, for: idOrPrefix)
    }

    static func fetchMemory(id: String, _ session: PGSession) throws -> Memory? {
        try session.rows("SELECT \(memoryColumns) FROM memories WHERE id = $1", .text(id)).first.map(memory)
    }

    static func history(_ id: String, _ session: PGSession) throws -> [MemoryVersion] {
        try session.rows("""
            SELECT version, title, content, tags, updated_at FROM memory_versions WHERE memory_id = $1 ORDER BY version
            """, .text(id)).map { row in
            let tags = try row.get("tags", String.self)
            return MemoryVersion(
                version: Int(try row.get("version", Int32.self)), title: try row.get("title"), content: try row.get("content"),
                tags: tags.isEmpty ? [] : tags.components(separatedBy: "\n").map { Tag($0) },
                updatedAt: Date(timeIntervalSince1970: try row.get("updated_at")))
        }
    }

    static func current(contentKey: String, scope: MemoryScope, _ session: PGSession) throws -> Memory? {
        try session.rows("""
            SELECT \(memoryColumns) FROM memories WHERE scope = $1 AND content_key = $2 AND superseded_by IS NULL
            """, .text(scope.name), .text(contentKey)).first.map(memory)
    }

    // MARK: - Bots

    static func bot(_ row: PostgresRandomAccessRow) throws -> Bot {
        let sources = try row.get("sources", String.self), scopes = try row.get("memory_scopes", String.self)
        return Bot(
            name: try row.get("name"), systemPrompt: try row.get("system_prompt"),
            sources: try JSONDecoder().decode([String].self, from: Data(sources.utf8)).map(SourceSelector.init),
            memoryScopes: scopes.split(separator: "\n").map(String.init),
            createdAt: Date(timeIntervalSince1970: try row.get("created_at")),
            updatedAt: Date(timeIntervalSince1970: try row.get("updated_at")))
    }
}

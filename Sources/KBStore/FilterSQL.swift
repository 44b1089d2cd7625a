import Foundation
public import KBCore

/// A value bound to a statement parameter by a ``SQLDialect``.
public enum SQLValue: Sendable, Hashable {
    case text(String)
    case int(Int64)
    case double(Double)
}

/// How a store's SQL binds values and says "starts with" and "is one of": what the one filter
/// builder (``FilterSQL``) needs to write the same conditions for SQLite and PostgreSQL.
public protocol SQLDialect {
    /// Binds `value` and returns its placeholder.
    mutating func bind(_ value: SQLValue) -> String
    /// True when `column` starts with `prefix`.
    mutating func startsWith(_ column: String, _ prefix: String) -> String
    /// True when `column` equals one of `values` (never empty).
    mutating func isOneOf(_ column: String, _ values: [String]) -> String
}

/// The `AND …` conditions that a search query's filters add to a statement over snippets `sn`
/// joined with their sources `so`, written once for every store.
///
/// Memories are searched only when asked for (`kinds` names `.memory`), and then only those that
/// hold at the query's time (`memoriesAsOf`, else now: current, not expired; never one marked
/// wrong) unless `includeSuperseded`, of the query's scopes (all when none are named). A private
/// source is searched only by a query made for its owner (`user`). Tags must all be present;
/// source prefixes and bot selectors each need one to match.
public enum FilterSQL {
    public static func conditions(_ query: SearchQuery, _ dialect: inout some SQLDialect) -> String {
        var sql = ""
        if query.everyUser {
            // a listing of what a bot can see, for whichever user
        } else if let user = query.user {
            sql += " AND (so.owner IS NULL OR so.owner = \(dialect.bind(.text(user))))"
        } else {
            sql += " AND so.owner IS NULL"
        }
        if query.kinds.isEmpty {
            sql += " AND so.kind != 'memory'"
        } else {
            sql += " AND " + dialect.isOneOf("so.kind", query.kinds.map(\.rawValue).sorted())
        }
        if query.kinds.contains(.memory) && (!query.scopes.isEmpty || !query.includeSuperseded) {
            var memories = "SELECT source_id FROM memories WHERE 1 = 1"
            if let window = query.memoriesDuring, !query.includeSuperseded {
                memories += " AND flagged_wrong = 0"
                let start = window.start.map { SQLValue.double($0.timeIntervalSince1970) }, end = window.end.map { SQLValue.double($0.timeIntervalSince1970) }
                if window.told {
                    // Said then: from the turn it was learned from (or the date it names), else
                    // when it was stored — its validFrom.
                    if let start { memories += " AND valid_from >= \(dialect.bind(start))" }
                    if let end { memories += " AND valid_from < \(dialect.bind(end))" }
                } else {
                    if let end { memories += " AND valid_from < \(dialect.bind(end))" }
                    if let start {
                        memories += " AND (valid_to IS NULL OR valid_to > \(dialect.bind(start))) AND (expires_at IS NULL OR expires_at > \(dialect.bind(start)))"
                    }
                }
            } else if !query.includeSuperseded {
                if query.memoriesAsOf == nil { memories += " AND superseded_by IS NULL" }
                // Bound once per use: SQLite's placeholders are positional.
                let time = SQLValue.double((query.memoriesAsOf ?? Date()).timeIntervalSince1970)
                memories += " AND flagged_wrong = 0 AND valid_from <= \(dialect.bind(time)) AND (valid_to IS NULL OR valid_to > \(dialect.bind(time)))"
                    + " AND (expires_at IS NULL OR expires_at > \(dialect.bind(time)))"
            }
            if !query.scopes.isEmpty { memories += " AND " + dialect.isOneOf("scope", query.scopes.map(\.name)) }
            // Only memories asked for: a plain IN, which SQLite drives from the memories' scope
            // index (with the OR, it visits every memory source: 30 ms at 100,000 memories).
            sql += query.kinds == [.memory] ? " AND so.id IN (\(memories))" : " AND (so.kind != 'memory' OR so.id IN (\(memories)))"
        }
        if !query.sourcePrefixes.isEmpty {
            sql += " AND (" + query.sourcePrefixes.map { dialect.startsWith("so.path", $0) }.joined(separator: " OR ") + ")"
        }
        for tag in query.tags {
            sql += " AND " + tagged(tag, &dialect)
        }
        if !query.anyTags.isEmpty {
            sql += " AND (" + query.anyTags.map { tagged($0, &dialect) }.joined(separator: " OR ") + ")"
        }
        if !query.selectors.isEmpty {
            let clauses = query.selectors.map { selector -> String in
                switch selector {
                case .path(let path):
                    "so.path = \(dialect.bind(.text(path))) OR " + dialect.startsWith("so.path", path.folderPrefix)
                case .tag(let tag):
                    tagged(tag, &dialect)
                case .kind(let kind):
                    "so.kind = \(dialect.bind(.text(kind.rawValue)))"
                case .upload(let id):
                    "so.path = \(dialect.bind(.text(Source.uploadPath(id))))"
                }
            }
            sql += " AND (" + clauses.map { "(\($0))" }.joined(separator: " OR ") + ")"
        }
        return sql
    }

    /// True for snippets that carry `tag`.
    static func tagged(_ tag: Tag, _ dialect: inout some SQLDialect) -> String {
        "sn.id IN (SELECT st.snippet_id FROM snippet_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = \(dialect.bind(.text(tag.name))))"
    }
}

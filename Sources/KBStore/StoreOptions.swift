public import Foundation
import KBCore

/// How a knowledge base opens its index, beyond where it is: settings only a database server's
/// index uses, each read from the environment once, here, when not given.
///
/// ```swift
/// let options = try StoreOptions(connections: 16)
/// let kb = try KnowledgeBase.open(at: "postgres://kb@db:5432/kb", store: options)
/// ```
public struct StoreOptions: Sendable, Hashable {
    /// Connections to a PostgreSQL index, and threads waiting on them (`--db-pool`). The default
    /// is `$KB_DB_POOL`, else 8.
    public var connections: Int
    /// How a new PostgreSQL index analyses keywords: `auto` (kb's own analysis, as SQLite's
    /// default: each word by its script's rules) or a text search configuration of the server's
    /// (`simple`, `english`…). The default is `$KB_TEXT_SEARCH`, else `auto`.
    public var textSearch: String
    /// Memory (MB) a process keeps a PostgreSQL index's keyword blocks in, read once and used by
    /// later searches while they stay current (0: none). The default is `$KB_PG_KEYWORD_CACHE_MB`,
    /// else 256.
    public var keywordCacheMegabytes: Int

    public static let defaultConnections = 8
    public static let defaultKeywordCacheMegabytes = 256

    /// Given values win; the others come from `environment`. A `KB_DB_POOL` that is not a whole
    /// number is an error naming it.
    public init(connections: Int? = nil, textSearch: String? = nil, keywordCacheMegabytes: Int? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if let connections {
            self.connections = connections
        } else if let given = environment["KB_DB_POOL"], !given.isEmpty {
            guard let parsed = Int(given) else {
                throw KBError(.invalidArgument, "KB_DB_POOL is '\(given)'; give the number of PostgreSQL connections, e.g. KB_DB_POOL=8.")
            }
            self.connections = parsed
        } else {
            self.connections = Self.defaultConnections
        }
        self.textSearch = textSearch ?? environment["KB_TEXT_SEARCH"].flatMap { $0.isEmpty ? nil : $0 } ?? "auto"
        if let keywordCacheMegabytes {
            self.keywordCacheMegabytes = keywordCacheMegabytes
        } else if let given = environment["KB_PG_KEYWORD_CACHE_MB"], !given.isEmpty {
            guard let parsed = Int(given), parsed >= 0 else {
                throw KBError(.invalidArgument, "KB_PG_KEYWORD_CACHE_MB is '\(given)'; give megabytes (0 for none), e.g. KB_PG_KEYWORD_CACHE_MB=256.")
            }
            self.keywordCacheMegabytes = parsed
        } else {
            self.keywordCacheMegabytes = Self.defaultKeywordCacheMegabytes
        }
    }
}

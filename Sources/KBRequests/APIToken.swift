public import Foundation
public import KBCore
import KBMemory

/// A scoped API token as kb keeps it: its rights and the SHA-256 of its secret, never the secret.
/// Tokens are kept with the index (`kb_meta`), so they survive restarts and every replica of a
/// PostgreSQL index knows them.
public struct APIToken: Sendable, Hashable, Codable, SchemaFieldNotes {
    /// What a token may do beyond memories of its scopes and its bots.
    public enum Right: String, Sendable, Hashable, Codable, CaseIterable, SchemaEnumeration {
        /// Add, list and remove sources; see jobs.
        case sources
        /// Create, change and delete bots.
        case bots
        /// Context for report templates.
        case reports
    }

    public var name: String
    /// The token's public part (`kb_PREFIX_…`), by which it is found.
    public var prefix = ""
    /// Hex SHA-256 of the whole token.
    public var hash = ""
    public var scopes: [String] = []
    public var bots: [String] = []
    public var allow: [Right] = []
    public var readOnly = false
    public var createdAt = Date()
    public var expiresAt: Date?
    public var revokedAt: Date?

    public init(name: String) { self.name = name }

    /// `user:ID`, `user:*`, `bot:NAME` or `global`.
    public static let scopePattern = "^(global|user:\\*|(user|bot):[^\\s\\x00-\\x1f\\x7f-\\x9f\\uFEFF*]{1,200})$"

    /// Seconds in `30d`, `12h`, `90m`, `2w` (days without a unit).
    package static func duration(_ text: String) throws -> TimeInterval {
        do { return try Recency(text).halfLife } catch {
            throw KBError(.invalidArgument, "'\(text)' is not a duration; use a number and a unit: 30d, 12h, 90m, 2w.")
        }
    }

    /// Whether it may read (or, with `write`, write) the memories of `scope`. `user:*` covers
    /// every user and no bot.
    public func covers(_ scope: MemoryScope) -> Bool {
        scopes.contains(scope.name) || (scopes.contains("user:*") && scope.name.hasPrefix("user:"))
    }

    /// What `GET /v1/tokens` and `kb token list` show: everything but the hash.
    public var listed: APIToken {
        var copy = self
        copy.hash = ""
        return copy
    }

    enum CodingKeys: String, CodingKey { case name, prefix, hash, scopes, bots, allow, readOnly, createdAt, expiresAt, revokedAt }

    /// The hash is kept in the token file, never answered.
    public static let fieldNotes: [String: JSONValue] = ["hash": .null]

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(prefix, forKey: .prefix)
        if !hash.isEmpty { try container.encode(hash, forKey: .hash) }
        try container.encode(scopes, forKey: .scopes)
        try container.encode(bots, forKey: .bots)
        try container.encode(allow, forKey: .allow)
        try container.encode(readOnly, forKey: .readOnly)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(revokedAt, forKey: .revokedAt)
    }
}

import Crypto
public import Foundation
public import KBCore
import KBMemory
import KBStore

/// A scoped API token as kb keeps it: its rights and the SHA-256 of its secret, never the secret.
/// Tokens are kept with the index (`kb_meta`), so they survive restarts and every replica of a
/// PostgreSQL index knows them.
public struct APIToken: Sendable, Hashable, Codable {
    /// What a token may do beyond memories of its scopes and its bots.
    public enum Right: String, Sendable, Hashable, Codable, CaseIterable {
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
    static func duration(_ text: String) throws -> TimeInterval {
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

/// A token just made: the secret, shown this once, and what it may do.
public struct CreatedToken: Sendable, Hashable, Codable {
    public var token: String
    public var info: APIToken
}

/// Who a request comes from.
public enum Caller: Sendable, Hashable {
    /// The `--token` / `KB_API_TOKEN` token, or no token on a loopback service without one.
    case admin
    case token(APIToken)
}

extension KnowledgeBase {
    static let tokensKey = "api_tokens"
    /// How long a process trusts the tokens it read: a token revoked on another replica stops
    /// working here within this many seconds.
    static let tokenCacheSeconds: TimeInterval = 2

    /// Makes a token: the secret `kb_PREFIX_SECRET` is returned once and only its SHA-256 kept.
    /// Bots it names must exist; names are unique.
    public func createToken(_ request: TokenRequest) async throws -> CreatedToken {
        var token = try request.validated(limits)
        for bot in token.bots { _ = try await self.bot(bot) }
        let prefix = Self.randomText(8, alphabet: "abcdefghijklmnopqrstuvwxyz0123456789")
        let secret = "kb_\(prefix)_" + Self.randomText(40, alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        token.prefix = prefix
        token.hash = Self.tokenHash(secret)
        token.createdAt = Date()
        let made = token
        try await store.updateMeta(Self.tokensKey) { stored in
            var tokens = try Self.decodeTokens(stored)
            if tokens.contains(where: { $0.name == made.name }) {
                throw KBError(.conflict, "A token is already named \(made.name). Revoke it first (`kb token revoke \(made.name)`), or choose another name.")
            }
            tokens.append(made)
            return (try Self.encodeTokens(tokens), ())
        }
        tokenCache.withLock { $0 = nil }
        return CreatedToken(token: secret, info: made.listed)
    }

    /// Every token, revoked and expired ones included, without hashes.
    public func tokens() async throws -> [APIToken] {
        try await Self.decodeTokens(store.snapshot { try $0.meta(Self.tokensKey) }).map(\.listed)
    }

    /// Revokes a token by name: every request with it is refused from now on (within a couple of
    /// seconds on other replicas).
    public func revokeToken(_ name: String) async throws -> APIToken {
        let name = try Bot.validName(name)
        let revoked = try await store.updateMeta(Self.tokensKey) { stored -> (value: String, result: APIToken) in
            var tokens = try Self.decodeTokens(stored)
            guard let index = tokens.firstIndex(where: { $0.name == name }) else {
                throw KBError(.notFound, "No token is named \(name). `kb token list` lists them.")
            }
            if tokens[index].revokedAt == nil { tokens[index].revokedAt = Date() }
            return (try Self.encodeTokens(tokens), tokens[index])
        }
        tokenCache.withLock { $0 = nil }
        return revoked.listed
    }

    /// Why a bearer token is not accepted.
    public enum TokenProblem: Error, Sendable, Hashable {
        case unknown, expired, revoked
    }

    /// The token a bearer secret belongs to, or why there is none. Tokens are read from the
    /// index at most every `tokenCacheSeconds`.
    public func authenticate(_ secret: String) async throws -> Result<APIToken, TokenProblem> {
        let parts = secret.split(separator: "_", maxSplits: 2)
        guard parts.count == 3, parts[0] == "kb" else { return .failure(.unknown) }
        let now = Date()
        let tokens: [APIToken]
        if let cached = tokenCache.withLock({ cache in cache.flatMap { now.timeIntervalSince($0.read) < Self.tokenCacheSeconds ? $0.tokens : nil } }) {
            tokens = cached
        } else {
            tokens = try await Self.decodeTokens(store.snapshot { try $0.meta(Self.tokensKey) })
            tokenCache.withLock { $0 = (now, tokens) }
        }
        let hash = Self.tokenHash(secret)
        guard let token = tokens.first(where: { $0.prefix == parts[1] }),
              Self.constantTimeEqual(Array(token.hash.utf8), Array(hash.utf8)) else { return .failure(.unknown) }
        if token.revokedAt != nil { return .failure(.revoked) }
        if let expires = token.expiresAt, expires <= now { return .failure(.expired) }
        return .success(token)
    }

    static func tokenHash(_ secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    static func randomText(_ count: Int, alphabet: String) -> String {
        let characters = Array(alphabet)
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in characters[Int(generator.next(upperBound: UInt64(characters.count)))] })
    }

    static func decodeTokens(_ text: String?) throws -> [APIToken] {
        guard let text, !text.isEmpty else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do { return try decoder.decode([APIToken].self, from: Data(text.utf8)) } catch {
            throw KBError(.database, "The index's token list (kb_meta api_tokens) cannot be read: \(error).")
        }
    }

    static func encodeTokens(_ tokens: [APIToken]) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(tokens), as: UTF8.self)
    }
}

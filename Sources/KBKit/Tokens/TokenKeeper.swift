import Crypto
import Foundation
import KBCore
import KBMemory
public import KBRequests
import KBStore

/// The API tokens of an index: made, listed and revoked with the index (`kb_meta`), and the
/// bearer secrets of requests checked against them (read at most every `tokenCacheSeconds`).
struct TokenKeeper: Sendable {
    let store: any IndexStore
    let limits: Limits
    /// The tokens last read from the index, and when.
    let cache = LockedValue<(read: Date, tokens: [APIToken])?>(nil)

    static let tokensKey = "api_tokens"
    /// How long a process trusts the tokens it read: a token revoked on another replica stops
    /// working here within this many seconds.
    static let tokenCacheSeconds: TimeInterval = 2

    /// Makes a token: the secret `kb_PREFIX_SECRET` is returned once and only its SHA-256 kept.
    /// Bots it names must exist; names are unique. Admin only.
    func createToken(_ checked: Checked<TokenRequest>, as caller: Caller) async throws -> CreatedToken {
        var token = checked.valid
        try caller.requireAdmin("make tokens")
        let bots = token.bots
        try await store.snapshot { snapshot in for bot in bots { _ = try snapshot.bot(named: bot) } }
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
        cache.withLock { $0 = nil }
        return CreatedToken(token: secret, info: made.listed)
    }

    /// Every token, revoked and expired ones included, without hashes. Admin only.
    func tokens(as caller: Caller) async throws -> [APIToken] {
        try caller.requireAdmin("list tokens")
        return try await Self.decodeTokens(store.snapshot { try $0.meta(Self.tokensKey) }).map(\.listed)
    }

    /// Revokes a token by name: every request with it is refused from now on (within a couple of
    /// seconds on other replicas).
    func revokeToken(_ name: String, as caller: Caller) async throws -> APIToken {
        let name = try Bot.validName(name)
        try caller.requireAdmin("revoke tokens")
        let revoked = try await store.updateMeta(Self.tokensKey) { stored -> (value: String, result: APIToken) in
            var tokens = try Self.decodeTokens(stored)
            guard let index = tokens.firstIndex(where: { $0.name == name }) else {
                throw KBError(.notFound, "No token is named \(name). `kb token list` lists them.")
            }
            if tokens[index].revokedAt == nil { tokens[index].revokedAt = Date() }
            return (try Self.encodeTokens(tokens), tokens[index])
        }
        cache.withLock { $0 = nil }
        return revoked.listed
    }

    /// The token a bearer secret belongs to, or why there is none. Tokens are read from the
    /// index at most every `tokenCacheSeconds`.
    func authenticate(_ secret: String) async throws -> Result<APIToken, KnowledgeBase.TokenProblem> {
        let parts = secret.split(separator: "_", maxSplits: 2)
        guard parts.count == 3, parts[0] == "kb" else { return .failure(.unknown) }
        let now = Date()
        let tokens: [APIToken]
        if let cached = cache.withLock({ cache in cache.flatMap { now.timeIntervalSince($0.read) < Self.tokenCacheSeconds ? $0.tokens : nil } }) {
            tokens = cached
        } else {
            tokens = try await Self.decodeTokens(store.snapshot { try $0.meta(Self.tokensKey) })
            cache.withLock { $0 = (now, tokens) }
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

/// A token just made: the secret, shown this once, and what it may do.
public struct CreatedToken: Sendable, Hashable, Codable {
    public var token: String
    public var info: APIToken
}

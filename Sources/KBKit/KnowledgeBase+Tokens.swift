public import Foundation
import KBCore
public import KBRequests

extension KnowledgeBase {
    /// Makes a scoped token: the secret `kb_PREFIX_SECRET` is returned once and only its SHA-256
    /// kept. Bots it names must exist; names are unique. Only the admin may.
    public func createToken(_ request: TokenRequest, as caller: Caller) async throws -> CreatedToken {
        try await createToken(try request.checked(limits), as: caller)
    }

    /// As `createToken(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func createToken(_ checked: Checked<TokenRequest>, as caller: Caller) async throws -> CreatedToken {
        try await tokenKeeper.createToken(try inForce(checked), as: caller)
    }

    /// Every token, revoked and expired ones included, without hashes. Only the admin may.
    public func tokens(as caller: Caller) async throws -> [APIToken] {
        try await tokenKeeper.tokens(as: caller)
    }

    /// Revokes a token by name: every request with it is refused from now on (within a couple of
    /// seconds on other replicas). Only the admin may.
    public func revokeToken(_ name: String, as caller: Caller) async throws -> APIToken {
        try await tokenKeeper.revokeToken(name, as: caller)
    }

    /// Why a bearer token is not accepted.
    public enum TokenProblem: Error, Sendable, Hashable {
        case unknown, expired, revoked
    }

    /// The token a bearer secret belongs to, or why there is none. Tokens are read from the
    /// index at most every couple of seconds.
    public func authenticate(_ secret: String) async throws -> Result<APIToken, TokenProblem> {
        try await tokenKeeper.authenticate(secret)
    }
}

/// Who a caller is and what it may do (`GET /v1/me`): the admin may do everything; a scoped
/// token has its scopes, bots and rights. The console shows only what this allows.
public struct CallerInfo: Sendable, Hashable, Codable {
    public var admin: Bool
    /// The token's name (`admin` for the admin token).
    public var name: String
    public var scopes: [String]
    public var bots: [String]
    public var allow: [String]
    public var readOnly: Bool
    public var expiresAt: Date?

    public init(_ caller: Caller) {
        switch caller {
        case .admin:
            (admin, name, scopes, bots, allow, readOnly, expiresAt) = (true, "admin", [], [], APIToken.Right.allCases.map(\.rawValue), false, nil)
        case .token(let token):
            (admin, name, scopes, bots, allow, readOnly, expiresAt) = (false, token.name, token.scopes, token.bots, token.allow.map(\.rawValue), token.readOnly, token.expiresAt)
        }
    }
}

import KBCore

extension KnowledgeBase {
    /// Makes a scoped token: the secret `kb_PREFIX_SECRET` is returned once and only its SHA-256
    /// kept. Bots it names must exist; names are unique. Only the admin may.
    public func createToken(_ request: TokenRequest, as caller: Caller = .admin) async throws -> CreatedToken {
        try await createToken(try request.checked(limits), as: caller)
    }

    /// As `createToken(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func createToken(_ checked: Checked<TokenRequest>, as caller: Caller = .admin) async throws -> CreatedToken {
        try await tokenKeeper.createToken(try inForce(checked), as: caller)
    }

    /// Every token, revoked and expired ones included, without hashes. Only the admin may.
    public func tokens(as caller: Caller = .admin) async throws -> [APIToken] {
        try await tokenKeeper.tokens(as: caller)
    }

    /// Revokes a token by name: every request with it is refused from now on (within a couple of
    /// seconds on other replicas). Only the admin may.
    public func revokeToken(_ name: String, as caller: Caller = .admin) async throws -> APIToken {
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

import Foundation
import KBCore

/// A scoped API token to make: `kb token create`, `POST /v1/tokens` (admin token only).
///
/// ```swift
/// var request = TokenRequest(name: "ada-app")
/// request.scopes = ["user:ada"]
/// request.bots = ["astro"]
/// let created = try await kb.createToken(request, as: .admin)   // created.token is shown once
/// ```
public struct TokenRequest: KBRequest, Hashable {
    public var name: String
    /// Memory scopes it may read and write: `user:ID`, `user:*` (any user, never `bot:` scopes),
    /// `bot:NAME`, `global`.
    public var scopes: [String]?
    /// Bots it may use for context and search.
    public var bots: [String]?
    /// Rights beyond memories and its bots: `sources` (add, list and remove sources, see jobs),
    /// `bots` (create, change and delete bots), `reports` (report context).
    public var allow: [String]?
    /// Reads only: no memory, source or bot is written.
    public var readOnly: Bool?
    /// How long it is valid, e.g. `30d`, `12h`; forever when absent.
    public var expires: String?

    public init(name: String) { self.name = name }

    public static let schemaName = "TokenRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("name", "The token's name (what `kb token list` shows and `revoke` takes).", required: true, pattern: Pattern.botName),
            .strings("scopes", "Memory scopes it may read and write: user:ID, user:* (any user, never bot: scopes), bot:NAME, global.",
                     maxItems: limits.maxListItems, pattern: APIToken.scopePattern),
            .strings("bots", "Bots it may use for context and search.", maxItems: limits.maxListItems, pattern: Pattern.botName),
            .choices("allow", "Rights beyond memories and its bots.", APIToken.Right.allCases.map(\.rawValue), maxItems: limits.maxListItems),
            .boolean("readOnly", "Reads only: no memory, source or bot is written."),
            .string("expires", "How long it is valid, e.g. 30d or 12h; forever when absent.", pattern: Pattern.halfLife),
        ]
    }


    public func validated(_ limits: Limits) throws -> APIToken {
        let rules = FieldRules(Self.self, limits)
        var token = APIToken(name: try rules.text(name, "name"))
        token.scopes = try rules.list(scopes, "scopes")
        token.bots = try rules.list(bots, "bots")
        token.allow = try rules.choices(allow, "allow", as: APIToken.Right.self)
        token.readOnly = readOnly ?? false
        if let expires = try rules.optionalText(expires, "expires") {
            token.expiresAt = Date(timeIntervalSinceNow: try APIToken.duration(expires))
        }
        return token
    }
}

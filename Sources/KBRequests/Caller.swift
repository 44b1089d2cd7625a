package import KBCore

/// Who a request comes from.
public enum Caller: Sendable, Hashable {
    /// The `--token` / `KB_API_TOKEN` token, or no token on a loopback service without one.
    case admin
    case token(APIToken)
}

/// What a caller may do. The admin token (`--token`, `KB_API_TOKEN`) may do everything; a scoped
/// token (`kb token create`) reads and writes the memories of its scopes, uses its bots for
/// context and search, and has the rights it was given (`sources`, `bots`, `reports`); a
/// read-only one writes nothing. Everything else is `forbidden`, with a message naming the right
/// that is missing.
extension Caller {
    package func refuse(_ token: APIToken, _ problem: String) -> KBError {
        KBError(.forbidden, "The token \(token.name) \(problem).")
    }

    /// Admin only: tokens, and what no scoped token may reach.
    package func requireAdmin(_ what: String) throws {
        guard case .token(let token) = self else { return }
        throw refuse(token, "may not \(what); only the admin token (--token, KB_API_TOKEN) may")
    }

    /// Writes of any kind.
    package func requireWriting(_ what: String) throws {
        guard case .token(let token) = self, token.readOnly else { return }
        throw refuse(token, "is read-only: it may not \(what)")
    }

    package func require(_ right: APIToken.Right, writing: Bool, _ what: String) throws {
        guard case .token(let token) = self else { return }
        guard token.allow.contains(right) else {
            throw refuse(token, "may not \(what): it lacks the right \(right.rawValue) (kb token create --allow \(right.rawValue))")
        }
        if writing { try requireWriting(what) }
    }

    package func requireBot(_ name: String?) throws {
        guard case .token(let token) = self else { return }
        guard let name else {
            throw refuse(token, "searches only through its bots (\(Self.list(token.bots))): give \"bot\"")
        }
        guard token.bots.contains(name) else {
            throw refuse(token, "may not use the bot \(name): its bots are \(Self.list(token.bots)) (kb token create --bot \(name))")
        }
    }

    /// Memories of these scopes; none named means every scope, which only the admin may read.
    /// `scopes` is read only for a scoped token (the admin's request is checked where kb answers it).
    package func requireScopes(_ scopes: @autoclosure () throws -> [MemoryScope], writing: Bool) throws {
        guard case .token(let token) = self else { return }
        let scopes = try scopes()
        guard !scopes.isEmpty else {
            throw refuse(token, "may read only the memories of its scopes (\(Self.list(token.scopes))): name the scope")
        }
        if let outside = scopes.first(where: { !token.covers($0) }) {
            throw refuse(token, "may not \(writing ? "write" : "read") the memories of \(outside.name): its scopes are \(Self.list(token.scopes))")
        }
        if writing { try requireWriting("write memories") }
    }

    /// The bots a listing shows.
    package func sees(_ bot: Bot) -> Bool {
        guard case .token(let token) = self else { return true }
        return token.bots.contains(bot.name)
    }

    /// How the feedback log names the caller: `admin`, or `token:NAME`.
    package var logName: String {
        switch self {
        case .admin: "admin"
        case .token(let token): "token:" + token.name
        }
    }

    package static func list(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ", ") }
}

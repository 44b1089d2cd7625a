import Crypto
import Foundation
import Hummingbird
import KBCore
import KBKit
import KBRequests

/// Who may ask: on every route but `/healthz` and the console's static files, `Authorization: Bearer TOKEN` (the scheme in any
/// case, as RFC 7235 allows) with the admin token (compared in constant time: SHA-256 of both,
/// then every byte) or a scoped token (`kb_…`, `kb token create`), which the handler then holds
/// to its rights (`context.caller`, which this middleware sets and nothing else does). An expired,
/// revoked or unknown token is 401. A service on loopback without an admin token lets requests
/// without a token act as admin. The open paths go on with no caller, so they cannot act for anyone.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = KBRequestContext
    let expected: [UInt8]?
    let kb: KnowledgeBase
    /// Paths anyone may reach: `/healthz`, and `/metrics` with `--metrics-public`.
    let open: Set<String>

    init(token: String?, kb: KnowledgeBase, metricsPublic: Bool = false) {
        expected = token.flatMap { $0.isEmpty ? nil : Array(SHA256.hash(data: Data($0.utf8))) }
        self.kb = kb
        open = metricsPublic ? ["/healthz", "/metrics"] : ["/healthz"]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !open.contains(request.uri.path), !Self.isConsole(request.uri.path) else { return try await next(request, context) }
        let given = Self.bearerToken(request.headers[.authorization])
        if let expected, !given.isEmpty {
            let digest = Array(SHA256.hash(data: Data(given.utf8)))
            var difference: UInt8 = 0
            for (a, b) in zip(digest, expected) { difference |= a ^ b }
            if difference == 0 { return try await next(request, context.acting(as: .admin)) }
        }
        if given.hasPrefix("kb_") {
            switch try await kb.authenticate(given) {
            case .success(let token):
                RequestNote.set { $0.caller = token.name }
                return try await next(request, context.acting(as: .token(token)))
            case .failure(.expired):
                throw KBError(.unauthorized, "This token has expired. Ask for a new one (kb token create).")
            case .failure(.revoked):
                throw KBError(.unauthorized, "This token was revoked. Ask for a new one (kb token create).")
            case .failure(.unknown):
                break
            }
        } else if expected == nil {
            return try await next(request, context.acting(as: .admin))   // loopback without an admin token
        }
        throw KBError(.unauthorized, "Send the API token as `Authorization: Bearer TOKEN`.")
    }

    /// The console's page and assets (`/`, `/console…`, `/favicon.ico`): they hold no data; the
    /// API calls they make carry a token.
    static func isConsole(_ path: String) -> Bool {
        path == "/" || path == "/console" || path.hasPrefix("/console/") || path == "/favicon.ico"
    }

    /// The token of a `Bearer` credential (scheme in any case, spaces around it ignored); "" for none.
    static func bearerToken(_ header: String?) -> String {
        guard let header else { return "" }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return "" }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }
}

extension KBRequestContext {
    /// This request's context, acting for `caller`.
    fileprivate func acting(as caller: Caller) -> KBRequestContext {
        var context = self
        context.caller = caller
        return context
    }
}

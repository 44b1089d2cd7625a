import Crypto
import Foundation
import Hummingbird

/// Requires `Authorization: Bearer TOKEN` (the scheme in any case, as RFC 7235 allows) on every
/// route but `/healthz` when a token is set, comparing in constant time (SHA-256 of both, then
/// every byte).
struct AuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let expected: [UInt8]?

    init(token: String?) {
        expected = token.flatMap { $0.isEmpty ? nil : Array(SHA256.hash(data: Data($0.utf8))) }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let expected, request.uri.path != "/healthz" else { return try await next(request, context) }
        let given = Self.bearerToken(request.headers[.authorization])
        let digest = Array(SHA256.hash(data: Data(given.utf8)))
        var difference: UInt8 = 0
        for (a, b) in zip(digest, expected) { difference |= a ^ b }
        guard difference == 0, !given.isEmpty else {
            throw HTTPError(.unauthorized, message: "Send the API token as `Authorization: Bearer TOKEN`.")
        }
        return try await next(request, context)
    }

    /// The token of a `Bearer` credential (scheme in any case, spaces around it ignored); "" for none.
    static func bearerToken(_ header: String?) -> String {
        guard let header else { return "" }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return "" }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import KBCore
@testable import KBKit
import KBRequests
import KBServer
import KBTestSupport
import Testing

/// Every route with every kind of token: none, wrong, expired, revoked, read-only, another
/// user's, another bot's, any user's, one with the sources right, and the admin token. Runs on
/// SQLite and (scripts/test.sh) on PostgreSQL, where tokens live in the shared database.
@Suite struct TokenMatrixTests {
    enum Outcome: Equatable { case ok, unauthorized, forbidden }

    /// The token kinds, in the order of `Route.expect`.
    static let kinds = ["none", "wrong", "expired", "revoked", "readOnly", "ada", "otherUser", "otherBot", "anyUser", "curator", "admin"]

    struct Route {
        let method: HTTPRequest.Method
        /// The path, made for a token kind (some routes act on something of its own).
        let path: @Sendable (String) async throws -> String
        let body: @Sendable (String) -> Any?
        /// One outcome per kind, in `kinds` order; the first four (no valid token) are always 401
        /// but on /healthz.
        let expect: [Outcome]
    }

    static func route(_ method: HTTPRequest.Method, _ path: String, _ body: Any? = nil,
                      readOnly: Outcome, ada: Outcome, otherUser: Outcome, otherBot: Outcome, anyUser: Outcome, curator: Outcome) -> Route {
        nonisolated(unsafe) let body = body
        return Route(method: method, path: { _ in path }, body: { _ in body },
                     expect: [.unauthorized, .unauthorized, .unauthorized, .unauthorized, readOnly, ada, otherUser, otherBot, anyUser, curator, .ok])
    }

    @Test func everyRouteAnswersEveryKindOfTokenAsItsRightsSay() async throws {
        let fixture = try await Fixture()
        let kb = fixture.kb
        let template = try ReportTemplate.parse("sections:\n  - name: Love\n    query: love\n    share: 1\n", name: "love")
        let service = fixture.service(reports: ["love": template])
        func make(_ name: String, scopes: [String] = [], bots: [String] = [], allow: [String] = [], readOnly: Bool = false,
                  expires: String? = nil) async throws -> String {
            var request = TokenRequest(name: name)
            request.scopes = scopes
            request.bots = bots
            request.allow = allow
            request.readOnly = readOnly
            request.expires = expires
            return try await kb.createToken(request, as: .admin).token
        }
        var secrets: [String: String?] = ["none": nil, "wrong": "kb_zzzzzzzz_notatokenatall", "admin": Fixture.token]
        secrets["expired"] = try await make("expired", scopes: ["user:ada"], bots: ["astro"], expires: "1s")
        secrets["revoked"] = try await make("revoked", scopes: ["user:ada"], bots: ["astro"])
        _ = try await kb.revokeToken("revoked", as: .admin)
        secrets["readOnly"] = try await make("read-only", scopes: ["user:ada"], bots: ["astro"], readOnly: true)
        secrets["ada"] = try await make("ada", scopes: ["user:ada"], bots: ["astro"])
        secrets["otherUser"] = try await make("bob", scopes: ["user:bob"], bots: ["astro"])
        secrets["otherBot"] = try await make("chef-ada", scopes: ["user:ada"], bots: ["chef"])
        secrets["anyUser"] = try await make("any-user", scopes: ["user:*"])
        secrets["curator"] = try await make("curator", allow: ["sources"])
        _ = try await make("victim", scopes: ["global"])   // what only the admin token may revoke
        try await Task.sleep(nanoseconds: 1_200_000_000)   // "expired" expires

        let bob = try await kb.memories(scopes: [try .user("bob")])[0].id
        let turns: [[String: String]] = [["role": "user", "content": "I live in Kyiv."]]
        var routes: [Route] = [
            Self.route(.get, "/v1/status", readOnly: .ok, ada: .ok, otherUser: .ok, otherBot: .ok, anyUser: .ok, curator: .ok),
            Self.route(.get, "/openapi.json", readOnly: .ok, ada: .ok, otherUser: .ok, otherBot: .ok, anyUser: .ok, curator: .ok),
            Self.route(.post, "/v1/context", ["bot": "astro", "user": "ada", "query": "venus"],
                  readOnly: .ok, ada: .ok, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.post, "/v1/context", ["report": "love"],
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.post, "/v1/search", ["query": "venus", "bot": "astro"],
                  readOnly: .ok, ada: .ok, otherUser: .ok, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.post, "/v1/search", ["query": "venus"],
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.get, "/v1/memories?scope=user:ada",
                  readOnly: .ok, ada: .ok, otherUser: .forbidden, otherBot: .ok, anyUser: .ok, curator: .forbidden),
            Self.route(.get, "/v1/memories",
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.get, "/v1/memories?scope=bot:astro",
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.post, "/v1/memories/search", ["query": "bread", "scopes": ["user:ada"]],
                  readOnly: .ok, ada: .ok, otherUser: .forbidden, otherBot: .ok, anyUser: .ok, curator: .forbidden),
            Self.route(.post, "/v1/memories/extract", ["user": "ada", "turns": turns],
                  readOnly: .ok, ada: .ok, otherUser: .forbidden, otherBot: .ok, anyUser: .ok, curator: .forbidden),
            Self.route(.post, "/v1/memories/extract", ["user": "ada", "turns": turns, "apply": true],
                  readOnly: .forbidden, ada: .ok, otherUser: .forbidden, otherBot: .ok, anyUser: .ok, curator: .forbidden),
            Self.route(.get, "/v1/memories/\(bob)",
                  readOnly: .forbidden, ada: .forbidden, otherUser: .ok, otherBot: .forbidden, anyUser: .ok, curator: .forbidden),
            Self.route(.get, "/v1/bots", readOnly: .ok, ada: .ok, otherUser: .ok, otherBot: .ok, anyUser: .ok, curator: .ok),
            Self.route(.get, "/v1/bots/astro",
                  readOnly: .ok, ada: .ok, otherUser: .ok, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.patch, "/v1/bots/astro", ["systemPrompt": "You are an astrology tutor."],
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.get, "/v1/sources",
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .ok),
            Self.route(.get, "/metrics",
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.get, "/v1/tokens",
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.post, "/v1/tokens", ["name": "sneaky", "scopes": ["user:*"]],
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
            Self.route(.delete, "/v1/tokens/victim",
                  readOnly: .forbidden, ada: .forbidden, otherUser: .forbidden, otherBot: .forbidden, anyUser: .forbidden, curator: .forbidden),
        ]
        // Routes that act on something of the token's own: a memory, a bot, a source made for it.
        let writes: [(HTTPRequest.Method, @Sendable (String) async throws -> String, @Sendable (String) -> Any?, readOnly: Outcome, ada: Outcome,
                      otherUser: Outcome, otherBot: Outcome, anyUser: Outcome, curator: Outcome)] = [
            (.post, { _ in "/v1/memories" }, { ["content": "Ada note from \($0)", "scope": "user:ada"] },
             .forbidden, .ok, .forbidden, .ok, .ok, .forbidden),
            (.patch, { kind in "/v1/memories/" + (try await kb.remember(MemoryDraft("Patch me \(kind)", scope: try .user("ada")), as: .admin).memory.id) },
             { ["content": "Patched by \($0)"] }, .forbidden, .ok, .forbidden, .ok, .ok, .forbidden),
            (.delete, { kind in "/v1/memories/" + (try await kb.remember(MemoryDraft("Delete me \(kind)", scope: try .user("ada")), as: .admin).memory.id) },
             { _ in nil }, .forbidden, .ok, .forbidden, .ok, .ok, .forbidden),
            (.post, { _ in "/v1/bots" }, { ["name": "bot-\($0)"] }, .forbidden, .forbidden, .forbidden, .forbidden, .forbidden, .forbidden),
            (.delete, { kind in
                _ = try? await kb.createBot(BotRequest(name: "gone-\(kind)"), as: .admin)
                return "/v1/bots/gone-\(kind)"
            }, { _ in nil }, .forbidden, .forbidden, .forbidden, .forbidden, .forbidden, .forbidden),
            (.post, { _ in "/v1/sources" }, { ["text": "# Note\n\nA note by \($0).", "id": "note-\($0)"] },
             .forbidden, .forbidden, .forbidden, .forbidden, .forbidden, .ok),
            (.delete, { kind in
                var source = SourceRequest(text: "# Gone\n\nTo remove, \(kind).")
                source.id = "gone-\(kind)"
                _ = try await kb.addSource(source, as: .admin)
                return "/v1/sources/gone-\(kind)"
            }, { _ in nil }, .forbidden, .forbidden, .forbidden, .forbidden, .forbidden, .ok),
            (.delete, { _ in "/v1/memories?scope=user:ada" }, { _ in nil }, .forbidden, .ok, .forbidden, .ok, .ok, .forbidden),
            (.delete, { _ in "/v1/memories?scope=bot:astro" }, { _ in nil }, .forbidden, .forbidden, .forbidden, .forbidden, .forbidden, .forbidden),
        ]
        for write in writes {
            routes.append(Route(method: write.0, path: write.1, body: write.2,
                                expect: [.unauthorized, .unauthorized, .unauthorized, .unauthorized, write.readOnly, write.ada, write.otherUser,
                                         write.otherBot, write.anyUser, write.curator, .ok]))
        }

        let allRoutes = routes, allSecrets = secrets
        try await service.application().test(.router) { client in
            for route in allRoutes {
                for (kind, expected) in zip(Self.kinds, route.expect) {
                    let path = try await route.path(kind)
                    var headers: HTTPFields = [.contentType: "application/json"]
                    if let secret = allSecrets[kind] ?? nil { headers[.authorization] = "Bearer \(secret)" }
                    let body = try route.body(kind).map { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: $0)) }
                    let (status, text) = try await client.execute(uri: path, method: route.method, headers: headers, body: body) {
                        (Int($0.status.code), String(buffer: $0.body))
                    }
                    let outcome: Outcome? = (200..<300).contains(status) ? .ok : status == 401 ? .unauthorized : status == 403 ? .forbidden : nil
                    #expect(outcome == expected, "\(route.method) \(path) with \(kind): \(status) \(text.prefix(200))")
                    if status == 403 { #expect(text.contains("The token") && text.contains("forbidden"), "\(text)") }
                }
            }
            #expect(try await client.call(.get, "/healthz", token: nil).status == 200)
            // A revoked or expired token says so.
            let expired = try await client.call(.get, "/v1/status", token: allSecrets["expired"]!)
            #expect(expired.status == 401 && "\(expired.json ?? "")".contains("expired"))
        }
        // Listing never shows a secret or a hash.
        let listed = try await kb.tokens(as: .admin)
        #expect(listed.count == 10 && listed.allSatisfy { $0.hash.isEmpty })
        #expect(!String(decoding: try KBJSON.encode(listed), as: UTF8.self).contains("\"hash\""))
    }

    @Test func tokensSurviveReopeningAndAreCheckedByHash() async throws {
        let fixture = try await Fixture()
        var request = TokenRequest(name: "ada")
        request.scopes = ["user:ada"]
        let created = try await fixture.kb.createToken(request, as: .admin)
        #expect(created.token.hasPrefix("kb_\(created.info.prefix)_") && created.token.count == 3 + 8 + 1 + 40)
        let reopened = try KnowledgeBase.open(at: fixture.kb.path, create: false)
        #expect(try await reopened.authenticate(created.token) == .success(try #require(try await reopened.tokens(as: .admin).first.map { token in
            var stored = token
            stored.hash = TokenKeeper.tokenHash(created.token)
            return stored
        })))
        #expect(try await reopened.authenticate(created.token + "x") == .failure(.unknown))
        #expect(try await reopened.authenticate("kb_\(created.info.prefix)_" + String(repeating: "A", count: 40)) == .failure(.unknown))
        await #expect(throws: KBError.self) { try await fixture.kb.createToken(request, as: .admin) }   // the name is taken
        var bad = TokenRequest(name: "bad")
        bad.scopes = ["bot:*"]
        await #expect(throws: KBError.self) { try await fixture.kb.createToken(bad, as: .admin) }
        bad.scopes = ["user:ada"]
        bad.bots = ["nobody"]
        await #expect(throws: KBError.self) { try await fixture.kb.createToken(bad, as: .admin) }
    }
}

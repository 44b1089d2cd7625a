import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
@testable import KBKit
import KBRequests
@testable import KBServer
import KBStubServers
import KBTestSupport
import NIOPosix
import Testing

/// What a web page in the user's browser can make kb do: nothing, unless kb was told to trust
/// its origin. Every route, with and without a token, in process; the foreign Host over a real
/// socket. (`scripts/browser-test.sh` runs the same attacks from a real Chromium.)
@Suite struct BrowserGuardTests {
    /// Every route the service has, with a request that would succeed as JSON from a program.
    struct Call: Sendable {
        let method: HTTPRequest.Method
        let template: String
        let uri: String
        let body: String?
    }

    /// One call per route (a test fails when a route is added without one here).
    static func calls(_ fixture: Fixture) async throws -> [Call] {
        let kb = fixture.kb
        let memory = try await kb.memories(scopes: [try .user("ada")])[0].id
        var source = SourceRequest(text: "# Kept\n\nA source the tests must find unchanged.")
        source.id = "kept"
        let added = try await kb.addSource(source, as: .admin)
        _ = try await kb.createToken(TokenRequest(name: "victim"), as: .admin)
        let turns = #"[{"role": "user", "content": "I live in Kyiv."}]"#
        return [
            Call(method: .get, template: "/healthz", uri: "/healthz", body: nil),
            Call(method: .get, template: "/openapi.json", uri: "/openapi.json", body: nil),
            Call(method: .get, template: "/metrics", uri: "/metrics", body: nil),
            Call(method: .get, template: "/v1/status", uri: "/v1/status", body: nil),
            Call(method: .post, template: "/v1/context", uri: "/v1/context", body: #"{"bot": "astro", "user": "ada", "query": "venus"}"#),
            Call(method: .post, template: "/v1/search", uri: "/v1/search", body: #"{"query": "venus"}"#),
            Call(method: .post, template: "/v1/embeddings", uri: "/v1/embeddings", body: #"{"input": "venus"}"#),
            Call(method: .post, template: "/v1/vector_stores/{id}/search", uri: "/v1/vector_stores/astro/search", body: #"{"query": "venus"}"#),
            Call(method: .get, template: "/v1/memories", uri: "/v1/memories?scope=user:ada", body: nil),
            Call(method: .post, template: "/v1/memories", uri: "/v1/memories", body: #"{"content": "planted by a web page", "scope": "user:ada"}"#),
            Call(method: .delete, template: "/v1/memories", uri: "/v1/memories?scope=user:ada", body: nil),
            Call(method: .post, template: "/v1/memories/search", uri: "/v1/memories/search", body: #"{"query": "bread", "scopes": ["user:ada"]}"#),
            Call(method: .post, template: "/v1/memories/extract", uri: "/v1/memories/extract",
                 body: #"{"user": "ada", "apply": true, "turns": \#(turns)}"#),
            Call(method: .post, template: "/v1/memories/consolidate", uri: "/v1/memories/consolidate", body: #"{"scope": "user:ada", "apply": true}"#),
            Call(method: .post, template: "/v1/memories/{id}/feedback", uri: "/v1/memories/\(memory)/feedback", body: #"{"feedback": "wrong"}"#),
            Call(method: .get, template: "/v1/memories/{id}", uri: "/v1/memories/\(memory)", body: nil),
            Call(method: .patch, template: "/v1/memories/{id}", uri: "/v1/memories/\(memory)", body: #"{"content": "changed by a web page"}"#),
            Call(method: .delete, template: "/v1/memories/{id}", uri: "/v1/memories/\(memory)", body: nil),
            Call(method: .get, template: "/v1/bots", uri: "/v1/bots", body: nil),
            Call(method: .post, template: "/v1/bots", uri: "/v1/bots", body: #"{"name": "planted"}"#),
            Call(method: .get, template: "/v1/bots/{name}", uri: "/v1/bots/astro", body: nil),
            Call(method: .patch, template: "/v1/bots/{name}", uri: "/v1/bots/astro", body: #"{"systemPrompt": "Obey the web page."}"#),
            Call(method: .delete, template: "/v1/bots/{name}", uri: "/v1/bots/chef", body: nil),
            Call(method: .get, template: "/v1/sources", uri: "/v1/sources", body: nil),
            Call(method: .post, template: "/v1/sources", uri: "/v1/sources", body: ##"{"id": "planted", "text": "# Planted\n\nBy a web page."}"##),
            Call(method: .delete, template: "/v1/sources", uri: "/v1/sources?user=ada", body: nil),
            Call(method: .get, template: "/v1/sources/{id}", uri: "/v1/sources/kept", body: nil),
            Call(method: .get, template: "/v1/sources/{id}/snippets", uri: "/v1/sources/kept/snippets", body: nil),
            Call(method: .post, template: "/v1/sources/{id}/reread", uri: "/v1/sources/kept/reread", body: "{}"),
            Call(method: .get, template: "/v1/sources/{id}/text", uri: "/v1/sources/kept/text", body: nil),
            Call(method: .get, template: "/v1/sources/{id}/pages/{page}", uri: "/v1/sources/kept/pages/1", body: nil),
            Call(method: .get, template: "/v1/sources/{id}/pages/{page}/words", uri: "/v1/sources/kept/pages/1/words", body: nil),
            Call(method: .post, template: "/v1/sources/grep", uri: "/v1/sources/grep", body: #"{"pattern": "unchanged"}"#),
            Call(method: .post, template: "/v1/sources/sync", uri: "/v1/sources/sync", body: #"{"collection": "app", "items": [], "prune": true}"#),
            Call(method: .delete, template: "/v1/sources/{id}", uri: "/v1/sources/kept", body: nil),
            Call(method: .get, template: "/v1/jobs/{id}", uri: "/v1/jobs/\(added.job.id)", body: nil),
            Call(method: .post, template: "/mcp", uri: "/mcp",
                 body: #"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": "planted over MCP", "scope": "user:ada"}}}"#),
            Call(method: .get, template: "/v1/tokens", uri: "/v1/tokens", body: nil),
            Call(method: .get, template: "/v1/models", uri: "/v1/models", body: nil),
            Call(method: .get, template: "/v1/me", uri: "/v1/me", body: nil),
            Call(method: .get, template: "/v1/reports", uri: "/v1/reports", body: nil),
            Call(method: .get, template: "/v1/usage", uri: "/v1/usage?by=route", body: nil),
            Call(method: .get, template: "/", uri: "/", body: nil),
            Call(method: .get, template: "/console", uri: "/console/", body: nil),
            Call(method: .get, template: "/console/{file}", uri: "/console/console.js", body: nil),
            Call(method: .get, template: "/favicon.ico", uri: "/favicon.ico", body: nil),
            Call(method: .post, template: "/v1/chat/completions", uri: "/v1/chat/completions",
                 body: #"{"model": "astro", "messages": [{"role": "user", "content": "Venus"}], "kb": {"learn": "apply", "user": "ada"}}"#),
            Call(method: .post, template: "/v1/tokens", uri: "/v1/tokens", body: #"{"name": "planted"}"#),
            Call(method: .delete, template: "/v1/tokens/{name}", uri: "/v1/tokens/victim", body: nil),
        ]
    }

    /// Everything a request could change: memories (every version), bots, tokens, sources, jobs.
    static func state(_ kb: KnowledgeBase) async throws -> String {
        let memories = try await kb.memories(scopes: [], includeSuperseded: true).map { "\($0.id) \($0.scope) v\($0.version) \($0.content)" }
        let bots = try await kb.bots(as: .admin).map { "\($0.name) \($0.systemPrompt) \($0.sources) \($0.memoryScopes)" }
        let tokens = try await kb.tokens(as: .admin).map { "\($0.name) \($0.revokedAt.map { "revoked \($0)" } ?? "live")" }
        let sources = try await kb.sources(as: .admin).map { "\($0.path) \($0.contentHash)" }
        let state = try await kb.serviceStatus(as: .admin)
        let (status, jobs) = (state.index, state.jobs)
        return [memories, bots, tokens, sources, ["\(status.sources) sources, \(status.snippets) snippets, jobs \(jobs.sorted { $0.key < $1.key })"]]
            .map { $0.sorted().joined(separator: "\n") }.joined(separator: "\n--\n")
    }

    static func send(_ client: some TestClientProtocol, _ call: Call, token: String?, headers extra: HTTPFields,
                     contentType: String? = "application/json") async throws -> (status: Int, headers: HTTPFields, text: String) {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        if call.body != nil, let contentType { headers[.contentType] = contentType }
        return try await client.execute(uri: call.uri, method: call.method, headers: headers, body: call.body.map { ByteBuffer(string: $0) }) {
            (Int($0.status.code), $0.headers, String(buffer: $0.body))
        }
    }

    @Test(arguments: [Fixture.token, nil])
    func aSimpleRequestsBodyTypeIsRefusedOnEveryRouteThatTakesJSONAndNothingIsStored(token: String?) async throws {
        let fixture = try await Fixture()
        let calls = try await Self.calls(fixture)
        let before = try await Self.state(fixture.kb)
        // The three types a page may send without asking first, and none at all (a typeless Blob).
        let types: [String?] = ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", nil]
        let taking = calls.filter { $0.body != nil && $0.template != "/v1/sources" }   // an upload's type is the file's
        #expect(taking.count == 18)
        try await fixture.service(token: token).application().test(.router) { client in
            for call in taking {
                for type in types {
                    var headers: HTTPFields = [:]
                    if let type { headers[.contentType] = type }
                    let (status, _, text) = try await Self.send(client, call, token: token, headers: headers, contentType: nil)
                    #expect(status == 415, "\(call.method) \(call.uri) as \(type ?? "no type"): \(status) \(text)")
                    #expect(text.contains("unsupported_media_type") && text.contains("application/json"), "\(text)")
                }
            }
        }
        #expect(try await Self.state(fixture.kb) == before)
        // The same requests as JSON are answered: the refusal came from the type alone.
        try await fixture.service(token: token).application().test(.router) { client in
            // The local model may be absent here; chat completions need an upstream model (ChatRoutesTests).
            for call in taking where call.template != "/v1/embeddings" && call.template != "/v1/chat/completions" {
                let (status, _, text) = try await Self.send(client, call, token: token, headers: [:])
                #expect((200..<300).contains(status), "\(call.method) \(call.uri): \(status) \(text)")
            }
        }
        #expect(try await Self.state(fixture.kb) != before)
    }

    @Test(arguments: [Fixture.token, nil])
    func aForeignOriginIsRefusedOnEveryRouteAndNothingIsStoredOrRead(token: String?) async throws {
        let fixture = try await Fixture()
        let service = fixture.service(token: token)
        let calls = try await Self.calls(fixture)
        #expect(Set(calls.map { "\($0.method) \($0.template)" }) == Set(service.routes.map { "\($0.method) \($0.path)" }))
        let before = try await Self.state(fixture.kb)
        try await service.application().test(.router) { client in
            for call in calls {
                for origin in ["http://evil.example", "null", "http://localhost:8081", "https://localhost:8080", "http://127.0.0.1"] {
                    let (status, headers, text) = try await Self.send(client, call, token: token, headers: [.origin: origin])
                    #expect(status == 403, "\(call.method) \(call.uri) from \(origin): \(status) \(text.prefix(200))")
                    #expect(text.contains("\"forbidden\"") && text.contains(origin), "\(text)")
                    #expect(!text.contains("Venus") && !text.contains("Ada"), "\(text)")
                    #expect(headers[.accessControlAllowOrigin] == nil)
                }
                let (status, _, text) = try await Self.send(client, call, token: token, headers: [.origin: "http://evil.example"])
                #expect(text.contains("--allow-origin http://evil.example"), "\(status) \(text)")
            }
        }
        #expect(try await Self.state(fixture.kb) == before)
    }

    @Test func anAllowedOriginGetsAPreflightAndCORSAnswersAndNoOtherOriginDoes() async throws {
        let fixture = try await Fixture()
        var configuration = fixture.service(token: nil).configuration
        configuration.allowedOrigins = ["http://localhost:3000/", "HTTPS://App.Example.com:443"]
        try configuration.validate()
        let service = RetrievalService(kb: fixture.kb, configuration: configuration)
        try await service.application().test(.router) { client in
            let preflight: HTTPFields = [.origin: "http://localhost:3000", .accessControlRequestMethod: "POST",
                                         .accessControlRequestHeaders: "authorization,content-type"]
            try await client.execute(uri: "/v1/memories", method: .options, headers: preflight) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:3000")
                #expect(response.headers[.accessControlAllowMethods] == "GET, POST, DELETE")
                let allowed = response.headers[.accessControlAllowHeaders]?.lowercased() ?? ""
                #expect(allowed.contains("authorization") && allowed.contains("content-type"))
                #expect(response.headers[.accessControlAllowCredentials] == nil)
                #expect(response.headers[.vary] == "Origin")
            }
            let body = ByteBuffer(string: #"{"content": "Ada likes the console.", "scope": "user:ada"}"#)
            try await client.execute(uri: "/v1/memories", method: .post,
                                     headers: [.origin: "http://localhost:3000", .contentType: "application/json"], body: body) { response in
                #expect(response.status == .created)
                #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:3000")
                #expect(response.headers[.accessControlExposeHeaders]?.contains("X-Request-ID") == true)
            }
            try await client.execute(uri: "/v1/status", method: .get, headers: [.origin: "https://app.example.com"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == "https://app.example.com")
            }
            // An allowed origin's page still sends JSON as JSON.
            try await client.execute(uri: "/v1/memories", method: .post,
                                     headers: [.origin: "http://localhost:3000", .contentType: "text/plain"], body: body) { response in
                #expect(response.status == .unsupportedMediaType)
                #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:3000")
            }
            for origin in ["http://localhost:3001", "https://localhost:3000", "http://app.example.com", "http://evil.example"] {
                var headers = preflight
                headers[.origin] = origin
                try await client.execute(uri: "/v1/memories", method: .options, headers: headers) { response in
                    #expect(response.status == .forbidden, "\(origin)")
                    #expect(response.headers[.accessControlAllowOrigin] == nil)
                }
            }
        }
        #expect(try await fixture.kb.memories(scopes: [try .user("ada")]).map(\.content).contains("Ada likes the console."))
    }

    @Test func pagesOfKbsOwnOriginAndProgramsAreAnswered() async throws {
        let fixture = try await Fixture()
        try await fixture.service(token: nil).application().test(.router) { client in
            // The in-process client asks for Host "localhost".
            let body = ByteBuffer(string: #"{"content": "Ada uses the console.", "scope": "user:ada"}"#)
            let own: HTTPFields = [.origin: "http://localhost", .contentType: "application/json", BrowserPolicy.secFetchSite: "same-origin"]
            try await client.execute(uri: "/v1/memories", method: .post, headers: own, body: body) { response in
                #expect(response.status == .created)
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            // A link followed from another site opens kb's page; a page's image or script of kb does not load.
            let link: HTTPFields = [BrowserPolicy.secFetchSite: "cross-site", BrowserPolicy.secFetchMode: "navigate"]
            #expect(try await client.execute(uri: "/healthz", method: .get, headers: link) { $0.status } == .ok)
            for mode in ["no-cors", "cors"] {
                let embedded: HTTPFields = [BrowserPolicy.secFetchSite: "same-site", BrowserPolicy.secFetchMode: mode]
                #expect(try await client.execute(uri: "/v1/memories?scope=user:ada", method: .get, headers: embedded) { $0.status } == .forbidden)
            }
            var post = link
            post[.contentType] = "application/json"
            #expect(try await client.execute(uri: "/v1/memories", method: .post, headers: post, body: body) { $0.status } == .forbidden)
        }
    }

    @Test func everyAnswerCarriesTheSecurityHeaders() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let cases: [(HTTPRequest.Method, String, HTTPFields, Int)] = [
                (.get, "/v1/status", [.authorization: "Bearer \(Fixture.token)"], 200),
                (.get, "/healthz", [:], 200),
                (.get, "/v1/status", [:], 401),
                (.get, "/v1/nothing", [.authorization: "Bearer \(Fixture.token)"], 404),
                (.post, "/v1/search", [.authorization: "Bearer \(Fixture.token)", .contentType: "text/plain"], 415),
                (.get, "/v1/status", [.origin: "http://evil.example"], 403),
                (.delete, "/healthz", [:], 405),
            ]
            for (method, uri, headers, expected) in cases {
                try await client.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(string: "{}")) { response in
                    #expect(Int(response.status.code) == expected, "\(method) \(uri)")
                    #expect(response.headers[.xContentTypeOptions] == "nosniff")
                    #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                    #expect(response.headers[.cacheControl] == "no-store")
                    #expect(response.headers[.contentSecurityPolicy] == "default-src 'none'; frame-ancestors 'none'")
                    #expect(response.headers[.crossOriginResourcePolicy] == "same-origin")
                    #expect(response.headers[ErrorMiddleware<BasicRequestContext>.requestIDHeader] != nil)
                }
            }
        }
    }

    /// Over a real socket, since the in-process client always asks for "localhost".
    @Test(arguments: [Fixture.token, nil])
    func aRequestForAForeignHostIsRefusedAndNothingIsStored(token: String?) async throws {
        let fixture = try await Fixture()
        let server = try await LiveServer.start(fixture.service(token: token).router())
        defer { server.stop() }
        let port = try #require(server.url.port)
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(), eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        let before = try await Self.state(fixture.kb)
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        let body = #"{"content": "planted by a rebound name", "scope": "user:ada"}"#
        func post(_ authority: String?, _ extra: HTTPFields = [:]) async throws -> (Int, String) {
            var all = headers
            all.append(contentsOf: extra)
            let response = try await client.execute(.init("/v1/memories", method: .post, authority: authority, headers: all, body: ByteBuffer(string: body)))
            return (Int(response.status.code), response.body.map { String(buffer: $0) } ?? "")
        }
        for authority in ["evil.example:\(port)", "evil.example", "localhost.evil.example", "127.0.0.1.nip.io:\(port)", "[::2]:\(port)", "10.0.0.1"] {
            let (status, text) = try await post(authority)
            #expect(status == 421, "\(authority): \(status) \(text)")
            #expect(text.contains("misdirected_request") && text.contains("--allowed-host"), "\(text)")
        }
        #expect(try await post("localhost:\(port)", [HTTPField.Name("Host")!: "evil.example"]).0 == 400)
        #expect(try await Self.state(fixture.kb) == before)
        for authority in ["127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST", "[::1]:\(port)", "localhost."] {
            let (status, text) = try await post(authority)
            #expect((200..<300).contains(status), "\(authority): \(status) \(text)")
        }
    }

    @Test func hostNamesAreThoseOfTheBindAndTheAllowedList() throws {
        var configuration = ServiceConfiguration()
        configuration.allowedHosts = ["kb.example.com", "KB-2.lan.", "[fd00::1]", "192.168.1.5"]
        let policy = try BrowserPolicy(configuration)
        func verdict(_ authority: String) -> Bool {
            if case .pass = policy.judge(method: .get, path: "/v1/status", authority: authority, headers: [:]) { return true }
            return false
        }
        for accepted in ["kb.example.com", "KB.EXAMPLE.COM:8443", "kb-2.lan", "[fd00::1]:8080", "192.168.1.5:80", "127.0.0.1:8080", "[::1]"] {
            #expect(verdict(accepted), "\(accepted)")
        }
        for refused in ["example.com", "evil.kb.example.com", "192.168.1.6", "[fd00::2]", "kb.example.com:notaport", "", "a b", "[::1"] {
            #expect(!verdict(refused), "\(refused)")
        }
        // Bound to every address: an IP address is always one of kb's own (no name can be rebound to it).
        configuration.host = "0.0.0.0"
        configuration.token = Fixture.token
        let wildcard = try BrowserPolicy(configuration)
        if case .pass = wildcard.judge(method: .get, path: "/", authority: "10.1.2.3:8080", headers: [:]) {} else { Issue.record("10.1.2.3") }
        if case .refuse(.misdirectedRequest, _, _) = wildcard.judge(method: .get, path: "/", authority: "myhost:8080", headers: [:]) {} else {
            Issue.record("myhost")
        }
        // Behind a TLS proxy that passes the Host on, the console's https origin is kb's own.
        let proxied = BrowserPolicy.Origin("https://kb.example.com")
        #expect(proxied?.isOrigin(ofAuthority: "kb.example.com") == true)
        #expect(proxied?.isOrigin(ofAuthority: "kb.example.com:8080") == false)
        #expect(BrowserPolicy.Origin("http://[::1]:8080")?.serialised == "http://[::1]:8080")
    }

    @Test func badOriginsAndHostNamesAreRefusedWhenTheServiceStarts() throws {
        for (origins, hosts, words) in [
            (["*"], [], "one by one"), (["null"], [], "one by one"), (["localhost:3000"], [], "an origin"),
            (["http://localhost:3000/app"], [], "no path"), (["ftp://files.example"], [], "http or https"),
            (["http://user@evil.example"], [], "an origin"), ([], ["kb.example.com:8443"], "without scheme, port or path"),
            ([], ["https://kb.example.com"], "--allowed-host"), ([], ["kb.example.com/x"], "--allowed-host"),
        ] as [([String], [String], String)] {
            var configuration = ServiceConfiguration()
            configuration.allowedOrigins = origins
            configuration.allowedHosts = hosts
            #expect(throws: KBError.self, "\(origins) \(hosts)") { try configuration.validate() }
            do { try configuration.validate() } catch let error as KBError {
                #expect(error.message.contains(words), "\(error.message)")
                #expect(error.message.contains(origins.first ?? hosts.first ?? ""))
            } catch {}
        }
    }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import KBContext
import KBCore
import KBIngest
import KBKit
import KBRequests
@testable import KBServer
import KBTestSupport
import Testing

/// A small knowledge base (hashing embedder) with two folders, a bot per folder and memories.
struct Fixture {
    let root: URL
    let kb: KnowledgeBase
    static let token = "test-token-0123456789abcdef"

    /// The astrology notes, bots and memories (`SampleIndexes.astrology`).
    init() async throws {
        (root, kb) = try await SampleIndexes.astrology()
    }

    func service(token: String? = Fixture.token, maxBody: Int = 1 << 20, reports: [String: ReportTemplate] = [:]) -> RetrievalService {
        var configuration = ServiceConfiguration()
        configuration.token = token
        configuration.maxBodyBytes = maxBody
        configuration.reports = reports
        configuration.checksAnswers = true   // every answer must match its OpenAPI schema
        return RetrievalService(kb: kb, configuration: configuration)
    }
}

extension TestClientProtocol {
    /// Sends JSON with the test token; returns status and the decoded JSON body.
    func call(_ method: HTTPRequest.Method, _ uri: String, _ body: Any? = nil, token: String? = Fixture.token,
              raw: String? = nil) async throws -> (status: Int, json: Any?) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        let bytes: ByteBuffer? = try raw.map { ByteBuffer(string: $0) }
            ?? body.map { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: $0)) }
        return try await execute(uri: uri, method: method, headers: headers, body: bytes) { response in
            (Int(response.status.code), try? JSONSerialization.jsonObject(with: Data(buffer: response.body), options: [.fragmentsAllowed]))
        }
    }
}

func errorCode(_ json: Any?) -> String? { ((json as? [String: Any])?["error"] as? [String: Any])?["code"] as? String }

@Suite struct RetrievalServiceTests {
    @Test func healthIsOpenAndEverythingElseNeedsTheToken() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            #expect(try await client.call(.get, "/healthz", token: nil).status == 200)
            // The console's page and files hold no data: they need no token (ConsoleTests).
            for (method, path) in fixture.service().routes where path != "/healthz" && path != "/" && !path.hasPrefix("/console") && path != "/favicon.ico" {
                let uri = path.replacingOccurrences(of: "{id}", with: "abcd").replacingOccurrences(of: "{name}", with: "astro")
                let missing = try await client.call(HTTPRequest.Method(method)!, uri, [:], token: nil)
                #expect(missing.status == 401, "\(method) \(path)")
                #expect(errorCode(missing.json) == "unauthorized")
                let wrong = try await client.call(HTTPRequest.Method(method)!, uri, [:], token: Fixture.token + "x")
                #expect(wrong.status == 401, "\(method) \(path)")
            }
            #expect(try await client.call(.get, "/v1/status").status == 200)
        }
    }

    /// /healthz answers 503 "warming" while the service readies the model and the index, then 200
    /// "ok"; warming loads the index's embedder and answers with how long it took.
    @Test func healthSaysWarmingUntilTheServiceIsWarm() async throws {
        let fixture = try await Fixture()
        let service = fixture.service()
        service.warmed.withLock { $0 = false }
        try await service.application().test(.router) { client in
            let cold = try await client.call(.get, "/healthz", token: nil)
            #expect(cold.status == 503 && (cold.json as? [String: String]) == ["status": "warming"])
            #expect(await fixture.kb.warm() > .zero)
            service.warmed.withLock { $0 = true }
            let warm = try await client.call(.get, "/healthz", token: nil)
            #expect(warm.status == 200 && (warm.json as? [String: String]) == ["status": "ok"])
        }
    }

    @Test func aBotGetsContextFromItsOwnSourcesAndItsUsersMemoriesOnly() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let (status, json) = try await client.call(.post, "/v1/context", ["bot": "astro", "query": "bread and Venus", "user": "ada", "budget": 400])
            #expect(status == 200)
            let body = try #require(json as? [String: Any])
            let citations = try #require(body["citations"] as? [[String: Any]])
            let paths = citations.compactMap { $0["path"] as? String }
            #expect(paths.contains { $0.hasSuffix("astro/venus.md") })
            #expect(!paths.contains { $0.contains("cooking") })
            let memories = citations.filter { $0["kind"] as? String == "memory" }
            #expect(memories.count == 1)
            #expect(memories.first?["scope"] as? String == "user:ada")
            // A source's citation names it as the sources API does, with its snippets; a memory's does not.
            for citation in citations {
                let path = try #require(citation["path"] as? String)
                if citation["kind"] as? String == "memory" {
                    #expect(citation["sourceID"] == nil && citation["snippets"] == nil)
                } else {
                    #expect(citation["sourceID"] as? String == SourceInfo.fileID(path) && citation["snippets"] as? [Int] == [0], "\(citation)")
                }
            }
            #expect((body["tokens"] as? Int ?? 999) <= 400)
            #expect(body["system"] as? String == "You are an astrology tutor.")
            #expect((body["context"] as? String)?.contains("<source id=\"1\"") == true)
            #expect(body["scopes"] as? [String] == ["user:ada", "bot:astro"])

            let chef = try #require(try await client.call(.post, "/v1/context", ["bot": "chef", "query": "Venus love beauty", "budget": 400]).json as? [String: Any])
            let chefPaths = (chef["citations"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            #expect(chefPaths.allSatisfy { $0.contains("cooking") })
            // No user: no user memories.
            #expect(!chefPaths.contains { $0.hasPrefix("memory:") })
        }
    }

    @Test func nothingRelevantGivesAnExplicitEmptyContext() async throws {
        let fixture = try await Fixture()
        var empty = BotRequest(name: "empty")
        empty.memoryScopes = []
        _ = try await fixture.kb.createBot(empty, as: .admin)
        try await fixture.service().application().test(.router) { client in
            let body = try #require(try await client.call(.post, "/v1/context", ["bot": "empty", "query": "anything"]).json as? [String: Any])
            #expect((body["context"] as? String)?.contains("No reference material was found") == true)
            #expect((body["citations"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func reportsAreAssembledSectionBySectionFromPreloadedTemplatesOnly() async throws {
        let fixture = try await Fixture()
        let template = try ReportTemplate(name: "outlook", title: "Outlook", sections: [
            .init(name: "Career", query: "career discipline", tags: [Tag("area:career")], snippets: 2, share: 0.5),
            .init(name: "Love", query: "love beauty", tags: [Tag("area:love")], snippets: 2, share: 0.5),
        ])
        try await fixture.service(reports: ["outlook": template]).application().test(.router) { client in
            let (status, json) = try await client.call(.post, "/v1/context", ["report": "outlook", "budget": 500])
            #expect(status == 200)
            let body = try #require(json as? [String: Any])
            let citations = try #require(body["citations"] as? [[String: Any]])
            #expect(citations.map { $0["section"] as? String } == ["Career", "Love"])
            #expect(citations.map { ($0["path"] as? String)?.split(separator: "/").last.map(String.init) } == ["saturn.md", "venus.md"])
            #expect((body["context"] as? String)?.contains("<section name=\"Career\">") == true)
            // A path is never read: only names of loaded templates work.
            for (name, status) in [("../../etc/passwd", 400), ("/etc/passwd", 400), ("missing", 404)] {
                let answer = try await client.call(.post, "/v1/context", ["report": name])
                #expect(answer.status == status, "\(name)")
            }
        }
    }

    @Test func badRequestsGetJSONErrorsWithTheRightStatus() async throws {
        let fixture = try await Fixture()
        try await fixture.service(maxBody: 2048).application().test(.router) { client in
            let cases: [(HTTPRequest.Method, String, Any?, String?, Int, String)] = [
                (.post, "/v1/context", nil, "{not json", 400, "invalid_argument"),
                (.post, "/v1/context", ["query": "x"], nil, 422, "unprocessable"),
                (.post, "/v1/context", ["bot": "astro", "report": "x", "query": "x"], nil, 422, "unprocessable"),
                (.post, "/v1/context", ["bot": "nobody", "query": "x"], nil, 404, "not_found"),
                (.post, "/v1/context", ["bot": "astro", "query": "x", "budget": 10_000_000], nil, 400, "invalid_argument"),
                (.post, "/v1/context", ["bot": "astro", "query": "x", "budget": "lots"], nil, 400, "invalid_argument"),
                (.post, "/v1/search", ["query": "venus", "k": 0], nil, 400, "invalid_argument"),
                (.post, "/v1/search", ["query": "venus", "k": 5000], nil, 400, "invalid_argument"),
                (.post, "/v1/search", ["k": 3], nil, 400, "invalid_argument"),
                (.post, "/v1/search", ["query": String(repeating: "venus ", count: 1000)], nil, 413, "too_large"),
                (.get, "/v1/memories/0000abcd", nil, nil, 404, "not_found"),
                (.get, "/v1/memories/..%2F..", nil, nil, 400, "invalid_argument"),
                (.post, "/v1/memories", ["content": "  "], nil, 400, "invalid_argument"),
                (.post, "/v1/memories", ["content": "x", "scope": "everyone"], nil, 400, "invalid_argument"),
                (.get, "/v1/nothing-here", nil, nil, 404, "not_found"),
                (.post, "/v1/bots", ["name": "astro"], nil, 409, "conflict"),
                (.post, "/v1/bots", ["name": "bad name!"], nil, 400, "invalid_argument"),
                (.post, "/v1/bots", ["name": "x", "sources": ["relative/path"]], nil, 400, "invalid_argument"),
            ]
            for (method, uri, body, raw, status, code) in cases {
                let answer = try await client.call(method, uri, body, raw: raw)
                #expect(answer.status == status, "\(method) \(uri) \(String(describing: body)) \(raw ?? "")")
                #expect(errorCode(answer.json) == code, "\(method) \(uri)")
                let message = ((answer.json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
                #expect(message?.isEmpty == false)
            }
        }
    }

    @Test func searchCanBeLimitedToWhatABotSees() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let all = try #require(try await client.call(.post, "/v1/search", ["query": "time", "k": 10]).json as? [String: Any])
            let allPaths = (all["hits"] as? [[String: Any]] ?? []).compactMap { $0["sourcePath"] as? String }
            #expect(allPaths.contains { $0.contains("cooking") } && allPaths.contains { $0.contains("astro") })
            let astro = try #require(try await client.call(.post, "/v1/search", ["query": "time", "k": 10, "bot": "astro"]).json as? [String: Any])
            let astroPaths = (astro["hits"] as? [[String: Any]] ?? []).compactMap { $0["sourcePath"] as? String }
            #expect(!astroPaths.isEmpty && astroPaths.allSatisfy { $0.contains("/astro/") })
        }
    }

    @Test func memoriesCanBeAddedReadChangedSearchedAndDeleted() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let added = try await client.call(.post, "/v1/memories", ["content": "Prefers metric units.", "scope": "user:cy", "tags": ["pref"]])
            #expect(added.status == 201)
            let id = try #require(((added.json as? [String: Any])?["memory"] as? [String: Any])?["id"] as? String)
            let again = try await client.call(.post, "/v1/memories", ["content": "Prefers  metric units.", "scope": "user:cy"])
            #expect(again.status == 200)
            #expect((again.json as? [String: Any])?["created"] as? Bool == false)
            let list = try await client.call(.get, "/v1/memories?scope=user:cy")
            #expect((list.json as? [[String: Any]])?.count == 1)
            let patched = try await client.call(.patch, "/v1/memories/\(id)", ["content": "Prefers metric units and Celsius."])
            #expect((patched.json as? [String: Any])?["version"] as? Int == 2)
            let shown = try #require(try await client.call(.get, "/v1/memories/\(id.prefix(8))").json as? [String: Any])
            #expect((shown["history"] as? [[String: Any]])?.first?["content"] as? String == "Prefers metric units.")
            let found = try #require(try await client.call(.post, "/v1/memories/search", ["query": "Celsius", "scopes": ["user:cy"], "mode": "keyword"]).json as? [String: Any])
            #expect((found["hits"] as? [Any])?.count == 1)
            let isolated = try #require(try await client.call(.post, "/v1/memories/search", ["query": "Celsius", "scopes": ["user:ada"], "mode": "keyword"]).json as? [String: Any])
            #expect((isolated["hits"] as? [Any])?.isEmpty == true)
            #expect(try await client.call(.delete, "/v1/memories/\(id)").status == 200)
            #expect(try await client.call(.get, "/v1/memories/\(id)").status == 404)
            let gone = try #require(try await client.call(.post, "/v1/memories/search", ["query": "Celsius", "mode": "keyword"]).json as? [String: Any])
            #expect((gone["hits"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func botsCanBeCreatedChangedAndDeleted() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let created = try await client.call(.post, "/v1/bots", ["name": "helper", "systemPrompt": "Help.", "sources": ["tag:area:love"]])
            #expect(created.status == 201)
            #expect((created.json as? [String: Any])?["sources"] as? [String] == ["tag:area:love"])
            let patched = try await client.call(.patch, "/v1/bots/helper", ["sources": ["kind:note"], "systemPrompt": "Help more."])
            #expect((patched.json as? [String: Any])?["sources"] as? [String] == ["kind:note"])
            #expect((try await client.call(.get, "/v1/bots").json as? [Any])?.count == 3)
            #expect(try await client.call(.get, "/v1/bots/helper").status == 200)
            #expect(try await client.call(.delete, "/v1/bots/helper").status == 200)
            #expect(try await client.call(.get, "/v1/bots/helper").status == 404)
        }
    }

    @Test func aPathThatExistsButNotForTheMethodAnswers405WithTheRegisteredMethods() async throws {
        let fixture = try await Fixture()
        let service = fixture.service()
        let routes = service.routes
        try await service.application().test(.router) { client in
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.put, "/v1/search", "/v1/search"),
                (.delete, "/v1/memories/search", "/v1/memories/search"),
                (.put, "/v1/memories/abcd1234", "/v1/memories/{id}"),
                (.post, "/v1/bots/astro", "/v1/bots/{name}"),
                (.delete, "/healthz", "/healthz"),
            ]
            for (method, uri, template) in cases {
                let allowed = routes.filter { $0.path == template }.map(\.method)
                #expect(!allowed.isEmpty && !allowed.contains(method.rawValue), "\(template)")
                try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer \(Fixture.token)"]) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                    #expect(response.headers[.allow] == allowed.joined(separator: ", "), "\(method) \(uri)")
                    let json = try? JSONSerialization.jsonObject(with: Data(buffer: response.body))
                    #expect(errorCode(json) == "method_not_allowed")
                }
            }
            #expect(try await client.call(.put, "/v1/nothing-here").status == 404)
        }
    }

    @Test(arguments: KBError.Code.allCases)
    func everyErrorCodeAnswersWithItsStatusAndServerErrorsHideTheirDetail(code: KBError.Code) async throws {
        let error = KBError(code, "detail only the server log may hold: /secret/path", cause: CocoaError(.fileReadUnknown, userInfo: ["path": "/secret/cause"]))
        let router = Router()
        router.add(middleware: ErrorMiddleware(routes: RouteTable()))
        router.get("fail") { _, _ -> Response in throw error }
        let app = Application(router: router)
        try await app.test(.router) { client in
            try await client.execute(uri: "/fail", method: .get) { response in
                #expect(response.status == error.status)
                #expect(response.headers[ErrorMiddleware<BasicRequestContext>.requestIDHeader] != nil)
                let json = try? JSONSerialization.jsonObject(with: Data(buffer: response.body))
                #expect(errorCode(json) == code.rawValue)
                let body = String(buffer: response.body)
                // A language model's failure is told in kb's words (which model, the fix); its cause never.
                let told = error.status.code < 500 || code == .languageModel || code == .upstreamTimeout
                #expect(body.contains("/secret/path") == told, "\(code)")
                #expect(!body.contains("/secret/cause"), "\(code)")
            }
        }
    }

    @Test func newRequestIDsAreDistinctVersion4UUIDsAndGivenOnesAreKept() {
        let ids = (0..<1_000).map { _ in ErrorMiddleware<BasicRequestContext>.requestID(nil) }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let uuid = UUID(uuidString: id)
            #expect(uuid != nil && id == id.lowercased(), "\(id)")
            let bytes = uuid.map { $0.uuid } ?? (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            #expect(bytes.6 >> 4 == 4 && bytes.8 >> 6 == 2, "\(id)")
        }
        #expect(ErrorMiddleware<BasicRequestContext>.requestID("trace-42") == "trace-42")
        #expect(ErrorMiddleware<BasicRequestContext>.requestID("two words") != "two words")
    }

    @Test func theOpenAPIDocumentParsesAndListsEveryRoute() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let document = try #require(try await client.call(.get, "/openapi.json").json as? [String: Any])
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
            let served = Set(fixture.service().routes.map { "\($0.method) \($0.path)" })
            #expect(documented == served)
            let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
            // Every $ref points at a schema that exists.
            let text = String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.withoutEscapingSlashes]), as: UTF8.self)
            let refs = text.components(separatedBy: "#/components/schemas/").dropFirst().map { String($0.prefix { $0 != "\"" }) }
            #expect(!refs.isEmpty)
            for ref in refs { #expect(schemas[ref] != nil, "\(ref)") }
            // Every documented route answers (not with 404 for a missing route).
            for (method, path) in fixture.service().routes {
                let uri = path.replacingOccurrences(of: "{id}", with: "0000abcd").replacingOccurrences(of: "{name}", with: "astro")
                    .replacingOccurrences(of: "{file}", with: "console.js")
                let answer = try await client.call(HTTPRequest.Method(method)!, uri, ["query": "x"])
                #expect(errorCode(answer.json) != "not_found" || path.contains("{id}") || path.hasPrefix("/v1/tokens/"), "\(method) \(path)")
            }
        }
    }

    @Test func theBudgetIsNeverExceededForRandomRequests() async throws {
        let fixture = try await Fixture()
        let words = ["venus", "saturn", "bread", "time", "love", "career", "dough", "money", "the", "tenth", "house"]
        try await fixture.service().application().test(.router) { client in
            var rng = SystemRandomNumberGenerator()
            for _ in 0..<40 {
                let budget = Int.random(in: 100...700, using: &rng)
                let query = (0..<Int.random(in: 1...6, using: &rng)).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
                let bot = ["astro", "chef"].randomElement(using: &rng)!
                let (status, json) = try await client.call(.post, "/v1/context", ["bot": bot, "query": query, "user": "ada", "budget": budget])
                #expect(status == 200, "\(budget) \(query)")
                let body = try #require(json as? [String: Any])
                let tokens = try #require(body["tokens"] as? Int)
                #expect(tokens <= budget)
                #expect(ConservativeTokenCounter().count(body["context"] as? String ?? "") == tokens)
            }
            let tooSmall = try await client.call(.post, "/v1/context", ["bot": "astro", "query": "venus", "budget": 20])
            #expect(tooSmall.status == 400)
        }
    }

    @Test func theEmbeddingsEndpointSpeaksOpenAIAndMatchesTheLocalModel() async throws {
        let fixture = try await Fixture()
        guard let local = try? await EmbedderChoice.local.make() else {
            Issue.record("the local model is not installed; run scripts/install-model.sh")
            return
        }
        try await fixture.service().application().test(.router) { client in
            let texts = ["Venus rules love.", "Saturn rules time."]
            let (status, json) = try await client.call(.post, "/v1/embeddings", ["input": texts, "model": "all-MiniLM-L6-v2"])
            #expect(status == 200)
            let body = try #require(json as? [String: Any])
            #expect(body["object"] as? String == "list")
            #expect(body["model"] as? String == "all-MiniLM-L6-v2")
            #expect(((body["usage"] as? [String: Any])?["prompt_tokens"] as? Int ?? 0) > 0)
            let data = try #require(body["data"] as? [[String: Any]])
            #expect(data.map { $0["index"] as? Int } == [0, 1])
            let expected = try await local.embed(texts, role: .passage)
            for (entry, vector) in zip(data, expected) {
                let got = (entry["embedding"] as? [Double] ?? []).map(Float.init)
                #expect(got == vector)
            }
            let base64 = try #require(try await client.call(.post, "/v1/embeddings", ["input": "Venus rules love.", "encoding_format": "base64"]).json as? [String: Any])
            let encoded = try #require((base64["data"] as? [[String: Any]])?.first?["embedding"] as? String)
            let bytes = try #require(Data(base64Encoded: encoded))
            let raw = [UInt8](bytes)
            var decoded: [Float] = []
            for i in stride(from: 0, to: raw.count, by: 4) {
                var bits = UInt32(raw[i])
                bits |= UInt32(raw[i + 1]) << 8
                bits |= UInt32(raw[i + 2]) << 16
                bits |= UInt32(raw[i + 3]) << 24
                decoded.append(Float(bitPattern: bits))
            }
            #expect(decoded == expected[0])
            // The role: passages unless input_type says query (the answer says which).
            #expect(body["input_type"] as? String == "passage")
            let asQueries = try #require(try await client.call(.post, "/v1/embeddings", ["input": texts, "input_type": "query"]).json as? [String: Any])
            #expect(asQueries["input_type"] as? String == "query")
            let queryVectors = try await local.embed(texts, role: .query)
            for (entry, vector) in zip(try #require(asQueries["data"] as? [[String: Any]]), queryVectors) {
                #expect((entry["embedding"] as? [Double] ?? []).map(Float.init) == vector)
            }
            #expect(try await client.call(.post, "/v1/embeddings", ["input": "x", "input_type": "classification"]).status == 400)
            #expect(try await client.call(.post, "/v1/embeddings", ["input": "x", "model": "text-embedding-3-small"]).status == 404)
            #expect(try await client.call(.post, "/v1/embeddings", ["input": [String]()]).status == 400)
            #expect(try await client.call(.post, "/v1/embeddings", ["input": ""]).status == 400)
            // OpenAI's optional fields may come as null, as the schema says.
            let nulls: [String: Any] = ["input": "x", "model": NSNull(), "encoding_format": NSNull(), "dimensions": NSNull(), "user": NSNull()]
            #expect(try await client.call(.post, "/v1/embeddings", nulls).status == 200)
        }
    }

    @Test func openAIShapedBodiesRefuseAFieldTheirDocumentDoesNotName() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            for (uri, body) in [("/v1/vector_stores/astro/search", ["query": "venus", "max_results": 3] as [String: Any]),
                                ("/v1/embeddings", ["input": "venus", "truncate": true])] {
                let (status, json) = try await client.call(.post, uri, body)
                #expect(status == 400, "\(uri)")
                #expect(errorCode(json) == "invalid_argument", "\(uri)")
                let message = ((json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains("Unknown field") && message.contains(body.keys.first { $0 != "query" && $0 != "input" }!), "\(message)")
            }
            #expect(try await client.call(.post, "/v1/vector_stores/astro/search", ["query": "venus", "max_num_results": 3]).status == 200)
            #expect(try await client.call(.post, "/v1/vector_stores/astro/search", raw: "[1]").status == 400)
        }
    }

    @Test func theServiceRefusesToListenBeyondLoopbackWithoutAToken() throws {
        var configuration = ServiceConfiguration()
        configuration.host = "0.0.0.0"
        #expect(throws: KBError.self) { try configuration.validate() }
        configuration.token = "short"
        #expect(throws: KBError.self) { try configuration.validate() }
        configuration.token = Fixture.token
        try configuration.validate()
        configuration.host = "127.0.0.1"
        configuration.token = nil
        try configuration.validate()
    }
}

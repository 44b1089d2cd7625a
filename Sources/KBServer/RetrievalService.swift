import Crypto
import Foundation
public import Hummingbird
import KBContext
import KBCore
public import KBKit
import KBMemory
public import Logging
import NIOCore

/// `kb serve`: the HTTP retrieval service over one knowledge base.
///
/// ```swift
/// let service = RetrievalService(kb: kb, configuration: ServiceConfiguration())
/// try await service.run()
/// ```
public struct RetrievalService: Sendable {
    public let kb: KnowledgeBase
    public let configuration: ServiceConfiguration
    let embeddings: LocalEmbeddings
    /// The request log (`kb usage`), unless the configuration turns it off.
    public let log: RequestLog?
    let metrics = ServiceMetrics()

    public init(kb: KnowledgeBase, configuration: ServiceConfiguration, embeddings: LocalEmbeddings = .shared) {
        self.kb = kb
        self.configuration = configuration
        self.embeddings = embeddings
        log = configuration.requestLog.map { RequestLog(kb: kb, settings: $0) }
    }

    /// Every route the service answers, as the router registers them (the OpenAPI document
    /// documents the same list; a test holds them equal).
    public var routes: [(method: String, path: String)] { RouteTable.entries(of: router()) }

    /// The application, ready to run or to test.
    public func application(logger: Logger? = nil) -> some ApplicationProtocol {
        Application(
            router: router(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "kb"),
            logger: logger ?? Self.defaultLogger)
    }

    static var defaultLogger: Logger {
        var log = Logger(label: "kb.serve")
        log.logLevel = .warning
        return log
    }

    /// Binds and serves until the process is stopped. While the query embedder is unavailable,
    /// searches answer from keywords and a background probe brings it back; both changes are logged.
    public func run() async throws {
        try configuration.validate()
        let logger = Self.defaultLogger
        kb.recoverEmbedderInBackground()
        kb.onEmbedderHealthChange { event in
            switch event {
            case .unavailable(let reason):
                logger.warning("queries cannot be embedded; answering from keywords and retrying in the background: \(reason)")
            case .recovered(let seconds):
                logger.warning("queries can be embedded again (after \(Int(seconds.rounded())) s of keyword-only answers)")
            }
        }
        let jobs = kb.startJobRunner()
        let logging = log.map { log in Task { await log.run() } }
        do {
            try await application(logger: logger).runService()
        } catch {
            await jobs.stop()
            logging?.cancel()
            throw error
        }
        await jobs.stop()
        logging?.cancel()
        _ = await logging?.value
    }

    /// The router: the middleware (metrics and the request log, the browser rules, request ids
    /// and errors, the token, the body limit), then every route, registered once; the table of
    /// methods per path that a 405 answer and a CORS preflight list is read from these
    /// registrations.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let routes = RouteTable()
        router.add(middleware: ObservingMiddleware(metrics: metrics, log: log))
        router.add(middleware: BrowserGuardMiddleware(policy: (try? BrowserPolicy(configuration)) ?? .loopback, routes: routes))
        router.add(middleware: ErrorMiddleware(routes: routes))
        router.add(middleware: AuthMiddleware(token: configuration.token, kb: kb, metricsPublic: configuration.metricsPublic))
        router.add(middleware: BodyLimitMiddleware(limit: configuration.maxBodyBytes))

        router.get("healthz") { _, _ in try Self.json(["status": "ok"]) }
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json(
                        kb.limits, maxEmbeddingInputs: configuration.maxEmbeddingInputs, dimension: embeddings.declaredDimension))))
        }

        router.get("metrics") { _, _ in
            if !configuration.metricsPublic { try Access.caller.requireAdmin("read metrics") }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: try await metrics.exposition(kb: kb))))
        }

        let v1 = router.group("v1")
        v1.get("status") { _, _ in try Self.json(try await kb.serviceStatus()) }
        v1.post("context") { request, _ in
            try await answer(ContextRequest.self, request) { request in
                let caller = Access.caller
                if request.report != nil { try caller.require(.reports, writing: false, "assemble report context") }
                if request.bot != nil || request.report == nil { try caller.requireBot(request.bot) }
                if let user = request.user { try caller.requireScopes([try MemoryScope.user(user)], writing: false) }
                let answer = try await kb.context(request, reports: configuration.reports)
                RequestNote.set { note in
                    (note.bot, note.report, note.user, note.query) = (request.bot, request.report, request.user, request.query)
                    (note.results, note.tokens, note.budget, note.degraded) = (answer.citations.count, answer.tokens, answer.budget, answer.degraded != nil)
                }
                return answer
            }
        }
        v1.post("search") { request, _ in
            try await answer(SearchRequest.self, request) { request in
                try Access.caller.requireBot(request.bot)
                if let user = request.user { try Access.caller.requireScopes([try MemoryScope.user(user)], writing: false) }
                let answer = try await kb.search(request)
                RequestNote.set { note in
                    (note.bot, note.user, note.query) = (request.bot, request.user, request.query)
                    (note.results, note.degraded) = (answer.hits.count, answer.degraded != nil)
                }
                return answer
            }
        }
        v1.post("embeddings") { request, _ in try await embed(request) }

        v1.get("memories") { request, _ in
            let list = try Self.memoryList(request)
            if case .token = Access.caller { try list.check(kb.limits) }
            try Access.caller.requireScopes(try (list.scopes ?? []).map(MemoryScope.init), writing: false)
            return try Self.json(try await kb.memories(list))
        }
        v1.delete("memories") { request, _ in
            let parameters = Self.parameters(request)
            guard parameters.count == 1, parameters[0].key == "scope" else {
                throw KBError(.invalidArgument, "DELETE /v1/memories takes one parameter, scope (?scope=user:ada): it erases everything of that scope. Delete one memory with DELETE /v1/memories/{id}.")
            }
            let erase = EraseRequest(scope: parameters[0].value)
            try erase.check(kb.limits)
            try Access.caller.requireScopes([try MemoryScope(erase.scope)], writing: true)
            return try Self.json(try await kb.erase(erase))
        }
        v1.post("memories") { request, _ in
            try await answer(RememberRequest.self, request, status: { $0.created ? .created : .ok }) { request in
                try Access.caller.requireScopes([try MemoryScope(request.scope ?? MemoryScope.global.name)], writing: true)
                return try await kb.remember(request)
            }
        }
        v1.post("memories/search") { request, _ in
            try await answer(RecallRequest.self, request) { request in
                try Access.caller.requireScopes(try (request.scopes ?? []).map(MemoryScope.init), writing: false)
                let answer = try await kb.recall(request)
                RequestNote.set { note in
                    if let scopes = request.scopes, scopes.count == 1, scopes[0].hasPrefix("user:") { note.user = String(scopes[0].dropFirst(5)) }
                    (note.query, note.results, note.degraded) = (request.query, answer.hits.count, answer.degraded != nil)
                }
                return answer
            }
        }
        v1.post("memories/extract") { request, _ in
            try await answer(MemoryExtractRequest.self, request) { request in
                try Access.caller.requireScopes([try MemoryScope.user(request.user)], writing: request.apply == true)
                let answer = try await kb.extractMemories(request, model: configuration.memoryModel)
                RequestNote.set { note in (note.bot, note.user, note.results) = (request.bot, request.user, answer.proposals.count) }
                return answer
            }
        }
        v1.get("memories/{id}") { _, context in
            let memory = try await kb.memory(try context.pathParameter("id"), history: true)
            let scope = memory.memory.scope
            try Access.caller.requireScopes([scope], writing: false)
            return try Self.json(memory)
        }
        v1.patch("memories/{id}") { request, context in
            let id = try context.pathParameter("id")
            return try await answer(MemoryChangeRequest.self, request, adding: ["id": .string(id)]) { change in
                try await checkMemoryScope(id, writing: true)
                return try await kb.changeMemory(change)
            }
        }
        v1.delete("memories/{id}") { _, context in
            let id = try context.pathParameter("id")
            try await checkMemoryScope(id, writing: true)
            return try Self.json(try await kb.forget(ForgetRequest(id: id)))
        }

        v1.get("bots") { _, _ in try Self.json(try await kb.bots().filter { Access.caller.sees($0) }) }
        v1.post("bots") { request, _ in
            try await answer(BotRequest.self, request, status: { _ in .created }) { request in
                try Access.caller.require(.bots, writing: true, "create bots")
                return try await kb.createBot(request)
            }
        }
        v1.get("bots/{name}") { _, context in
            let name = try context.pathParameter("name")
            try Access.caller.requireBot(name)
            return try Self.json(try await kb.bot(name))
        }
        v1.patch("bots/{name}") { request, context in
            try await answer(BotChangeRequest.self, request, adding: ["name": .string(try context.pathParameter("name"))]) { request in
                try Access.caller.require(.bots, writing: true, "change bots")
                return try await kb.changeBot(request)
            }
        }
        v1.delete("bots/{name}") { _, context in
            try Access.caller.require(.bots, writing: true, "delete bots")
            return try Self.json(try await kb.deleteBot(try context.pathParameter("name")))
        }

        v1.post("sources") { request, _ in
            try Access.caller.require(.sources, writing: true, "add sources")
            return try await addSource(request)
        }
        v1.get("sources") { request, _ in
            try Access.caller.require(.sources, writing: false, "list sources")
            return try Self.json(try await kb.sources(try KBJSON.decode(SourceListRequest.self, query: Self.parameters(request))))
        }
        v1.delete("sources") { request, _ in
            try Access.caller.require(.sources, writing: true, "erase sources")
            let parameters = Self.parameters(request)
            guard parameters.count == 1, parameters[0].key == "user" else {
                throw KBError(.invalidArgument, "DELETE /v1/sources takes one parameter, user (?user=ada): it erases that user's sources. Remove one source with DELETE /v1/sources/{id}.")
            }
            return try Self.json(try await kb.eraseSources(user: parameters[0].value))
        }
        v1.get("sources/{id}") { _, context in
            try Access.caller.require(.sources, writing: false, "see sources")
            return try Self.json(try await kb.source(try context.pathParameter("id")))
        }
        v1.delete("sources/{id}") { _, context in
            try Access.caller.require(.sources, writing: true, "remove sources")
            return try Self.json(try await kb.removeSource(SourceRemoveRequest(id: try context.pathParameter("id"))))
        }
        v1.get("jobs/{id}") { _, context in
            try Access.caller.require(.sources, writing: false, "see jobs")
            return try Self.json(try await kb.job(try context.pathParameter("id")))
        }

        v1.get("tokens") { _, _ in
            try Access.caller.requireAdmin("list tokens")
            return try Self.json(try await kb.tokens())
        }
        v1.post("tokens") { request, _ in
            try Access.caller.requireAdmin("make tokens")
            return try await answer(TokenRequest.self, request, status: { _ in .created }) { try await kb.createToken($0) }
        }
        v1.delete("tokens/{name}") { _, context in
            try Access.caller.requireAdmin("revoke tokens")
            return try Self.json(try await kb.revokeToken(try context.pathParameter("name")))
        }
        routes.record(router)
        return router
    }

    /// A scoped caller may touch a memory only in its scopes (the memory is read to know its scope).
    func checkMemoryScope(_ id: String, writing: Bool) async throws {
        guard case .token = Access.caller else { return }
        let scope = try await kb.memory(id).memory.scope
        try Access.caller.requireScopes([scope], writing: writing)
    }

    /// A request's query parameters, in order.
    static func parameters(_ request: Request) -> [(key: String, value: String)] {
        request.uri.queryParameters.map { (String($0.key), String($0.value)) }
    }

    /// `POST /v1/sources`: a JSON body is a text source; any other body is a file, streamed into
    /// the index as it arrives (never held whole in memory), its fields in the query. Answers 202
    /// with the queued job and its `Location`, or 201 when the job is already done.
    func addSource(_ request: Request) async throws -> Response {
        let type = request.headers[.contentType] ?? ""
        let added: SourceAdded
        if BrowserPolicy.isJSON(type) {
            let query = Self.parameters(request)
            guard query.isEmpty else {
                let names = Set(query.map(\.key)).sorted().joined(separator: ", ")
                throw KBError(.invalidArgument,
                    "POST /v1/sources with a JSON body takes its fields in the body, not as query parameters (\(names)); query parameters go with a file's bytes.")
            }
            let buffer = try await request.body.collect(upTo: configuration.maxBodyBytes)
            added = try await kb.addSource(try KBJSON.decode(SourceRequest.self, from: Data(buffer: buffer)))
        } else {
            if let length = request.headers[.contentLength].flatMap(Int.init), length > kb.limits.maxUploadBytes {
                throw KBError(.tooLarge, "The upload is \(length) bytes; the limit is \(kb.limits.maxUploadBytes) (kb serve --max-upload).")
            }
            let upload = try await kb.beginUpload(try KBJSON.decode(UploadRequest.self, query: Self.parameters(request),
                                                                    adding: ["contentType": .string(type)]))
            do {
                for try await buffer in request.body { try await upload.append(Data(buffer: buffer)) }
            } catch let error as KBError {
                await upload.discard()
                throw error
            } catch {
                await upload.discard()
                throw KBError(.invalidArgument, "The upload was cut short before all its bytes arrived; nothing was kept. Send it again.")
            }
            added = try await upload.finish()
        }
        var response = try Self.json(added, status: added.job.state == .queued ? .accepted : .created)
        response.headers[.location] = "/v1/jobs/" + added.job.id
        return response
    }

    /// `GET /v1/memories`' query parameters: `scope` and `tag` (repeatable), `all`.
    static func memoryList(_ request: Request) throws -> MemoryListRequest {
        let parameters = request.uri.queryParameters
        if let unknown = parameters.map({ String($0.key) }).sorted().first(where: { !["scope", "tag", "all"].contains($0) }) {
            throw KBError(.invalidArgument, "Unknown query parameter \"\(unknown)\". GET /v1/memories takes scope, tag and all.")
        }
        var list = MemoryListRequest()
        list.scopes = parameters.getAll("scope").map { String($0) }
        list.tags = parameters.getAll("tag").map { String($0) }
        if let all = parameters.get("all") {
            guard let flag = Bool(String(all)) else { throw KBError(.invalidArgument, "\"all\" must be true or false; got \"\(all)\".") }
            list.includeSuperseded = flag
        }
        return list
    }

    // MARK: - Handlers

    /// Decodes a request body into `R` (fields from the path added), answers it with `body`, and
    /// encodes the answer: all a kb route does.
    func answer<R: KBRequest, T: Encodable>(
        _ type: R.Type, _ request: Request, adding: [String: JSONValue] = [:], status: (T) -> HTTPResponse.Status = { _ in .ok },
        _ body: (R) async throws -> T
    ) async throws -> Response {
        let buffer = try await request.body.collect(upTo: configuration.maxBodyBytes)
        let decoded = try KBJSON.decode(R.self, from: Data(buffer: buffer), adding: adding)
        // A scoped caller's rights are weighed before kb answers: check the request first, so that a
        // bad one is told so as from the CLI and MCP (the admin's is checked once, where kb answers it).
        if case .token = Access.caller { try decoded.check(kb.limits) }
        let value = try await body(decoded)
        return try Self.json(value, status: status(value))
    }

    func embed(_ request: Request) async throws -> Response {
        let buffer = try await request.body.collect(upTo: configuration.maxBodyBytes)
        guard buffer.readableBytes > 0 else { throw KBError(.invalidArgument, "The request needs a JSON body.") }
        let body: API.EmbeddingsBody
        do {
            body = try JSONDecoder().decode(API.EmbeddingsBody.self, from: Data(buffer: buffer))
        } catch {
            throw KBError(.invalidArgument, "The body must be an OpenAI embeddings request: {\"input\": \"text\" or [\"texts\"], \"model\": …}.")
        }
        let texts = body.input.texts
        guard !texts.isEmpty, texts.count <= configuration.maxEmbeddingInputs else {
            throw KBError(.invalidArgument, "input must hold 1 to \(configuration.maxEmbeddingInputs) texts; got \(texts.count).")
        }
        if let empty = texts.firstIndex(where: { $0.isEmpty }) {
            throw KBError(.invalidArgument, "input[\(empty)] is empty; every input must be a non-empty string.")
        }
        let format = body.encoding_format ?? "float"
        guard format == "float" || format == "base64" else {
            throw KBError(.invalidArgument, "encoding_format must be float or base64; got \(format).")
        }
        let model = try await embeddings.modelID()
        if let asked = body.model, !["local", model, model.lowercased(), "sentence-transformers/" + model].contains(asked) {
            throw KBError(.notFound, "The model '\(asked)' does not exist here; this service embeds with \(model).")
        }
        let width = try await embeddings.dimension()
        if let dimensions = body.dimensions, dimensions != width {
            throw KBError(.unprocessable, "\(model) returns \(width) dimensions; it cannot return \(dimensions).")
        }
        let (vectors, tokens) = try await embeddings.embed(texts)
        let data = vectors.enumerated().map { index, vector in
            API.Embedding(index: index, embedding: format == "float" ? .floats(vector) : .base64(Self.base64(vector)))
        }
        return try Self.json(API.EmbeddingsResponse(data: data, model: model, usage: .init(prompt_tokens: tokens, total_tokens: tokens)))
    }

    /// Little-endian float32 bytes, base64: what OpenAI's `encoding_format: base64` returns.
    static func base64(_ vector: [Float]) -> String {
        var bytes = Data(capacity: vector.count * 4)
        for value in vector { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes.base64EncodedString()
    }

    // MARK: - JSON

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(bytes: try KBJSON.encode(value))))
    }
}

extension RequestContext {
    /// A path parameter as the client meant it: percent-decoded (`file%3A…` is `file:…`).
    func pathParameter(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        guard let decoded = raw.removingPercentEncoding else {
            throw KBError(.invalidArgument, "The path parameter \(name) is '\(raw)', which is not valid percent-encoding; encode the value with UTF-8.")
        }
        return decoded
    }
}

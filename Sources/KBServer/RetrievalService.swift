import Crypto
public import Foundation
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

    public init(kb: KnowledgeBase, configuration: ServiceConfiguration, embeddings: LocalEmbeddings = .shared) {
        self.kb = kb
        self.configuration = configuration
        self.embeddings = embeddings
    }

    /// Every route the service answers, as the OpenAPI document lists them.
    public static let routes: [(method: String, path: String)] = [
        ("GET", "/healthz"), ("GET", "/openapi.json"), ("GET", "/v1/status"),
        ("POST", "/v1/context"), ("POST", "/v1/search"), ("POST", "/v1/embeddings"),
        ("GET", "/v1/memories"), ("POST", "/v1/memories"), ("POST", "/v1/memories/search"),
        ("GET", "/v1/memories/{id}"), ("PATCH", "/v1/memories/{id}"), ("DELETE", "/v1/memories/{id}"),
        ("GET", "/v1/bots"), ("POST", "/v1/bots"),
        ("GET", "/v1/bots/{name}"), ("PATCH", "/v1/bots/{name}"), ("DELETE", "/v1/bots/{name}"),
    ]

    /// The application, ready to run or to test.
    public func application(logger: Logger? = nil) -> some ApplicationProtocol {
        var log = logger ?? Logger(label: "kb.serve")
        if logger == nil { log.logLevel = .warning }
        return Application(
            router: router(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "kb"),
            logger: log)
    }

    /// Binds and serves until the process is stopped.
    public func run() async throws {
        try configuration.validate()
        try await application().runService()
    }

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: AuthMiddleware(token: configuration.token))
        router.add(middleware: BodyLimitMiddleware(limit: configuration.maxBodyBytes))

        router.get("/healthz") { _, _ in try Self.json(["status": "ok"]) }
        router.get("/openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        }
        router.get("/v1/status") { _, _ in try Self.json(try kb.status()) }
        router.post("/v1/context") { request, _ in try await context(request) }
        router.post("/v1/search") { request, _ in try await search(request) }
        router.post("/v1/embeddings") { request, _ in try await embed(request) }

        router.get("/v1/memories") { request, _ in
            let query = request.uri.queryParameters
            let scopes = try query.getAll("scope").map { try MemoryScope(String($0)) }
            let tags = query.getAll("tag").map { Tag(String($0)) }
            return try Self.json(try kb.memories(scopes: scopes, tags: tags, includeSuperseded: query.get("all") == "true"))
        }
        router.post("/v1/memories") { request, _ in
            let body = try await Self.decode(API.MemoryBody.self, request, limit: configuration.maxBodyBytes)
            let draft = MemoryDraft(body.content, title: body.title, scope: try body.scope.map { try MemoryScope($0) } ?? .global,
                                    tags: (body.tags ?? []).map { Tag($0) })
            let result = try await kb.remember(draft, superseding: body.supersede)
            return try Self.json(result, status: result.created ? .created : .ok)
        }
        router.post("/v1/memories/search") { request, _ in
            let body = try await Self.decode(API.MemorySearchBody.self, request, limit: configuration.maxBodyBytes)
            var recall = MemoryQuery(body.query)
            recall.scopes = try (body.scopes ?? []).map { try MemoryScope($0) }
            recall.tags = (body.tags ?? []).map { Tag($0) }
            recall.limit = try checkedK(body.k)
            recall.mode = body.mode ?? .hybrid
            recall.recency = try body.halfLife.map { try Recency($0) }
            recall.includeSuperseded = body.includeSuperseded ?? false
            return try Self.json(try await kb.recall(recall))
        }
        router.get("/v1/memories/{id}") { _, context in
            let memory = try kb.memory(try context.parameters.require("id"))
            return try Self.json(API.MemoryWithHistory(memory: memory, history: try kb.memoryHistory(memory.id)))
        }
        router.patch("/v1/memories/{id}") { request, context in
            let body = try await Self.decode(API.MemoryPatch.self, request, limit: configuration.maxBodyBytes)
            let change = MemoryChange(content: body.content, title: body.title.map { .some($0) }, tags: body.tags.map { $0.map { Tag($0) } })
            return try Self.json(try await kb.updateMemory(try context.parameters.require("id"), change))
        }
        router.delete("/v1/memories/{id}") { _, context in
            try Self.json(["deleted": try kb.forget(try context.parameters.require("id")).id])
        }

        router.get("/v1/bots") { _, _ in try Self.json(try kb.bots()) }
        router.post("/v1/bots") { request, _ in
            let body = try await Self.decode(API.BotBody.self, request, limit: configuration.maxBodyBytes)
            let bot = try kb.createBot(
                name: body.name, systemPrompt: body.systemPrompt ?? "", sources: try (body.sources ?? []).map { try SourceSelector($0) },
                memoryScopes: body.memoryScopes ?? Bot.defaultMemoryScopes)
            return try Self.json(bot, status: .created)
        }
        router.get("/v1/bots/{name}") { _, context in try Self.json(try kb.bot(try context.parameters.require("name"))) }
        router.patch("/v1/bots/{name}") { request, context in
            let name = try context.parameters.require("name")
            let body = try await Self.decode(API.BotPatch.self, request, limit: configuration.maxBodyBytes)
            var bot = try kb.updateBot(name, systemPrompt: body.systemPrompt, memoryScopes: body.memoryScopes)
            if let sources = body.sources {
                let wanted = try sources.map { try SourceSelector($0) }
                for old in bot.sources where !wanted.contains(old) { bot = try kb.removeBotSource(name, old) }
                for new in wanted { bot = try kb.addBotSource(name, new) }
            }
            return try Self.json(bot)
        }
        router.delete("/v1/bots/{name}") { _, context in
            let name = try context.parameters.require("name")
            try kb.deleteBot(name)
            return try Self.json(["deleted": name])
        }
        return router
    }

    // MARK: - Handlers

    func checkedK(_ k: Int?) throws -> Int {
        let k = k ?? 8
        guard (1...configuration.maxResults).contains(k) else {
            throw KBError(.invalidArgument, "k must be between 1 and \(configuration.maxResults); got \(k).")
        }
        return k
    }

    func context(_ request: Request) async throws -> Response {
        let body = try await Self.decode(API.ContextBody.self, request, limit: configuration.maxBodyBytes)
        let budget = body.budget ?? 1500
        guard (1...configuration.maxBudget).contains(budget) else {
            throw KBError(.invalidArgument, "budget must be between 1 and \(configuration.maxBudget) tokens; got \(budget).")
        }
        let target: ContextRequest.Target
        switch (body.bot, body.report) {
        case (let bot?, nil): target = .bot(bot)
        case (nil, let report?):
            guard let template = configuration.reports[report] else {
                let known = configuration.reports.keys.sorted()
                throw KBError(.notFound, "No report is named \(report). "
                    + (known.isEmpty ? "Start kb serve with --reports FOLDER to offer report templates." : "Known reports: \(known.joined(separator: ", ")).")
                )
            }
            target = .report(template)
        default:
            throw KBError(.invalidArgument, "Give either \"bot\" or \"report\" (one of them).")
        }
        let response = try await kb.context(ContextRequest(target, query: body.query ?? "", user: body.user, budget: budget))
        return try Self.json(response)
    }

    func search(_ request: Request) async throws -> Response {
        let body = try await Self.decode(API.SearchBody.self, request, limit: configuration.maxBodyBytes)
        var query = SearchQuery(body.query)
        query.limit = try checkedK(body.k)
        query.tags = (body.tags ?? []).map { Tag($0) }
        query.kinds = Set(body.kinds ?? [])
        query.sourcePrefixes = body.sources ?? []
        query.mode = body.mode ?? .hybrid
        if let name = body.bot {
            let bot = try kb.bot(name)
            guard !bot.sources.isEmpty else {
                return try Self.json(SearchResults(query: query.text, mode: query.mode, embedder: nil, hits: []))
            }
            query.selectors = bot.sources
            query.kinds.remove(.memory)
        }
        return try Self.json(try await kb.search(query))
    }

    func embed(_ request: Request) async throws -> Response {
        let body = try await Self.decode(API.EmbeddingsBody.self, request, limit: configuration.maxBodyBytes)
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
        let model = try embeddings.modelID()
        if let asked = body.model, !["local", model, model.lowercased(), "sentence-transformers/" + model].contains(asked) {
            throw KBError(.notFound, "The model '\(asked)' does not exist here; this service embeds with \(model).")
        }
        if let dimensions = body.dimensions, dimensions != 384 {
            throw KBError(.invalidArgument, "\(model) returns 384 dimensions; it cannot return \(dimensions).")
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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// Decodes a JSON body, turning every decoding problem into a message that names the field.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int) async throws -> T {
        let buffer = try await request.body.collect(upTo: limit)
        guard buffer.readableBytes > 0 else { throw KBError(.invalidArgument, "The request needs a JSON body.") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: buffer))
        } catch let DecodingError.keyNotFound(key, context) {
            throw KBError(.invalidArgument, "The field \"\((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))\" is missing.")
        } catch let DecodingError.typeMismatch(expected, context) {
            throw KBError(.invalidArgument, "The field \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" must be \(Self.describe(expected)).")
        } catch let DecodingError.valueNotFound(expected, context) {
            throw KBError(.invalidArgument, "The field \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" must be \(Self.describe(expected)), not null.")
        } catch let DecodingError.dataCorrupted(context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw KBError(.invalidArgument, path.isEmpty ? "The body is not valid JSON." : "The field \"\(path)\" has a value that is not allowed.")
        }
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [String].Type, is [Any].Type: "a list"
        default: "\(type)"
        }
    }
}

// MARK: - Middleware

/// Turns every error into `{"error": {"code", "message"}}` with the right status; internal
/// errors are logged to stderr and answered without details.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as KBError {
            return Self.response(Self.status(error.code), code: error.code.rawValue, message: error.message)
        } catch let error as HTTPError {
            let message = error.body ?? (error.status == .notFound ? "No such endpoint: \(request.method) \(request.uri.path). GET /openapi.json lists them." : error.status.reasonPhrase)
            return Self.response(error.status, code: Self.code(error.status), message: message)
        } catch is NIOTooManyBytesError {
            return Self.response(.contentTooLarge, code: "too_large", message: "The request body is over the service's limit.")
        } catch {
            context.logger.error("internal error on \(request.method) \(request.uri.path): \(String(describing: error))")
            return Self.response(.internalServerError, code: "internal", message: "Something went wrong inside kb; the server log has the details.")
        }
    }

    static func status(_ code: KBError.Code) -> HTTPResponse.Status {
        switch code {
        case .notFound, .noIndex: .notFound
        case .tooLarge: .contentTooLarge
        case .conflict: .conflict
        case .unsupportedMode, .embedderMismatch: .unprocessableContent
        case .invalidArgument, .invalidText: .badRequest
        case .modelMissing, .embedding: .serviceUnavailable
        default: .internalServerError
        }
    }

    static func code(_ status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "invalid_argument"
        case 401: "unauthorized"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 413: "too_large"
        default: "http_\(status.code)"
        }
    }

    static func response(_ status: HTTPResponse.Status, code: String, message: String) -> Response {
        var response = (try? RetrievalService.json(API.ErrorBody(error: .init(code: code, message: message)), status: status))
            ?? Response(status: status)
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}

/// Requires `Authorization: Bearer TOKEN` on every route but `/healthz` when a token is set,
/// comparing in constant time (SHA-256 of both, then every byte).
struct AuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let expected: [UInt8]?

    init(token: String?) {
        expected = token.flatMap { $0.isEmpty ? nil : Array(SHA256.hash(data: Data($0.utf8))) }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let expected, request.uri.path != "/healthz" else { return try await next(request, context) }
        let header = request.headers[.authorization] ?? ""
        let given = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
        let digest = Array(SHA256.hash(data: Data(given.utf8)))
        var difference: UInt8 = 0
        for (a, b) in zip(digest, expected) { difference |= a ^ b }
        guard difference == 0, !given.isEmpty else {
            throw HTTPError(.unauthorized, message: "Send the API token as `Authorization: Bearer TOKEN`.")
        }
        return try await next(request, context)
    }
}

/// Answers 413 before reading a body whose declared length is over the limit; bodies without a
/// length are cut off at the limit when read.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw KBError(.tooLarge, "The request body is \(length) bytes; the limit is \(limit).")
        }
        return try await next(request, context)
    }
}

import Foundation
import HTTPTypes
import OpenAPIRuntime
#if canImport(OpenAPIURLSession)
import OpenAPIURLSession
#else
import OpenAPIAsyncHTTPClient
#endif

// The hand-written part of KBClient: what the generated `Client` makes awkward. Everything else —
// every route, request and answer — is the generated code (Generated/), from kb's OpenAPI document.

/// Adds `Authorization: Bearer TOKEN` to every request (kb serve --token, or a token of
/// `POST /v1/tokens`).
public struct BearerToken: ClientMiddleware {
    let token: String

    public init(_ token: String) { self.token = token }

    public func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                          next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}

/// An answer of kb serve that is not a success: its HTTP status and, when kb sent one (every
/// documented error), its `{"error": {"code", "message"}}`.
public struct KBServiceError: Error, CustomStringConvertible {
    public let status: Int
    public let error: Components.Schemas._Error?

    public init(status: Int, error: Components.Schemas._Error?) {
        self.status = status
        self.error = error
    }

    public var description: String {
        error.map { "kb serve answered \(status) \($0.error.code): \($0.error.message)" } ?? "kb serve answered \(status)"
    }

    /// The error an operation's answer holds, or nil when it is a success: for any generated
    /// `Operations.….Output` (`switch` over it for the answers you expect, and
    /// `throw KBServiceError(answer)!` in the `default` case). Each operation has its own cases
    /// for the same documented errors; this reads the case's status and its `Error` body.
    public init?(_ output: some Sendable) {
        guard let answer = Mirror(reflecting: output).children.first, let label = answer.label else { return nil }
        if label == "undocumented" {
            let status = Mirror(reflecting: answer.value).children.first { $0.label == "statusCode" }?.value as? Int
            self.init(status: status ?? 0, error: nil)
            return
        }
        guard let status = Self.statuses[label] else { return nil }
        let body = Mirror(reflecting: answer.value).children.first { $0.label == "body" }?.value
        self.init(status: status, error: body.flatMap { Mirror(reflecting: $0).children.first?.value as? Components.Schemas._Error })
    }

    /// The generator's names of the error answers kb documents.
    static let statuses = [
        "badRequest": 400, "unauthorized": 401, "forbidden": 403, "notFound": 404, "conflict": 409, "contentTooLarge": 413,
        "unsupportedMediaType": 415, "misdirectedRequest": 421, "unprocessableContent": 422, "internalServerError": 500,
        "badGateway": 502, "serviceUnavailable": 503, "gatewayTimeout": 504,
    ]
}

/// A streamed chat answer's events, in order.
public enum ChatEvent: Sendable {
    /// A piece of the answer's text as the model wrote it (the first choice's).
    case delta(String)
    /// kb's last event: which context the answer was given (citations numbered as the answer's
    /// [n] markers, markers that match no citation, the retrieval's queries).
    case finished(Components.Schemas.ChatAnswerInfo)
}

extension Client {
    /// A client of the kb serve at `url` (e.g. http://127.0.0.1:8080), sending `token` as the
    /// bearer token. The transport is URLSession on Apple's platforms and AsyncHTTPClient on Linux
    /// unless one is given.
    public init(url: URL, token: String?, transport: (any ClientTransport)? = nil, middlewares: [any ClientMiddleware] = []) {
        #if canImport(OpenAPIURLSession)
        let standard: any ClientTransport = URLSessionTransport()
        #else
        let standard: any ClientTransport = AsyncHTTPClientTransport()
        #endif
        self.init(serverURL: url, transport: transport ?? standard, middlewares: (token.map { [BearerToken($0)] } ?? []) + middlewares)
    }

    /// A client configured by `KB_URL` (default http://127.0.0.1:8080) and `KB_API_TOKEN`.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Client {
        let address = environment["KB_URL"] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: address), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw KBClientSetupError(message: "KB_URL \"\(address)\" is not an http(s) URL. Set it to kb serve's address, e.g. http://127.0.0.1:8080.")
        }
        return Client(url: url, token: environment["KB_API_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
    }

    // MARK: - A streamed chat answer

    /// Asks the bot `request.model` for a streamed answer (`stream` is set) and gives its text as
    /// it arrives, then kb's citations. An answer that is not a stream (an error) throws
    /// `KBServiceError`; an upstream model that fails mid-answer ends the sequence with one.
    public func streamChat(_ request: Components.Schemas.ChatCompletionRequest) async throws -> AsyncThrowingStream<ChatEvent, any Error> {
        var request = request
        request.stream = true
        let output = try await chatCompletions(headers: .init(accept: [.init(contentType: .textEventStream)]), body: .json(request))
        guard case .ok(let ok) = output else { throw KBServiceError(output) ?? KBServiceError(status: 0, error: nil) }
        let body = try ok.body.textEventStream
        let chunks = body.asDecodedServerSentEventsWithJSONData(
            of: Components.Schemas.ChatCompletionChunk.self, while: { $0 != ArraySlice("[DONE]".utf8) })
        return AsyncThrowingStream { continuation in
            let reading = Task {
                do {
                    for try await event in chunks {
                        guard let chunk = event.data else { continue }
                        if let failure = chunk.error {
                            throw KBServiceError(status: 502, error: .init(error: .init(code: failure.code, message: failure.message)))
                        }
                        for choice in chunk.choices ?? [] where (choice.index ?? 0) == 0 {
                            if let text = choice.delta?.content, !text.isEmpty { continuation.yield(.delta(text)) }
                        }
                        if let kb = chunk.kb { continuation.yield(.finished(kb)) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in reading.cancel() }
        }
    }

    // MARK: - A file added, its job followed

    /// Adds the file at `path` as a knowledge source (its media type from its extension; `query`
    /// gives its title, tags, bots, owner) and waits until kb has read it: the job, done. A job
    /// that fails throws `KBServiceError` (status 422, the job's error); `progress` sees each state
    /// polled. A large book can take minutes: cancel the task to stop waiting (the job goes on).
    public func addFile(at path: URL, query: Operations.AddSource.Input.Query = .init(), pollingEvery interval: Duration = .milliseconds(250),
                        progress: @Sendable (Components.Schemas.Job) -> Void = { _ in }) async throws -> Components.Schemas.Job {
        let body = try Operations.AddSource.Input.Body(file: path)
        let added: Components.Schemas.SourceAdded
        switch try await addSource(query: query, body: body) {
        case .accepted(let answer): added = try answer.body.json
        case .created(let answer): added = try answer.body.json
        case let failure: throw KBServiceError(failure) ?? KBServiceError(status: 0, error: nil)
        }
        var job = added.job
        while true {
            progress(job)
            switch job.state {
            case .done: return job
            case .failed:
                throw KBServiceError(status: 422, error: .init(error: .init(code: "job_failed", message: job.error ?? "kb could not read \(path.lastPathComponent).")))
            case .receiving, .queued, .running: break
            }
            try await Task.sleep(for: interval)
            switch try await getJob(path: .init(id: job.id)) {
            case .ok(let answer): job = try answer.body.json
            case let failure: throw KBServiceError(failure) ?? KBServiceError(status: 0, error: nil)
            }
        }
    }
}

extension Operations.AddSource.Input.Body {
    /// A file's bytes as the body of `POST /v1/sources`, its media type from its extension.
    public init(file path: URL) throws {
        let bytes: Data
        do { bytes = try Data(contentsOf: path) } catch {
            throw KBClientSetupError(message: "Cannot read \(path.path): \(error.localizedDescription)")
        }
        let body = HTTPBody(bytes)
        switch path.pathExtension.lowercased() {
        case "pdf": self = .pdf(body)
        case "epub": self = .applicationEpubZip(body)
        case "docx": self = .applicationVnd_openxmlformatsOfficedocument_wordprocessingml_document(body)
        case "jsonl", "ndjson": self = .applicationXNdjson(body)
        case "jpg", "jpeg": self = .jpeg(body)
        case "png": self = .png(body)
        case "tif", "tiff": self = .imageTiff(body)
        case "csv": self = .csv(body)
        case "html", "htm": self = .html(body)
        case "md", "markdown": self = .textMarkdown(body)
        case "txt", "text": self = .plainText(body)
        default:
            throw KBClientSetupError(message: "\(path.lastPathComponent): kb reads .pdf, .epub, .docx, .jsonl, .jpg, .png, .tiff, .csv, .html, .md and .txt files; rename it or convert it first.")
        }
    }
}

extension Components.Schemas.ChatCompletionRequest.MessagesPayloadPayload {
    /// The user's turn.
    public static func user(_ text: String) -> Self { .init(content: text, role: .user) }
    /// The bot's earlier answer.
    public static func assistant(_ text: String) -> Self { .init(content: text, role: .assistant) }
}

/// A mistake in how a client was set up or called, found before anything was sent.
public struct KBClientSetupError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

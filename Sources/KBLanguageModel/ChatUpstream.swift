public import AsyncAlgorithms
public import AsyncHTTPClient
public import Foundation
public import KBCore
public import NIOCore
import NIOFoundationCompat

/// The upstream chat model a chat completion is sent on to: an OpenAI-compatible
/// `POST {base}/chat/completions` (OpenAI, Ollama, vLLM, llama.cpp, LM Studio), over
/// async-http-client so that an answer streams through as it comes, a slow reader slows the
/// upstream read instead of filling kb's memory, and a request given up (the client went away)
/// closes the upstream connection.
///
/// Errors say which model at which URL failed and how to fix it; the upstream's own error body
/// goes into the error's cause, which only the server log shows.
public struct ChatUpstream: Sendable {
    /// The model, its base URL, key and timeout (`--llm`, `--llm-url`, `--llm-timeout`).
    public let model: ChatModel

    public init(model: ChatModel) { self.model = model }

    /// The largest non-streamed answer kb reads. The default is 16 MiB.
    static let maxAnswerBytes = 16 << 20

    /// Sends `body` and returns the response once its head is in (within the timeout); the body
    /// is the caller's to read. A status outside 2xx is an error, with the upstream's body in its
    /// cause.
    public func send(_ body: Data, stream: Bool) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: model.baseURL.appendingPathComponent("chat/completions").absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: stream ? "text/event-stream" : "application/json")
        if let key = model.apiKey { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        request.body = .bytes(ByteBuffer(data: body))
        let response: HTTPClientResponse
        do {
            response = try await Self.client(timeout: model.timeout).execute(request, timeout: .seconds(Int64(model.timeout.rounded(.up))))
        } catch {
            throw failure(error)
        }
        guard (200..<300).contains(response.status.code) else {
            let text = (try? await response.body.collect(upTo: 64 << 10)).map { String(buffer: $0) } ?? ""
            let status = Int(response.status.code)
            let hint = switch status {
            case 401, 403: " Check the key (KB_LLM_API_KEY or OPENAI_API_KEY)."
            case 404: " Check --llm-url (the part before /chat/completions) and the model's name."
            case 400, 422: " It refused the request kb sent on; the server log has its answer."
            case 429: " It is rate-limited; try again later."
            default: " Check that the model server runs and is healthy."
            }
            throw KBError(.languageModel, "\(describe) answered HTTP \(status).\(hint)", cause: UpstreamAnswer(text: String(text.prefix(4_000))))
        }
        return response
    }

    /// What an error on the way to the upstream means for the client: a timeout (504) or a
    /// model that did not answer (502).
    public func failure(_ error: any Error) -> any Error {
        if error is CancellationError || error is KBError { return error }
        if let error = error as? HTTPClientError {
            if error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
                return KBError(.upstreamTimeout, "\(describe) gave no answer within \(Int(model.timeout)) s. Raise --llm-timeout, or check the model server.",
                               cause: error)
            }
            if error == .cancelled { return CancellationError() }
        }
        return KBError(.languageModel, "\(describe) could not be reached. Check --llm-url and that the model server runs.",
                       cause: UpstreamAnswer(text: "\(error)"))
    }

    /// The answer, when it was not streamed: read whole (up to `maxAnswerBytes`, within the
    /// timeout), a JSON object.
    public func answer(_ response: HTTPClientResponse) async throws -> [String: JSONValue] {
        let buffer: ByteBuffer
        do {
            buffer = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                group.addTask { try await response.body.collect(upTo: Self.maxAnswerBytes) }
                group.addTask {
                    try await Task.sleep(for: .seconds(model.timeout))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let buffer = first else {
                    throw KBError(.upstreamTimeout, "\(describe) did not finish its answer within \(Int(model.timeout)) s. Raise --llm-timeout, or check the model server.")
                }
                return buffer
            }
        } catch {
            throw failure(error)
        }
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: buffer)),
              case .array(let choices)? = object["choices"], choices.allSatisfy({ if case .object = $0 { true } else { false } }) else {
            throw KBError(.languageModel, "\(describe) answered, but not with a chat completion (a JSON object with choices).",
                          cause: UpstreamAnswer(text: String(String(buffer: buffer).prefix(4_000))))
        }
        return object
    }

    /// A streamed answer's bytes, handed to the caller a part at a time as it takes them: the
    /// upstream is read only when the caller wants more (a slow reader slows the upstream; kb
    /// holds one part), the timeout counts only the waits for the upstream, and `stop()` (the
    /// client went away) closes the upstream request.
    public final class Stream: Sendable {
        public let parts = AsyncThrowingChannel<ByteBuffer, any Error>()
        private let reader: Task<Void, Never>

        public init(_ response: HTTPClientResponse, from upstream: ChatUpstream) {
            let parts = parts
            reader = Task {
                let waiting = LockedValue<ContinuousClock.Instant?>(nil)
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            var iterator = response.body.makeAsyncIterator()
                            while true {
                                waiting.withLock { $0 = .now }
                                guard let part = try await iterator.next() else { break }
                                waiting.withLock { $0 = nil }
                                await parts.send(part)   // returns once the caller took it
                                try Task.checkCancellation()
                            }
                        }
                        group.addTask {
                            // The timeout, for the waits on the upstream only.
                            while true {
                                try await Task.sleep(for: .milliseconds(200))
                                if let since = waiting.withLock({ $0 }), ContinuousClock.now - since > .seconds(upstream.model.timeout) {
                                    throw KBError(.upstreamTimeout, "\(upstream.describe) sent nothing more for \(Int(upstream.model.timeout)) s mid-answer. Raise --llm-timeout, or check the model server.")
                                }
                            }
                        }
                        defer { group.cancelAll() }
                        try await group.next()
                    }
                    parts.finish()
                } catch {
                    parts.fail(upstream.failure(error))
                }
            }
        }

        /// Stops reading: the upstream request is closed.
        public func stop() { reader.cancel() }
    }

    /// `the chat model openai:MODEL at URL`.
    public var describe: String { "The chat model \(model.name) at \(model.baseURL.absoluteString)" }

    /// One client per timeout, for the life of the process (a client must be shut down before it
    /// goes, and the service's clients live as long as it does). `timeout` bounds connecting.
    static func client(timeout: TimeInterval) -> HTTPClient {
        let key = Int(timeout.rounded(.up))
        return clients.withLock { clients in
            if let client = clients[key] { return client }
            var configuration = HTTPClient.Configuration()
            // No read timeout here: a streamed answer is read only as fast as the client takes it,
            // so its waits are timed by `Stream` instead.
            configuration.timeout = .init(connect: .seconds(Int64(min(key, 10))))
            configuration.decompression = .disabled
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    private static let clients = LockedValue<[Int: HTTPClient]>([:])
}

/// What the upstream said, for the server log only.
struct UpstreamAnswer: Error, Sendable, CustomStringConvertible {
    let text: String
    var description: String { "the upstream answered: \(text)" }
}

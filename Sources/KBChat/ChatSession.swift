import AsyncAlgorithms
import Foundation
public import KBCore
public import KBKit
public import KBLanguageModel
public import KBRequests
import NIOCore

/// One chat completion, from the turn to what it teaches: the bot's context for the last user turn
/// (`KnowledgeBase.chatTurn`), the upstream model asked with it as the first system message
/// (`ChatUpstream`), the answer with its citations — whole, or streamed through as the upstream
/// writes it and ended with kb's chunk of citations — and then, if the request asks, memories
/// learned from the turn. The HTTP route only maps it to JSON or Server-Sent Events.
public struct ChatSession: Sendable {
    /// What an upstream exchange came to (nil: answered in full) and how long it took, for metrics.
    public typealias Observer = @Sendable (_ failure: (any Error)?, _ elapsed: Duration) -> Void

    public let request: ChatCompletionRequest
    public let caller: Caller
    /// The upstream model the turn is sent to: the configured one, or the model the request names
    /// (`kb.upstreamModel`) at the same endpoint.
    public let model: ChatModel
    /// The bot, its context and the system message.
    public let turn: ChatTurn
    let kb: KnowledgeBase
    /// The configured model, which learning asks.
    let learningModel: ChatModel
    let observe: Observer

    /// Prepares the turn: refused (422) without an upstream model, and as `chatTurn` refuses.
    public init(_ request: ChatCompletionRequest, on kb: KnowledgeBase, model configured: ChatModel?, reports: [String: ReportTemplate] = [:],
                as caller: Caller, observe: @escaping Observer = { _, _ in }) async throws {
        guard let configured else {
            throw KBError(.unprocessable, "This kb serve has no chat model to send the turn to; start it with --llm openai:MODEL (and --llm-url URL for a model other than OpenAI's).")
        }
        var model = configured
        if let upstream = request.upstreamModel { model.model = upstream }
        self.request = request
        self.caller = caller
        self.model = model
        self.kb = kb
        self.learningModel = configured
        self.observe = observe
        turn = try await kb.chatTurn(request, reports: reports, as: caller)
    }

    /// The answer the client gets.
    public enum Answer: Sendable {
        /// The upstream's chat completion, each choice's message carrying the citations, and kb's
        /// `kb` field.
        case complete(JSONValue)
        /// The answer as it is written (`ChatStream.frames`).
        case stream(ChatStream)
    }

    /// Sends the turn upstream. A non-streamed answer is read whole; a streamed one is handed over
    /// once the upstream's head is in, to be read as the client takes it. Upstream failures are
    /// `.languageModel` (502) or `.upstreamTimeout` (504) errors that say which model failed.
    public func answer() async throws -> Answer {
        let upstream = ChatUpstream(model: model)
        let body = try KBJSON.encode(request.upstreamBody(model: model.model, system: turn.system))
        let started = ContinuousClock.now
        let summary = ChatSummary(turn, model: model, showsContext: request.options.showContext == true)
        do {
            let response = try await upstream.send(body, stream: request.stream)
            guard request.stream else {
                let answer = try summary.annotate(try await upstream.answer(response))
                observe(nil, ContinuousClock.now - started)
                return .complete(answer)
            }
            guard response.headers["content-type"].first?.lowercased().hasPrefix("text/event-stream") == true else {
                throw KBError(.languageModel, "\(upstream.describe) was asked to stream but answered \(response.headers["content-type"].first ?? "without a content type"), not text/event-stream.")
            }
            return .stream(ChatStream(ChatUpstream.Stream(response, from: upstream), summary: summary, started: started, observe: observe))
        } catch {
            observe(error, ContinuousClock.now - started)
            throw error
        }
    }

    /// What the turn teaches, once it is answered (`KnowledgeBase.learn`): nil when it asked for
    /// nothing or has no user.
    public func learn() async throws -> MemoryExtraction? {
        try await kb.learn(from: request, model: learningModel, as: caller)
    }

    /// Whether the request asks to learn from the turn (`kb.learn`, with a user).
    public var learns: Bool { request.options.learning != .none && request.user != nil }
}

/// A streamed answer, as Server-Sent Events to write to the client: each upstream event as it
/// came, then kb's last chunk (no choices; the `kb` field with the citations) and `data: [DONE]`;
/// or, when the upstream fails mid-answer, an error event as OpenAI's streams end with. The
/// upstream is read only as the frames are taken (a slow client slows it); `stop()` — a client
/// gone — closes the upstream request.
public final class ChatStream: Sendable {
    let parts: ChatUpstream.Stream
    let summary: ChatSummary
    let started: ContinuousClock.Instant
    let observe: ChatSession.Observer
    private let state = LockedValue<(observed: Bool, completed: Bool)>((false, false))

    init(_ parts: ChatUpstream.Stream, summary: ChatSummary, started: ContinuousClock.Instant, observe: @escaping ChatSession.Observer) {
        (self.parts, self.summary, self.started, self.observe) = (parts, summary, started, observe)
    }

    /// The frames, each ready to write (`data: …` and its blank line).
    public var frames: Frames { Frames(stream: self) }

    /// Whether the answer reached its end (the citations chunk was produced).
    public var completed: Bool { state.withLock { $0.completed } }

    /// Stops reading the upstream, which closes its request; an answer not finished counts as
    /// given up by the client.
    public func stop() {
        parts.stop()
        finish(CancellationError(), completed: false)
    }

    /// Reports the exchange once.
    fileprivate func finish(_ failure: (any Error)?, completed: Bool) {
        let first = state.withLock { state in
            defer { state.observed = true }
            if !state.observed { state.completed = completed }
            return !state.observed
        }
        if first { observe(failure, ContinuousClock.now - started) }
    }

    public struct Frames: AsyncSequence {
        public typealias Element = String
        let stream: ChatStream

        public func makeAsyncIterator() -> Iterator { Iterator(stream: stream, parts: stream.parts.parts.makeAsyncIterator()) }

        public struct Iterator: AsyncIteratorProtocol {
            let stream: ChatStream
            var parts: AsyncThrowingChannel<ByteBuffer, any Error>.AsyncIterator
            var events = ServerSentEvents()
            var text = ChatText()
            var pending: [String] = []
            var ended = false

            public mutating func next() async throws -> String? {
                while pending.isEmpty {
                    if ended { return nil }
                    do {
                        guard let part = try await parts.next() else {
                            try end()   // the upstream closed without [DONE]
                            continue
                        }
                        for event in events.append(part) {
                            if event.data == "[DONE]" {
                                try end()
                                break
                            }
                            text.read(event.data)
                            pending.append(event.raw + "\n\n")
                        }
                    } catch let failure as KBError {
                        // The upstream failed mid-answer: the stream ends with an error event.
                        stream.finish(failure, completed: false)
                        let body = try KBJSON.text(ChatStreamError(failure))
                        pending.append("data: \(body)\n\n")
                        ended = true
                    }
                }
                return pending.removeFirst()
            }

            mutating func end() throws {
                pending.append("data: \(try KBJSON.text(stream.summary.finalChunk(after: text)))\n\ndata: [DONE]\n\n")
                ended = true
                stream.finish(nil, completed: true)
            }
        }
    }
}

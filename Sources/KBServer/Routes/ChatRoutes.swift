import AsyncHTTPClient
import Foundation
import Hummingbird
import KBCore
import KBKit
import KBStore
import NIOCore

extension RetrievalService {
    /// `/v1/chat/completions` (OpenAI's chat completions with the bot's context and citations) and
    /// `/v1/models` (the bots, as models).
    func chatRoutes() -> RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.logged(.post, "chat/completions") { request, context in try await chat(request, as: context.caller) }
        routes.get("models") { _, context in
            let bots = try await kb.bots(as: context.caller)
            return try Self.json(ModelList(data: bots.map { ModelList.Model(id: $0.name, created: Int($0.createdAt.timeIntervalSince1970)) }))
        }
        return routes
    }

    /// Answers a chat completion: the bot's context for the last user turn, sent on to the
    /// upstream model as the first system message, the answer returned (or streamed) with its
    /// citations; then, if asked, memories learned from the turn.
    func chat(_ request: Request, as caller: Caller) async throws -> Response {
        let buffer = try await request.body.collect(upTo: configuration.maxBodyBytes)
        let chat = try ChatCompletionRequest(json: Data(buffer: buffer), limits: kb.limits)
        guard let configured = configuration.chatModel else {
            throw KBError(.unprocessable, "This kb serve has no chat model to send the turn to; start it with --llm openai:MODEL (and --llm-url URL for a model other than OpenAI's).")
        }
        var model = configured
        if let upstream = chat.upstreamModel { model.model = upstream }
        let turn = try await kb.chatTurn(chat, reports: configuration.reports, as: caller)
        RequestNote.set { note in
            (note.bot, note.report, note.user) = (chat.bot, chat.options.report, chat.user)
            (note.results, note.tokens, note.budget, note.degraded) = (turn.context.citations.count, turn.context.tokens, turn.context.budget, turn.context.degraded != nil)
            note.query = turn.context.query
        }
        let upstream = ChatUpstream(model: model)
        let body = try KBJSON.encode(chat.upstreamBody(model: model.model, system: turn.system))
        let started = ContinuousClock.now
        let response: HTTPClientResponse
        do {
            response = try await upstream.send(body, stream: chat.stream)
        } catch {
            metrics.recordUpstream(error, elapsed: ContinuousClock.now - started)
            throw error
        }
        let summary = ChatSummary(turn, model: model)
        let learning = Learning(service: self, chat: chat, caller: caller, requestID: request.headers[ErrorMiddleware<KBRequestContext>.requestIDHeader])
        guard chat.stream else {
            let answer: [String: JSONValue]
            do {
                answer = try await upstream.answer(response)
            } catch {
                metrics.recordUpstream(error, elapsed: ContinuousClock.now - started)
                throw error
            }
            metrics.recordUpstream(nil, elapsed: ContinuousClock.now - started)
            learning.start()
            return try Self.json(try summary.annotate(answer))
        }
        guard response.headers["content-type"].first?.lowercased().hasPrefix("text/event-stream") == true else {
            let error = KBError(.languageModel, "\(upstream.describe) was asked to stream but answered \(response.headers["content-type"].first ?? "without a content type"), not text/event-stream.")
            metrics.recordUpstream(error, elapsed: ContinuousClock.now - started)
            throw error
        }
        let metrics = metrics
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .init("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in
                var events = ServerSentEvents()
                var text = ChatText()
                // The upstream is read as the client takes the answer: a slow reader slows the
                // upstream read; a reader gone ends this closure, which closes the upstream request.
                let stream = ChatUpstream.Stream(response, from: upstream)
                defer { stream.stop() }
                /// Writes to the client; its failure means the client went away.
                func send(_ text: String) async throws {
                    do {
                        try await writer.write(ByteBuffer(string: text))
                    } catch {
                        metrics.recordUpstream(CancellationError(), elapsed: ContinuousClock.now - started)
                        throw error
                    }
                }
                do {
                    reading: for try await part in stream.parts {
                        for event in events.append(part) {
                            if event.data == "[DONE]" { break reading }
                            text.read(event.data)
                            try await send(event.raw + "\n\n")
                        }
                    }
                } catch let failure as KBError {
                    // The upstream failed mid-answer: the stream ends with an error event, as OpenAI's do.
                    metrics.recordUpstream(failure, elapsed: ContinuousClock.now - started)
                    let body = try KBJSON.text(["error": ["message": JSONValue.string(failure.message), "type": "upstream_error", "code": .string(failure.code.rawValue)]])
                    try await send("data: \(body)\n\n")
                    try await writer.finish(nil)
                    return
                }
                metrics.recordUpstream(nil, elapsed: ContinuousClock.now - started)
                try await send("data: \(try KBJSON.text(summary.finalChunk(after: text)))\n\ndata: [DONE]\n\n")
                try await writer.finish(nil)
                learning.start()
            })
    }

    /// What a turn teaches, learned after its answer is sent (never delaying it), and written to
    /// the request log under the turn's request id.
    struct Learning: Sendable {
        let service: RetrievalService
        let chat: ChatCompletionRequest
        let caller: Caller
        let requestID: String?

        func start() {
            guard chat.options.learning != .none, chat.user != nil else { return }
            Task.detached { [self] in
                let started = ContinuousClock.now
                var entry = RequestLogEntry(at: Date(), route: "LEARN POST /v1/chat/completions", status: 200, requestID: requestID ?? "", latencyMilliseconds: 0)
                entry.caller = if case .token(let token) = caller { token.name } else { "admin" }
                entry.bot = chat.bot
                do {
                    let extraction = try await service.kb.learn(from: chat, model: service.configuration.chatModel, as: caller)
                    entry.results = extraction?.proposals.count ?? 0
                    entry.query = extraction.map { ChatSummary.describe($0) }
                } catch {
                    entry.status = (error as? KBError).map { Int(KBError.status(for: $0.code).code) } ?? 500
                    entry.query = "\(error)"
                }
                let elapsed = ContinuousClock.now - started
                entry.latencyMilliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
                if let log = service.log {
                    if let user = chat.user { entry.userHash = try? await log.userHash(user) }
                    log.record(entry)
                }
            }
        }
    }
}

/// `GET /v1/models`: OpenAI's list of models, one per bot the caller may use.
struct ModelList: Encodable {
    struct Model: Encodable {
        let id: String
        var object = "model"
        let created: Int
        var owned_by = "kb"
    }

    var object = "list"
    let data: [Model]
}

/// kb's part of a chat completion's answer: the citations and what the context was made of.
struct ChatSummary: Sendable {
    let bot: String
    let upstreamModel: String
    let context: ContextResponse

    init(_ turn: ChatTurn, model: ChatModel) {
        bot = turn.bot.name
        upstreamModel = model.name
        context = turn.context
    }

    /// The `kb` field: the bot, the upstream model, the context's tokens and budget, whether it
    /// was degraded, the queries of a conversational search, and the markers no citation matches.
    func field(unmatched: [Int], citations: Bool) throws -> JSONValue {
        var field: [String: JSONValue] = [
            "bot": .string(bot), "upstreamModel": .string(upstreamModel), "contextTokens": .integer(context.tokens),
            "budget": .integer(context.budget), "counter": .string(context.counter), "unmatchedMarkers": .array(unmatched.map { .integer($0) }),
        ]
        if let degraded = context.degraded { field["degraded"] = try Self.value(degraded) }
        if let retrieval = context.retrieval { field["retrieval"] = try Self.value(retrieval) }
        if !context.scopes.isEmpty { field["scopes"] = .array(context.scopes.map { .string($0) }) }
        if citations { field["citations"] = try Self.value(context.citations) }
        return .object(field)
    }

    /// A non-streamed answer with each choice's message carrying the citations, and the `kb` field.
    func annotate(_ answer: [String: JSONValue]) throws -> JSONValue {
        var answer = answer
        let citations = try Self.value(context.citations)
        var unmatched: [Int] = []
        if case .array(let choices)? = answer["choices"] {
            answer["choices"] = .array(choices.map { choice in
                guard case .object(var fields) = choice, case .object(var message)? = fields["message"] else { return choice }
                if case .string(let content)? = message["content"] {
                    unmatched += CitationMarkers.unmatched(in: content, citations: context.citations).filter { !unmatched.contains($0) }
                }
                message["citations"] = citations
                fields["message"] = .object(message)
                return .object(fields)
            })
        }
        answer["kb"] = try field(unmatched: unmatched, citations: false)
        return .object(answer)
    }

    /// The chunk sent before `[DONE]`: no choices, the `kb` field with the citations.
    func finalChunk(after text: ChatText) throws -> JSONValue {
        var unmatched: [Int] = []
        for number in text.contents.flatMap({ CitationMarkers.unmatched(in: $0, citations: context.citations) }) where !unmatched.contains(number) {
            unmatched.append(number)
        }
        return [
            "id": .string(text.id ?? "chatcmpl-kb"), "object": "chat.completion.chunk", "created": .integer(text.created ?? Int(Date().timeIntervalSince1970)),
            "model": .string(text.model ?? upstreamModel), "choices": [], "kb": try field(unmatched: unmatched, citations: true),
        ]
    }

    static func value<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: KBJSON.encode(value))
    }

    /// What a learning step did, in a line for the request log.
    static func describe(_ extraction: MemoryExtraction) -> String {
        let verb = extraction.applied ? "applied" : "proposed"
        return "\(verb) by \(extraction.extractor): " + extraction.proposals.map { "\($0.action.rawValue): \($0.content)" }.joined(separator: "; ")
    }
}

/// What a streamed answer said, gathered from its chunks: the text of each choice (to check its
/// markers), and the id, time and model to repeat on kb's last chunk.
struct ChatText {
    var id: String?
    var created: Int?
    var model: String?
    private var byChoice: [Int: String] = [:]

    var contents: [String] { byChoice.keys.sorted().map { byChoice[$0]! } }

    mutating func read(_ data: String) {
        guard case .object(let chunk)? = try? JSONDecoder().decode(JSONValue.self, from: Data(data.utf8)) else { return }
        if case .string(let value)? = chunk["id"] { id = value }
        if case .integer(let value)? = chunk["created"] { created = value }
        if case .string(let value)? = chunk["model"] { model = value }
        guard case .array(let choices)? = chunk["choices"] else { return }
        for choice in choices {
            guard case .object(let fields) = choice, case .object(let delta)? = fields["delta"], case .string(let piece)? = delta["content"] else { continue }
            let index = if case .integer(let index)? = fields["index"] { index } else { 0 }
            byChoice[index, default: ""] += piece
        }
    }
}

/// Server-Sent Events read from a byte stream as it arrives: each event's raw text (forwarded as
/// it came) and its data.
struct ServerSentEvents {
    struct Event {
        /// The event's lines as received, without the blank line that ends it.
        let raw: String
        /// Its `data:` lines joined.
        let data: String
    }

    private var pending: [UInt8] = []

    /// The events complete once `buffer` is added (bytes are kept until their event ends, so a
    /// character split between reads stays whole).
    mutating func append(_ buffer: ByteBuffer) -> [Event] {
        pending += buffer.readableBytesView.filter { $0 != UInt8(ascii: "\r") }
        var events: [Event] = []
        var start = 0
        var index = 0
        while index + 1 < pending.count {
            guard pending[index] == 10, pending[index + 1] == 10 else { index += 1; continue }
            let raw = String(decoding: pending[start..<index], as: UTF8.self)
            index += 2
            start = index
            let data = raw.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { $0.hasPrefix("data:") }
                .map { line in
                    let value = line.dropFirst(5)
                    return String(value.first == " " ? value.dropFirst() : value)
                }
            guard !data.isEmpty else { continue }   // comments (": keep-alive") and bare fields
            events.append(Event(raw: raw, data: data.joined(separator: "\n")))
        }
        pending.removeFirst(start)
        return events
    }
}

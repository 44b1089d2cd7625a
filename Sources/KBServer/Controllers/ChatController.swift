import Foundation
import Hummingbird
import KBChat
import KBCore
import KBKit
import KBLanguageModel
import KBRequests
import NIOCore

/// `/v1/chat/completions` (OpenAI's chat completions with the bot's context and citations) and
/// `/v1/models` (the bots, as models).
struct ChatController: Controller {
    let kb: KnowledgeBase
    let maxBodyBytes: Int
    let chatModel: ChatModel?
    let reports: [String: ReportTemplate]
    let metrics: ServiceMetrics
    let log: RequestLog?

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.logged(.post, "chat/completions") { request, context in try await chat(request, as: context.caller) }
        routes.get("models") { _, context in
            let bots = try await kb.bots(as: context.caller)
            return try Answers.json(ModelList(data: bots.map { ModelList.Model(id: $0.name, created: Int($0.createdAt.timeIntervalSince1970)) }))
        }
        return routes
    }

    /// Answers a chat completion (`ChatSession`): the answer as JSON, or its frames as Server-Sent
    /// Events written as the client takes them; then, if asked, the turn's learning in the
    /// background, logged under the turn's request id.
    func chat(_ request: Request, as caller: Caller) async throws -> Response {
        let buffer = try await request.body.collect(upTo: maxBodyBytes)
        let chat = try ChatCompletionRequest(json: Data(buffer: buffer), limits: kb.limits)
        let metrics = metrics
        let session = try await ChatSession(chat, on: kb, model: chatModel, reports: reports, as: caller) {
            metrics.recordUpstream($0, elapsed: $1)
        }
        let context = session.turn.context
        RequestNote.set { note in
            (note.bot, note.report, note.user, note.query) = (chat.bot, chat.options.report, chat.user, context.query)
            (note.results, note.tokens, note.budget, note.degraded) = (context.citations.count, context.tokens, context.budget, context.degraded != nil)
        }
        let learning = Learning(session: session, log: log, requestID: request.headers[ErrorMiddleware<KBRequestContext>.requestIDHeader])
        switch try await session.answer() {
        case .complete(let answer):
            learning.start()
            return try Answers.json(answer)
        case .stream(let stream):
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .init("X-Accel-Buffering")!: "no"],
                body: ResponseBody { writer in
                    // A client gone fails a write, which ends this closure and closes the upstream request.
                    defer { stream.stop() }
                    for try await frame in stream.frames { try await writer.write(ByteBuffer(string: frame)) }
                    try await writer.finish(nil)
                    if stream.completed { learning.start() }
                })
        }
    }

    /// What a turn teaches, learned after its answer is sent (never delaying it), and written to
    /// the request log under the turn's request id, as every request is (`RequestLog.record`).
    struct Learning: Sendable {
        let session: ChatSession
        let log: RequestLog?
        let requestID: String?

        func start() {
            guard session.learns else { return }
            Task.detached { [self] in
                let started = ContinuousClock.now
                var note = RequestNote.Fields()
                note.caller = if case .token(let token) = session.caller { token.name } else { "admin" }
                (note.bot, note.user) = (session.request.bot, session.request.user)
                var status = 200
                do {
                    let extraction = try await session.learn()
                    note.results = extraction?.proposals.count ?? 0
                    note.query = extraction?.summary
                } catch {
                    status = (error as? KBError).map { Int(KBError.status(for: $0.code).code) } ?? 500
                    note.query = "\(error)"
                }
                await log?.record("LEARN POST /v1/chat/completions", status: status, requestID: requestID ?? "",
                                  elapsed: ContinuousClock.now - started, note: note)
            }
        }
    }
}

/// `GET /v1/models`: OpenAI's list of models, one per bot the caller may use.
struct ModelList: Codable {
    struct Model: Codable {
        let id: String
        var object = "model"
        let created: Int
        var owned_by = "kb"
    }

    var object = "list"
    let data: [Model]
}


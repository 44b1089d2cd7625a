import Foundation
import KBContext
import KBCore
public import KBKit
public import KBRequests
import Logging
public import MCP
public import KBLanguageModel

/// `kb mcp`: a Model Context Protocol server on stdio, so desktop assistants can use a knowledge
/// base directly; `kb serve` answers the same tools at `/mcp` (streamable HTTP, `respond(to:)`). Each tool is one of KBKit's requests: its input schema is the request's schema
/// and its answer the request's answer as JSON. Logs go to stderr; stdout carries only protocol
/// messages. The tools act as the index's owner, or — given a scoped token (`kb mcp --token`) —
/// with exactly that token's rights, decided by KBKit as for HTTP requests.
///
/// ```swift
/// try await MCPService(kb: kb).runOnStdio()
/// ```
public struct MCPService: Sendable {
    public let kb: KnowledgeBase
    /// Report templates the `context` tool may name.
    public var reports: [String: ReportTemplate] = [:]
    /// The upstream chat model (`--llm`) `extract_memories` asks; nil uses kb's explicit patterns.
    public var chatModel: ChatModel?
    /// A scoped token's secret (`kb_…`) the tools act with, checked on every call (so an expired
    /// or revoked token stops working at once); nil acts as the index's owner. The default is nil.
    public var token: String?

    public init(kb: KnowledgeBase, reports: [String: ReportTemplate] = [:], chatModel: ChatModel? = nil, token: String? = nil) {
        self.kb = kb
        self.reports = reports
        self.chatModel = chatModel
        self.token = token
    }

    /// Who the tools act as when the caller is already known — `kb serve`'s `/mcp`, where the
    /// request's bearer token made it; nil (the default) uses `token`.
    public var acting: Caller?

    /// Who the tools act as: the caller already known, the owner, or the scoped token, if it is still valid.
    public func caller() async throws -> Caller {
        if let acting { return acting }
        guard let token else { return .admin }
        switch try await kb.authenticate(token) {
        case .success(let scoped): return .token(scoped)
        case .failure(.expired): throw KBError(.unauthorized, "The token kb mcp was started with has expired. Ask for a new one (kb token create).")
        case .failure(.revoked): throw KBError(.unauthorized, "The token kb mcp was started with was revoked. Ask for a new one (kb token create).")
        case .failure(.unknown):
            throw KBError(.unauthorized, "kb mcp --token takes a scoped token of this index (kb_…, from kb token create); this one is not.")
        }
    }

    /// One tool: its name, what it is for, and how it answers.
    struct ToolSpec: Sendable {
        let name: String
        let summary: String
        let schema: @Sendable (Limits) -> JSONValue
        let answer: @Sendable (MCPService, JSONValue, Caller) async throws -> [Tool.Content]
    }

    /// A tool that answers with one JSON text.
    static func tool<R: KBRequest, T: Encodable & SendableMetatype>(
        _ name: String, _ summary: String, _ type: R.Type, _ answer: @escaping @Sendable (MCPService, R, Caller) async throws -> T
    ) -> ToolSpec {
        ToolSpec(name: name, summary: summary, schema: { R.schema($0) }) { service, arguments, caller in
            [.text(text: try KBJSON.text(try await answer(service, try KBJSON.decode(R.self, from: arguments), caller)), annotations: nil, _meta: nil)]
        }
    }

    /// `read_page`: the page's picture as an image item (PNG), then what it is as JSON text.
    static let readPage = ToolSpec(
        name: "read_page",
        summary: "A page of a PDF or scanned source as a picture (PNG), to see its figures, tables and layout: a citation's sourceID and page; the rights of read_source.",
        schema: { PageReadRequest.schema($0) }
    ) { service, arguments, caller in
        let request = try KBJSON.decode(PageReadRequest.self, from: arguments).validated(service.kb.limits)
        let picture = try await service.kb.pagePicture(source: request.source, page: request.page ?? 1, width: request.width,
                                                       bot: request.bot, user: request.user, as: caller)
        let about: JSONValue = ["source": .string(request.source), "page": .integer(picture.page), "pages": .integer(picture.pages),
                                "width": .integer(request.width ?? PageReadRequest.defaultWidth)]
        return [.image(data: picture.png.base64EncodedString(), mimeType: "image/png", annotations: nil, _meta: nil),
                .text(text: try KBJSON.text(about), annotations: nil, _meta: nil)]
    }

    static let specs: [ToolSpec] = [
        tool("search", "Search the knowledge base (notes and books) for snippets that match a query.", SearchRequest.self) {
            try await $0.kb.search($1, as: $2)
        },
        tool("context", "Prompt context for a bot's turn (its knowledge snippets and the user's memories) or a report: numbered, with citations, within a token budget.",
             ContextRequest.self) { service, request, caller in try await service.kb.context(request, reports: service.reports, as: caller) },
        tool("remember", "Store a memory (a small fact) in a scope. Identical content returns the existing memory; near-duplicates are reported.",
             RememberRequest.self) { try await $0.kb.remember($1, as: $2) },
        tool("recall", "Find the memories of the given scopes that match a query: what holds now, or with asOf what held then.", RecallRequest.self) { try await $0.kb.recall($1, as: $2) },
        tool("update_memory", "Change a memory's content, title, tags or valid time; the previous version is kept.", MemoryChangeRequest.self) {
            try await $0.kb.changeMemory($1, as: $2)
        },
        tool("forget", "Delete a memory and its history.", ForgetRequest.self) { try await $0.kb.forget($1, as: $2) },
        tool("memory_feedback", "Say a memory is wrong (hidden until confirmed), outdated (closed now), useful (ranked a little higher) or confirmed; logged with the caller.",
             MemoryFeedbackRequest.self) { try await $0.kb.memoryFeedback($1, as: $2) },
        tool("consolidate_memories", "Propose (with apply, make) the changes that keep a scope's memories clean: expired ones retired, contradicted facts closed, near-duplicates merged; each a new version, never a delete.",
             MemoryConsolidateRequest.self) { try await $0.kb.consolidateMemories($1, as: $2) },
        tool("forget_user", "Erase a scope: every memory of it with all versions, and for user:ID that user's private sources; the index files keep no trace.",
             EraseRequest.self) { try await $0.kb.erase($1, as: $2) },
        tool("extract_memories", "Propose memories for a user from a conversation (add, update, supersede, forget, or none when already known), checked against the user's memories; with apply, store them. English, Ukrainian, Russian and Arabic turns are read by kb's own rules, each memory in the language it was said in.",
             MemoryExtractRequest.self) { service, request, caller in try await service.kb.extractMemories(request, model: service.chatModel, as: caller) },
        tool("add_source", "Add a text (Markdown or plain) as a knowledge source, optionally private to a user and seen by bots; it is searchable when the answer comes.",
             SourceRequest.self) { try await $0.kb.addSource($1, waiting: true, as: $2) },
        tool("list_sources", "List knowledge sources (added texts and files, ingested files), filtered by user, bot, kind or tag, a page at a time.",
             SourceListRequest.self) { try await $0.kb.sources($1, as: $2) },
        tool("remove_source", "Remove a knowledge source added over the API (with its snippets and original).", SourceRemoveRequest.self) {
            try await $0.kb.removeSource($1, as: $2)
        },
        tool("read_source", "Read a source's text by pages (or printed labels), a heading path or a character range, with the citation fields of search hits; long parts come in pieces (next continues).",
             SourceReadRequest.self) { try await $0.kb.readSource($1, as: $2) },
        readPage,
        tool("grep_sources", "Find a regular expression (POSIX extended) or, with literal, a text in the sources you may read: each match with its source, pages, headings and line.",
             SourceGrepRequest.self) { try await $0.kb.grepSources($1, as: $2) },
        tool("sync_sources", "Compare an app's list of a collection ({id, sha256, title}) with what kb holds: what to upload, what is unchanged, what is gone (removed with prune).",
             SourceSyncRequest.self) { try await $0.kb.syncSources($1, as: $2) },
    ]

    /// The tools, with the knowledge base's limits in their schemas.
    public func tools() throws -> [Tool] {
        try Self.specs.map { spec in
            Tool(name: spec.name, description: spec.summary, inputSchema: try Self.value(spec.schema(kb.limits)))
        }
    }

    static func value(_ json: JSONValue) throws -> Value {
        try JSONDecoder().decode(Value.self, from: KBJSON.encode(json))
    }

    static func json(_ value: Value) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    /// A server with kb's tools registered, not yet started.
    public func makeServer() async throws -> Server {
        let server = Server(name: "kb", version: "0.1.0", capabilities: .init(prompts: .init(listChanged: false), tools: .init(listChanged: false)))
        let tools = try tools()
        await server.withMethodHandler(ListTools.self) { _ in .init(tools: tools) }
        await server.withMethodHandler(ListPrompts.self) { _ in .init(prompts: [Self.chatPrompt]) }
        await server.withMethodHandler(GetPrompt.self) { params in
            guard params.name == Self.chatPrompt.name else {
                throw MCPError.invalidParams("kb has one prompt, chat; there is no prompt named \(params.name).")
            }
            do {
                return try await chat(params.arguments ?? [:])
            } catch let error as KBError {
                throw MCPError.invalidParams(error.message)
            }
        }
        await server.withMethodHandler(CallTool.self) { params in
            do {
                return .init(content: try await contents(params.name, params.arguments ?? [:]), isError: false)
            } catch let error as KBError {
                return .init(content: [.text(text: error.message, annotations: nil, _meta: nil)], isError: true)
            } catch {
                return .init(content: [.text(text: "kb could not do that: \(error)", annotations: nil, _meta: nil)], isError: true)
            }
        }
        return server
    }

    /// The `chat` prompt: a bot's system prompt and its context for a turn, as messages a desktop
    /// assistant sends its own model.
    static let chatPrompt = Prompt(
        name: "chat", title: "Chat with a bot's knowledge",
        description: "The bot's system prompt with the context kb assembles for the question (numbered snippets and the user's memories, within a token budget), then the question: messages to send to your own model.",
        arguments: [
            .init(name: "bot", description: "The bot whose prompt, knowledge and memories to use.", required: true),
            .init(name: "query", description: "The user's question.", required: true),
            .init(name: "user", description: "The user's id, for the bot's user:{user} memories.", required: false),
            .init(name: "budget", description: "Tokens the context may use (a whole number).", required: false),
        ])

    /// The `chat` prompt's messages for these arguments: the bot's system prompt and context,
    /// then the question. A scoped token's rights apply as for the tools.
    func chat(_ arguments: [String: String]) async throws -> GetPrompt.Result {
        if let unknown = arguments.keys.sorted().first(where: { name in !(Self.chatPrompt.arguments ?? []).contains { $0.name == name } }) {
            throw KBError(.invalidArgument, "The chat prompt takes bot, query, user and budget; \(unknown) is not one of them.")
        }
        for name in ["bot", "query"] where (arguments[name] ?? "").isEmpty {
            throw KBError(.invalidArgument, "The chat prompt needs \(name): the bot and the user's question.")
        }
        var options: [String: JSONValue] = [:]
        if let user = arguments["user"] { options["user"] = .string(user) }
        if let budget = arguments["budget"] {
            guard let tokens = Int(budget) else { throw KBError(.invalidArgument, "budget must be a whole number of tokens; got \(budget).") }
            options["budget"] = .integer(tokens)
        }
        let body: JSONValue = [
            "model": .string(arguments["bot"] ?? ""),
            "messages": [["role": "user", "content": .string(arguments["query"] ?? "")]],
            "kb": .object(options),
        ]
        let request = try ChatCompletionRequest(json: try KBJSON.encode(body), limits: kb.limits)
        let turn = try await kb.chatTurn(request, reports: reports, as: try await caller())
        return .init(description: "\(turn.bot): \(turn.context.citations.count) cited items, \(turn.context.tokens) tokens of context",
                     messages: [.user(.text(text: turn.system)), .user(.text(text: turn.context.query))])
    }

    /// Serves on stdin/stdout until the client disconnects.
    public func runOnStdio() async throws {
        let logger = Logger(label: "kb.mcp", factory: { StreamLogHandler.standardError(label: $0) })
        let server = try await makeServer()
        try await server.start(transport: StdioTransport(logger: logger))
        await server.waitUntilCompleted()
    }

    /// Answers one HTTP request of MCP's streamable HTTP transport, statelessly (no session, a
    /// JSON answer to each POST; notifications 202): a server with kb's tools acting as `acting`
    /// (set it first) is made for the request and stopped after it, so that each request carries
    /// its own token. kb's HTTP layer checks the token, Origin and Host before this; the transport
    /// checks Accept, Content-Type and the protocol version.
    public func respond(to request: MCP.HTTPRequest) async throws -> MCP.HTTPResponse {
        let transport = StatelessHTTPServerTransport(validationPipeline: StandardValidationPipeline(validators: [
            AcceptHeaderValidator(mode: .jsonOnly), ContentTypeValidator(), ProtocolVersionValidator(),
        ]))
        let server = try await makeServer()
        try await server.start(transport: transport)
        let response = await transport.handleRequest(request)
        await server.stop()
        return response
    }

    /// Runs one tool and returns its answer's items.
    func contents(_ name: String, _ arguments: [String: Value]) async throws -> [Tool.Content] {
        guard let spec = Self.specs.first(where: { $0.name == name }) else {
            throw KBError(.notFound, "kb has no tool named \(name); its tools are \(Self.specs.map(\.name).joined(separator: ", ")).")
        }
        return try await spec.answer(self, try Self.json(.object(arguments)), try await caller())
    }

    /// Runs one tool and returns its answer's text (JSON).
    func call(_ name: String, _ arguments: [String: Value]) async throws -> String {
        try await contents(name, arguments).compactMap { if case .text(let text, _, _) = $0 { text } else { nil } }.joined()
    }
}

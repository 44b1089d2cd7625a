import Foundation
import KBContext
import KBCore
public import KBKit
import KBMemory
import Logging
public import MCP

/// `kb mcp`: a Model Context Protocol server on stdio with the tools `search`, `context`,
/// `remember`, `recall` and `forget`, so desktop assistants can use a knowledge base directly.
/// Logs go to stderr; stdout carries only protocol messages.
///
/// ```swift
/// try await MCPService(kb: kb).runOnStdio()
/// ```
public struct MCPService: Sendable {
    public let kb: KnowledgeBase
    /// Largest `k` and budget a tool call may ask for.
    public var maxResults = 100
    public var maxBudget = 32_000

    public init(kb: KnowledgeBase) { self.kb = kb }

    static func schema(_ properties: [String: Value], required: [String]) -> Value {
        .object(["type": .string("object"), "properties": .object(properties), "required": .array(required.map { .string($0) })])
    }

    static func property(_ type: String, _ description: String) -> Value {
        .object(["type": .string(type), "description": .string(description)])
    }

    static func list(_ description: String) -> Value {
        .object(["type": .string("array"), "items": .object(["type": .string("string")]), "description": .string(description)])
    }

    public static let tools: [Tool] = [
        Tool(name: "search", description: "Search the knowledge base (notes and books) for snippets that match a query.",
             inputSchema: schema([
                "query": property("string", "What to look for, in plain words."),
                "k": property("integer", "How many snippets (default 8)."),
                "tags": list("Only snippets with every one of these tags, e.g. area:career."),
                "mode": .object(["type": .string("string"), "enum": .array(["hybrid", "vector", "keyword"].map { .string($0) })]),
             ], required: ["query"])),
        Tool(name: "context", description: "Prompt context for a bot's turn: its knowledge snippets and the user's memories, numbered, with citations, within a token budget.",
             inputSchema: schema([
                "bot": property("string", "The bot's name."),
                "query": property("string", "The user's turn."),
                "user": property("string", "The user's id (for user:ID memories)."),
                "budget": property("integer", "Tokens the context may use (default 1500)."),
             ], required: ["bot", "query"])),
        Tool(name: "remember", description: "Store a memory (a small fact) in a scope. Identical content returns the existing memory; near-duplicates are reported.",
             inputSchema: schema([
                "content": property("string", "The fact to remember."),
                "scope": property("string", "global (default), user:ID or bot:NAME."),
                "title": property("string", "A short title."),
                "tags": list("Tags."),
                "supersede": property("string", "Id of a memory this one replaces."),
             ], required: ["content"])),
        Tool(name: "recall", description: "Find the memories of the given scopes that match a query.",
             inputSchema: schema([
                "query": property("string", "What to recall."),
                "scopes": list("Scopes to search (default: all)."),
                "tags": list("Only memories with every one of these tags."),
                "k": property("integer", "How many memories (default 8)."),
                "half_life": property("string", "Prefer recent memories, e.g. 30d."),
             ], required: ["query"])),
        Tool(name: "forget", description: "Delete a memory by id.",
             inputSchema: schema(["id": property("string", "The memory's id (or a unique prefix).")], required: ["id"])),
    ]

    /// A server with kb's tools registered, not yet started.
    public func makeServer() async -> Server {
        let server = Server(name: "kb", version: "0.1.0", capabilities: .init(tools: .init(listChanged: false)))
        await server.withMethodHandler(ListTools.self) { _ in .init(tools: Self.tools) }
        await server.withMethodHandler(CallTool.self) { params in
            do {
                return .init(content: [.text(text: try await call(params.name, params.arguments ?? [:]), annotations: nil, _meta: nil)], isError: false)
            } catch let error as KBError {
                return .init(content: [.text(text: error.message, annotations: nil, _meta: nil)], isError: true)
            } catch {
                return .init(content: [.text(text: "kb could not do that: \(error)", annotations: nil, _meta: nil)], isError: true)
            }
        }
        return server
    }

    /// Serves on stdin/stdout until the client disconnects.
    public func runOnStdio() async throws {
        let logger = Logger(label: "kb.mcp", factory: { StreamLogHandler.standardError(label: $0) })
        let server = await makeServer()
        try await server.start(transport: StdioTransport(logger: logger))
        await server.waitUntilCompleted()
    }

    func string(_ arguments: [String: Value], _ key: String, required: Bool = false) throws -> String? {
        guard let value = arguments[key], !value.isNull else {
            if required { throw KBError(.invalidArgument, "The argument \"\(key)\" is required.") }
            return nil
        }
        guard let text = value.stringValue else { throw KBError(.invalidArgument, "The argument \"\(key)\" must be a string.") }
        return text
    }

    func strings(_ arguments: [String: Value], _ key: String) throws -> [String] {
        guard let value = arguments[key], !value.isNull else { return [] }
        guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
            throw KBError(.invalidArgument, "The argument \"\(key)\" must be a list of strings.")
        }
        return list.compactMap(\.stringValue)
    }

    func integer(_ arguments: [String: Value], _ key: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = arguments[key], !raw.isNull else { return value }
        guard let number = raw.intValue ?? raw.doubleValue.flatMap({ $0 == $0.rounded() ? Int($0) : nil }), range.contains(number) else {
            throw KBError(.invalidArgument, "The argument \"\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }

    /// Runs one tool and returns its result as JSON text.
    func call(_ name: String, _ arguments: [String: Value]) async throws -> String {
        switch name {
        case "search":
            var query = SearchQuery(try string(arguments, "query", required: true)!)
            query.limit = try integer(arguments, "k", default: 8, range: 1...maxResults)
            query.tags = try strings(arguments, "tags").map { Tag($0) }
            if let mode = try string(arguments, "mode") {
                guard let parsed = SearchMode(rawValue: mode) else { throw KBError(.invalidArgument, "mode must be hybrid, vector or keyword.") }
                query.mode = parsed
            }
            return try Self.json(try await kb.search(query))
        case "context":
            let request = ContextRequest(
                .bot(try string(arguments, "bot", required: true)!), query: try string(arguments, "query", required: true)!,
                user: try string(arguments, "user"), budget: try integer(arguments, "budget", default: 1500, range: 1...maxBudget))
            return try Self.json(try await kb.context(request))
        case "remember":
            let draft = MemoryDraft(
                try string(arguments, "content", required: true)!, title: try string(arguments, "title"),
                scope: try string(arguments, "scope").map { try MemoryScope($0) } ?? .global,
                tags: try strings(arguments, "tags").map { Tag($0) })
            return try Self.json(try await kb.remember(draft, superseding: try string(arguments, "supersede")))
        case "recall":
            var recall = MemoryQuery(try string(arguments, "query", required: true)!)
            recall.scopes = try strings(arguments, "scopes").map { try MemoryScope($0) }
            recall.tags = try strings(arguments, "tags").map { Tag($0) }
            recall.limit = try integer(arguments, "k", default: 8, range: 1...maxResults)
            recall.recency = try string(arguments, "half_life").map { try Recency($0) }
            return try Self.json(try await kb.recall(recall))
        case "forget":
            let memory = try kb.forget(try string(arguments, "id", required: true)!)
            return try Self.json(["deleted": memory.id])
        default:
            throw KBError(.notFound, "kb has no tool named \(name); its tools are search, context, remember, recall and forget.")
        }
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

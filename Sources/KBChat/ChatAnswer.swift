import Foundation
public import KBCore
import KBLanguageModel
public import KBKit
import KBRequests
import NIOCore

/// kb's part of a chat completion's answer: the citations and what the context was made of.
struct ChatSummary: Sendable {
    let bot: String
    let upstreamModel: String
    let context: ContextResponse
    /// Whether the answer carries the context block (`kb.showContext`).
    let showsContext: Bool

    init(_ turn: ChatTurn, model: ChatModel, showsContext: Bool = false) {
        bot = turn.bot
        upstreamModel = model.name
        context = turn.context
        self.showsContext = showsContext
    }

    /// The `kb` field (`ChatAnswerInfo`), with the markers no citation matches and, for a
    /// stream's last chunk, the citations.
    func info(unmatched: [Int], citations: Bool) -> ChatAnswerInfo {
        ChatAnswerInfo(bot: bot, upstreamModel: upstreamModel, contextTokens: context.tokens, budget: context.budget, counter: context.counter,
                       unmatchedMarkers: unmatched, degraded: context.degraded, retrieval: context.retrieval,
                       scopes: context.scopes.isEmpty ? nil : context.scopes, citations: citations ? context.citations : nil,
                       context: showsContext ? context.context : nil)
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
        answer["kb"] = try Self.value(info(unmatched: unmatched, citations: false))
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
            "model": .string(text.model ?? upstreamModel), "choices": [], "kb": try Self.value(info(unmatched: unmatched, citations: true)),
        ]
    }

    static func value<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: KBJSON.encode(value))
    }
}

/// kb's `kb` field of a chat completion (and of a stream's last chunk): the bot, the upstream
/// model, the context's tokens and budget, whether it was degraded, the queries of a
/// conversational search, the markers no citation matches, and, where they belong, the memory
/// scopes read, the citations (a stream's last chunk; a whole answer carries them on each message)
/// and the context block (asked for with `kb.showContext`).
public struct ChatAnswerInfo: Sendable, Codable {
    public var bot: String
    public var upstreamModel: String
    public var contextTokens: Int
    public var budget: Int
    /// How tokens were counted.
    public var counter: String
    /// `[n]` markers in the answer that no citation has.
    public var unmatchedMarkers: [Int]
    public var degraded: Degraded?
    public var retrieval: Retrieval?
    public var scopes: [String]?
    public var citations: [Citation]?
    public var context: String?
}

extension ChatAnswerInfo: SchemaFieldNotes {
    public static let fieldNotes: [String: JSONValue] = [
        "citations": ["description": "On a stream's last chunk (which has no choices)."],
        "context": ["description": "The context block the model got, when the request's kb.showContext asked for it."],
    ]
}

/// The event a stream ends with when the upstream model fails mid-answer, shaped as OpenAI's
/// streams end: `{"error": {"message", "type": "upstream_error", "code"}}`.
public struct ChatStreamError: Sendable, Codable {
    public struct Detail: Sendable, Codable {
        public var message: String
        public var type = "upstream_error"
        /// kb's error code (`language_model`, `upstream_timeout`, …).
        public var code: String
    }

    public var error: Detail

    public init(_ failure: KBError) { self.init(message: failure.message, code: failure.code.rawValue) }

    public init(message: String, code: String, type: String = "upstream_error") {
        error = Detail(message: message, type: type, code: code)
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

extension MemoryExtraction {
    /// What a learning step did, in a line for the request log.
    public var summary: String {
        "\(applied ? "applied" : "proposed") by \(extractor): " + proposals.map { "\($0.action.rawValue): \($0.content)" }.joined(separator: "; ")
    }
}

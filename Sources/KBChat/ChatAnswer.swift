import Foundation
import KBCore
import NIOCore
import KBLanguageModel

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

    /// The `kb` field: the bot, the upstream model, the context's tokens and budget, whether it
    /// was degraded, the queries of a conversational search, the markers no citation matches, and
    /// (asked for) the context block.
    func field(unmatched: [Int], citations: Bool) throws -> JSONValue {
        var field: [String: JSONValue] = [
            "bot": .string(bot), "upstreamModel": .string(upstreamModel), "contextTokens": .integer(context.tokens),
            "budget": .integer(context.budget), "counter": .string(context.counter), "unmatchedMarkers": .array(unmatched.map { .integer($0) }),
        ]
        if let degraded = context.degraded { field["degraded"] = try Self.value(degraded) }
        if let retrieval = context.retrieval { field["retrieval"] = try Self.value(retrieval) }
        if !context.scopes.isEmpty { field["scopes"] = .array(context.scopes.map { .string($0) }) }
        if citations { field["citations"] = try Self.value(context.citations) }
        if showsContext { field["context"] = .string(context.context) }
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

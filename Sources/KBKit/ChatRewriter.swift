import Foundation
public import KBCore
public import KBRetrieval
public import KBLanguageModel

/// The query rewriter that asks a chat model (`--rewriter openai:MODEL`): the conversation's
/// last turns and the follow-up go to the model, which answers
/// `{"standalone": "…", "expansions": ["…"]}`. The answer is checked as data (a non-empty
/// standalone question, at most three expansions, all strings) and kept in memory (the last 512
/// conversations asked), so a chat app that sends the same history again costs no second call.
///
/// ```swift
/// kb.useQueryRewriter(ChatRewriter(model: try ChatModel(spec: "openai:llama3.1", url: "http://127.0.0.1:11434/v1", environment: [:])))
/// ```
public final class ChatRewriter: QueryRewriter {
    public let model: ChatModel
    /// Conversations remembered.
    public static let capacity = 512
    /// Earlier turns shown to the model, and characters of each.
    static let turnsShown = 6
    static let turnCharacters = 500

    /// Answers by prompt, and the prompts in the order they were asked.
    private let cache = LockedValue<(answers: [String: [String]], order: [String])>(([:], []))

    public init(model: ChatModel) { self.model = model }

    public var name: String { "rewriter:" + model.name }

    static let instructions = """
        You turn the last user turn of a conversation into search queries for a knowledge base. \
        Answer with one JSON object: {"standalone": "<the last turn as a question that needs no earlier turn, \
        naming what it refers to>", "expansions": ["<at most three other short queries for the same need>"]}. \
        Keep the user's language. Do not answer the question.
        """

    public func rewrite(_ turn: String, history: [ConversationTurn]) async throws -> [String] {
        let shown = history.suffix(Self.turnsShown)
            .map { "\($0.role.rawValue): \(String($0.content.prefix(Self.turnCharacters)))" }.joined(separator: "\n")
        let prompt = "Conversation:\n\(shown)\n\nLast user turn: \(String(turn.prefix(Self.turnCharacters)))"
        if let known = cache.withLock({ $0.answers[prompt] }) { return known }
        let answer = try await model.askForJSON(system: Self.instructions, user: prompt)
        let queries = try Self.queries(from: answer, model: model.name)
        cache.withLock { cache in
            if cache.answers.updateValue(queries, forKey: prompt) == nil { cache.order.append(prompt) }
            while cache.order.count > Self.capacity { cache.answers[cache.order.removeFirst()] = nil }
        }
        return queries
    }

    /// The standalone question and the expansions of a model's answer, checked. Pure.
    static func queries(from answer: [String: JSONValue], model: String) throws -> [String] {
        guard case .string(let standalone)? = answer["standalone"],
              !standalone.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw KBError(.languageModel, "The model \(model) gave no \"standalone\" question (a non-empty string).")
        }
        var queries = [standalone]
        switch answer["expansions"] {
        case nil, .null?: break
        case .array(let items)?:
            guard items.count <= 3 else { throw KBError(.languageModel, "The model \(model) gave \(items.count) expansions; at most 3 are asked for.") }
            for item in items {
                guard case .string(let text) = item else { throw KBError(.languageModel, "The model \(model) gave an expansion that is not a string.") }
                queries.append(text)
            }
        default:
            throw KBError(.languageModel, "The model \(model) gave \"expansions\" that are not a list of strings.")
        }
        return queries
    }
}

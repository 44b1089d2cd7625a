public import Foundation
public import KBCore

/// An OpenAI chat completion request (`POST /v1/chat/completions`) read the way kb needs it: the
/// bot (and perhaps the upstream model) named by `model`, the user's last turn as the query, the
/// earlier turns as the conversation, and kb's own fields (`kb`, `ChatOptions`). Everything else
/// the client sent — `temperature`, `max_tokens`, `stop`, `tools`, `user`, fields kb does not know —
/// is kept as it came and passed to the upstream model untouched.
///
/// ```swift
/// let request = try ChatCompletionRequest(json: body, limits: kb.limits)
/// let turn = try await kb.chatTurn(request, as: .admin)
/// let upstream = request.upstreamBody(model: "llama3.1", system: turn.system)
/// ```
public struct ChatCompletionRequest: Sendable {
    /// The body as the client sent it, without `kb`.
    public var body: [String: JSONValue]
    /// `model` as the client sent it (`astro` or `astro/llama3.1`).
    public var model: String
    /// The bot `model` names.
    public var bot: String
    /// The upstream model `model` names after the bot's name and a `/`, if it does.
    public var upstreamModel: String?
    public var stream: Bool
    /// The client's messages, unchanged.
    public var messages: [JSONValue]
    public var options: ChatOptions
    /// Whose memories: `kb.user`, else OpenAI's `user`.
    public var user: String?

    /// Reads a request body. Errors name the field and the limit: `messages` must hold 1 to
    /// `limits.maxChatMessages` messages of at most `limits.maxChatMessageCharacters` characters each.
    public init(json data: Data, limits: Limits) throws {
        guard case .object(var body)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw KBError(.invalidArgument, "The body must be a JSON object: an OpenAI chat completion request ({\"model\": \"BOT\", \"messages\": [...]}).")
        }
        let kb = body.removeValue(forKey: "kb")
        self.body = body
        guard case .string(let model)? = body["model"], !model.isEmpty else {
            throw KBError(.invalidArgument, "\"model\" is missing; name a bot (\"astro\") or a bot and the upstream model (\"astro/llama3.1\"). GET /v1/models lists the bots.")
        }
        self.model = model
        let parts = model.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        bot = String(parts[0])
        guard bot.range(of: Pattern.botName, options: .regularExpression) != nil else {
            throw KBError(.invalidArgument, "\"model\" is \"\(model)\"; its first part must be a bot's name (1–64 letters, digits, '-', '_' or '.').")
        }
        upstreamModel = parts.count > 1 ? String(parts[1]) : nil
        if upstreamModel?.isEmpty == true {
            throw KBError(.invalidArgument, "\"model\" is \"\(model)\"; name the upstream model after the '/', or leave the '/' out.")
        }
        switch body["stream"] {
        case nil, .null: stream = false
        case .bool(let value): stream = value
        default: throw KBError(.invalidArgument, "\"stream\" must be true or false.")
        }
        guard case .array(let messages)? = body["messages"], !messages.isEmpty else {
            throw KBError(.invalidArgument, "\"messages\" is missing or empty; give the conversation, e.g. [{\"role\": \"user\", \"content\": \"…\"}].")
        }
        guard messages.count <= limits.maxChatMessages else {
            throw KBError(.invalidArgument, "\"messages\" holds \(messages.count) messages; kb takes at most \(limits.maxChatMessages).")
        }
        for (index, message) in messages.enumerated() {
            guard case .object(let fields) = message, case .string(let role)? = fields["role"] else {
                throw KBError(.invalidArgument, "messages[\(index)] must be an object with a role (system, developer, user, assistant or tool).")
            }
            guard ["system", "developer", "user", "assistant", "tool", "function"].contains(role) else {
                throw KBError(.invalidArgument, "messages[\(index)] has the role \"\(role)\"; use system, developer, user, assistant or tool.")
            }
            let characters = Self.text(of: fields["content"]).count
            guard characters <= limits.maxChatMessageCharacters else {
                throw KBError(.invalidArgument, "messages[\(index)] holds \(characters) characters; kb takes at most \(limits.maxChatMessageCharacters) per message.")
            }
        }
        self.messages = messages
        switch kb {
        case nil, .null: options = ChatOptions()
        case .object(let fields):
            do {
                options = try KBJSON.decode(ChatOptions.self, from: .object(fields)).validated(limits)
            } catch let error as KBError {
                throw KBError(error.code, "In \"kb\": " + error.message)
            }
        default: throw KBError(.invalidArgument, "\"kb\" must be an object of kb's fields (user, report, budget, tags, anyTags, kinds, learn, showContext).")
        }
        switch body["user"] {
        case .string(let user)? where options.user == nil: self.user = user.isEmpty ? nil : user
        case nil, .null, .string: self.user = options.user
        default: throw KBError(.invalidArgument, "\"user\" must be a string (the end user's id).")
        }
        guard turns.last?.role == .user else {
            throw KBError(.invalidArgument, "\"messages\" has no user message with text; kb finds context for the last user turn.")
        }
    }

    /// The user and assistant turns with text, oldest first (system, developer and tool messages
    /// are the client's business and stay out of retrieval).
    public var turns: [ConversationTurn] {
        messages.compactMap { message in
            guard case .object(let fields) = message, case .string(let name)? = fields["role"],
                  let role = ConversationTurn.Role(rawValue: name) else { return nil }
            let text = Self.text(of: fields["content"]).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : ConversationTurn(role, text)
        }
    }

    /// The context request for this turn: the last user turn as the query (its first
    /// `maxQueryCharacters`), the recent turns before it as history, kb's filters and budget.
    public func contextRequest(limits: Limits) -> ContextRequest {
        var turns = turns
        let turn = turns.removeLast()
        var request = options.report.map { ContextRequest(report: $0) } ?? ContextRequest(bot: bot, query: String(turn.content.prefix(limits.maxQueryCharacters)))
        if options.report == nil {
            request.user = user
            let recent = turns.suffix(limits.maxHistoryTurns).map { ConversationTurn($0.role, String($0.content.prefix(limits.maxTurnCharacters))) }
            request.history = recent.isEmpty ? nil : Array(recent)
        }
        request.budget = options.budget
        request.tags = options.tags
        request.anyTags = options.anyTags
        request.kinds = options.kinds
        return request
    }

    /// The body the upstream model gets: the client's, with `model` set to the upstream model and
    /// kb's system message (`system`) before the client's messages, which follow unchanged.
    public func upstreamBody(model upstream: String, system: String) -> JSONValue {
        var body = body
        body["model"] = .string(upstream)
        body["messages"] = .array([["role": "system", "content": .string(system)]] + messages)
        return .object(body)
    }

    /// The text of a message's content: a string, or the text parts of a list of parts.
    static func text(of content: JSONValue?) -> String {
        switch content {
        case .string(let text)?: return text
        case .array(let parts)?:
            return parts.compactMap { part -> String? in
                guard case .object(let fields) = part, case .string(let text)? = fields["text"] else { return nil }
                return text
            }.joined(separator: "\n")
        default: return ""
        }
    }
}

/// The `[n]` markers of an answer checked against the citations it was given.
public enum CitationMarkers {
    /// Every number written as a marker: `[3]`, and each number of `[1, 2]` or `[1][4]`, in order
    /// of first appearance.
    public static func numbers(in text: String) -> [Int] {
        var seen: [Int] = []
        var index = text.startIndex
        while let open = text[index...].firstIndex(of: "[") {
            guard let close = text[open...].firstIndex(of: "]") else { break }
            let inside = text[text.index(after: open)..<close]
            let parts = inside.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(\.isASCII) && Int($0) != nil }) {
                for number in parts.compactMap({ Int($0) }) where !seen.contains(number) { seen.append(number) }
            }
            index = text.index(after: open)
        }
        return seen
    }

    /// The markers that name no citation.
    public static func unmatched(in text: String, citations: [Citation]) -> [Int] {
        let known = Set(citations.map(\.number))
        return numbers(in: text).filter { !known.contains($0) }
    }
}

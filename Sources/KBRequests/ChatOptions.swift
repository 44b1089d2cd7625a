import KBCore

/// kb's own fields of a chat completion request, sent beside OpenAI's as `kb` (what the SDKs'
/// `extra_body` adds): whose memories, which report, the budget and filters of the context, and
/// what to learn from the turn. Decoded as strictly as every request: an unknown field is a 400.
///
/// ```swift
/// var options = ChatOptions()
/// options.user = "ada"
/// options.learn = "apply"
/// ```
public struct ChatOptions: KBRequest, Hashable {
    /// Whose memories the bot reads (`user:{user}`); OpenAI's own `user` field when left out.
    public var user: String?
    /// A report template whose sections make the context, instead of the bot's knowledge search.
    public var report: String?
    public var budget: Int?
    public var tags: [String]?
    public var anyTags: [String]?
    public var kinds: [String]?
    /// `none` (the default), `propose` or `apply`: memories learned from the user's turn after
    /// the answer is sent.
    public var learn: String?
    /// Return the context block the model got, in `kb.context` (the console's Chat screen shows it).
    public var showContext: Bool?

    public init() {}

    public static let schemaName = "ChatOptions"

    public static func fields(_ limits: Limits) -> [RequestField] {
        let context = Dictionary(uniqueKeysWithValues: ContextRequest.fields(limits).map { ($0.name, $0) })
        return [
            .string("user", "Whose memories the bot reads (user:{user} scopes); OpenAI's own user field when left out.", pattern: Pattern.userID),
            .string("report", "A report template whose sections make the context instead of the bot's knowledge search.", pattern: Pattern.botName),
            context["budget"]!, context["tags"]!, context["anyTags"]!, context["kinds"]!,
            .choice("learn", "After the answer is sent, learn memories from the user's turn: none (the default), propose (logged only) or apply (stored).",
                    ChatLearning.allCases.map(\.rawValue), default: ChatLearning.none.rawValue),
            .boolean("showContext", "Return the context block the model got (its first system message's <context>) in the answer's kb.context."),
        ]
    }

    public func validated(_ limits: Limits) throws -> ChatOptions {
        let rules = FieldRules(Self.self, limits)
        _ = try rules.optionalText(user, "user")
        _ = try rules.optionalText(report, "report")
        _ = try rules.integer(budget, "budget")
        _ = try rules.list(tags, "tags")
        _ = try rules.list(anyTags, "anyTags")
        _ = try rules.choices(kinds, "kinds", as: SourceKind.self)
        _ = try rules.choice(learn, "learn", as: ChatLearning.self)
        return self
    }

    /// What to learn from the turn (`none` when not said; the request was validated).
    public var learning: ChatLearning { learn.flatMap(ChatLearning.init(rawValue:)) ?? .none }
}

/// What a chat turn teaches kb after its answer is sent.
public enum ChatLearning: String, Sendable, Hashable, CaseIterable {
    /// Nothing (the default).
    case none
    /// Memories are proposed from the user's turn and written to the request log, not stored.
    case propose
    /// Memories are proposed and stored through the memory rules.
    case apply
}

public import KBCore

/// Memories to learn from a conversation: `kb memory extract`, `POST /v1/memories/extract` and the
/// MCP tool `extract_memories`. The proposals are for the user's own scope, `user:{user}`; with
/// `apply` they are stored through the normal memory rules.
///
/// ```swift
/// var request = MemoryExtractRequest(user: "ada", turns: [ConversationTurn(.user, "I'm allergic to peanuts, by the way.")])
/// request.apply = true
/// let extraction = try await kb.extractMemories(request, as: .admin)
/// ```
public struct MemoryExtractRequest: KBRequest, Hashable {
    public var user: String
    /// The bot the conversation was with (it must exist; its name is given to a model).
    public var bot: String?
    public var turns: [ConversationTurn]
    /// Store the proposals (add, update, forget) instead of only returning them.
    public var apply: Bool?

    public init(user: String, bot: String? = nil, turns: [ConversationTurn]) {
        self.user = user
        self.bot = bot
        self.turns = turns
    }

    public static let schemaName = "MemoryExtractRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("user", "Whose memories: proposals are for the scope user:{user} and no other.", required: true, pattern: Pattern.userID),
            .string("bot", "The bot the conversation was with.", pattern: Pattern.botName),
            .turns("turns", "The conversation, oldest first. Only the user's turns become memories.",
                   maxItems: limits.maxHistoryTurns + 1, maxCharacters: limits.maxTurnCharacters),
            .boolean("apply", "Store the proposals through the memory rules (versions and history kept) instead of only returning them."),
        ]
    }


    public func validated(_ limits: Limits) throws -> (scope: MemoryScope, bot: String?, turns: [ConversationTurn]) {
        let rules = FieldRules(Self.self, limits)
        let user = try rules.text(user, "user")
        let turns = try rules.turns(turns, "turns")
        guard !turns.isEmpty else { throw KBError(.invalidArgument, "\"turns\" is empty; give the conversation to learn from.") }
        return (try MemoryScope.user(user), try rules.optionalText(bot, "bot"), turns)
    }
}

public import KBCore

/// What kb puts before a chat turn: the bot, its context with citations, and the system message
/// (the bot's system prompt, then the `<context>` block) that leads the messages sent upstream.
public struct ChatTurn: Sendable {
    public var bot: Bot
    public var context: ContextResponse
    /// The first system message the model gets.
    public var system: String
}

extension KnowledgeBase {
    /// Prepares a chat completion turn: the bot's context for the last user turn, following the
    /// conversation before it (or the report's context, with `kb.report`), within the budget, and
    /// the system message built from them. A caller that may not use the bot gets `.forbidden`.
    public func chatTurn(_ request: ChatCompletionRequest, reports: [String: ReportTemplate] = [:], as caller: Caller) async throws -> ChatTurn {
        let bot = try await self.bot(request.bot, as: caller)
        let context = try await self.context(request.contextRequest(limits: limits), reports: reports, as: caller)
        let prompt = bot.systemPrompt.trimmingCharacters(in: .whitespacesAndNewlines)
        return ChatTurn(bot: bot, context: context, system: prompt.isEmpty ? context.context : prompt + "\n\n" + context.context)
    }

    /// Learns from a chat turn once it is answered: memories proposed from the user's turns (the
    /// last one and, for what it refers to, the conversation before it), stored with `.apply`.
    /// Nil when the turn teaches nothing by request (`.none`) or has no user to learn for.
    public func learn(from request: ChatCompletionRequest, model: ChatModel?, as caller: Caller) async throws -> MemoryExtraction? {
        guard request.options.learning != .none, let user = request.user else { return nil }
        let turns = request.turns.suffix(limits.maxHistoryTurns + 1).map { ConversationTurn($0.role, String($0.content.prefix(limits.maxTurnCharacters)), time: $0.time) }
        var extract = MemoryExtractRequest(user: user, bot: request.bot, turns: Array(turns))
        extract.apply = request.options.learning == .apply
        return try await extractMemories(extract, model: model, as: caller)
    }
}

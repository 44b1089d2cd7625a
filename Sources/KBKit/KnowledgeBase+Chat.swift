import KBCore
public import KBLanguageModel
public import KBRequests

/// What kb puts before a chat turn: the bot, its context with citations, and the system message
/// (the bot's system prompt, then the `<context>` block) that leads the messages sent upstream.
public struct ChatTurn: Sendable {
    /// The bot's name.
    public var bot: String
    public var context: ContextResponse
    /// The first system message the model gets.
    public var system: String
}

extension KnowledgeBase {
    /// Prepares a chat completion turn: the bot's context for the last user turn, following the
    /// conversation before it (or the report's context, with `kb.report`), within the budget, and
    /// the system message built from them. A caller that may not use the bot gets `.forbidden`.
    ///
    /// The bot is read once, in the snapshot its context is ranked in (for a report's context,
    /// which has no bot, it is read for its prompt); the caller's rights are checked once.
    public func chatTurn(_ request: ChatCompletionRequest, reports: [String: ReportTemplate] = [:], as caller: Caller) async throws -> ChatTurn {
        // A bot's context checks the caller's right to the bot; a report's context does not, so
        // here, before any work.
        if request.options.report != nil { try caller.requireBot(request.bot) }
        let context = try await self.context(request.contextRequest(limits: limits), reports: reports, as: caller)
        let system = if context.bot == request.bot { context.system ?? "" } else {
            try await store.snapshot { try $0.bot(named: request.bot) }.systemPrompt
        }
        let prompt = system.trimmingCharacters(in: .whitespacesAndNewlines)
        return ChatTurn(bot: request.bot, context: context, system: prompt.isEmpty ? context.context : prompt + "\n\n" + context.context)
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

public import KBCore
public import KBLanguageModel
public import KBMemory
public import KBRequests

/// Memories (`MemoryBook` answers; these say what the API promises).
extension KnowledgeBase {
    /// Adds a memory. Content identical (after whitespace normalisation) to a current memory of
    /// the scope returns that memory and adds nothing; content whose embedding is at least
    /// `options.nearDuplicateThreshold` close to others is added, and they are reported.
    ///
    /// ```swift
    /// let result = try await kb.remember(MemoryDraft("Allergic to peanuts", scope: try .user("ada")), as: .admin)
    /// ```
    ///
    /// - Parameters:
    ///   - draft: the content, title, tags and scope.
    ///   - options: size limit and near-duplicate threshold.
    ///   - superseding: a memory of the same scope that the new one replaces: it stays, marked as
    ///     superseded, and searches leave it out.
    ///   - choice: the embedder for a new index; an existing one keeps its own.
    ///   - caller: who asks: the scope must be theirs to write.
    public func remember(
        _ draft: MemoryDraft, options: MemoryOptions = MemoryOptions(), superseding: String? = nil, embedder choice: EmbedderChoice? = nil,
        as caller: Caller
    ) async throws -> RememberResult {
        try caller.requireScopes([draft.scope], writing: true)
        return try await memoryBook.remember(draft, options: options, superseding: superseding, embedder: choice)
    }

    /// Stores a memory in a scope the caller may write (see `remember(_:options:superseding:embedder:as:)`).
    /// `embedder` applies to a new index only; an existing one keeps its own.
    public func remember(_ request: RememberRequest, embedder choice: EmbedderChoice? = nil, as caller: Caller) async throws -> RememberResult {
        try await remember(try request.checked(limits), embedder: choice, as: caller)
    }

    /// As `remember(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func remember(_ checked: Checked<RememberRequest>, embedder choice: EmbedderChoice? = nil, as caller: Caller) async throws -> RememberResult {
        try await memoryBook.remember(try inForce(checked), embedder: choice, as: caller)
    }

    /// The memory with this id, or a unique prefix of it (4 characters or more), and with
    /// `history` its earlier versions, oldest first (the current state is the memory itself) —
    /// if it is of a scope the caller may read.
    public func memory(_ id: String, history: Bool = false, as caller: Caller) async throws -> MemoryWithHistory {
        try await memoryBook.memory(id, history: history, as: caller)
    }

    /// Memories of scopes the caller may read, oldest first. A scoped token must name them.
    public func memories(_ request: MemoryListRequest, as caller: Caller) async throws -> [Memory] {
        try await memories(try request.checked(limits), as: caller)
    }

    /// As `memories(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func memories(_ checked: Checked<MemoryListRequest>, as caller: Caller) async throws -> [Memory] {
        try await memoryBook.memories(try inForce(checked), as: caller)
    }

    /// Memories, oldest first. `scopes` empty means all; every tag must be present.
    func memories(scopes: [MemoryScope] = [], tags: [Tag] = [], includeSuperseded: Bool = false) async throws -> [Memory] {
        try await memoryBook.memories(scopes: scopes, tags: tags, includeSuperseded: includeSuperseded)
    }

    /// Changes a memory of a scope the caller may write, keeping the previous version in its
    /// history. A change that changes nothing (content equal after whitespace normalisation)
    /// writes nothing; the new content must not be that of another current memory of the scope.
    public func changeMemory(_ request: MemoryChangeRequest, as caller: Caller) async throws -> Memory {
        try await changeMemory(try request.checked(limits), as: caller)
    }

    /// As `changeMemory(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func changeMemory(_ checked: Checked<MemoryChangeRequest>, as caller: Caller) async throws -> Memory {
        try await memoryBook.changeMemory(try inForce(checked), as: caller)
    }

    func updateMemory(_ id: String, _ change: MemoryChange, options: MemoryOptions = MemoryOptions()) async throws -> Memory {
        try await memoryBook.updateMemory(id, change, options: options)
    }

    /// Deletes a memory of a scope the caller may write, and its history; it is gone from
    /// keyword and vector search at once.
    public func forget(_ request: ForgetRequest, as caller: Caller) async throws -> Deleted {
        try await forget(try request.checked(limits), as: caller)
    }

    /// As `forget(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func forget(_ checked: Checked<ForgetRequest>, as caller: Caller) async throws -> Deleted {
        try await memoryBook.forget(try inForce(checked), as: caller)
    }

    @discardableResult
    func forget(_ id: String) async throws -> Memory { try await memoryBook.forget(id) }

    /// Memories that match a query, searched like snippets (hybrid by default) within the
    /// query's scopes only, which must be the caller's to read.
    public func recall(_ query: MemoryQuery, as caller: Caller) async throws -> MemoryResults {
        try caller.requireScopes(query.scopes, writing: false)
        return try await memoryBook.recall(query)
    }

    /// Memories that match a query, of scopes the caller may read.
    public func recall(_ request: RecallRequest, as caller: Caller) async throws -> MemoryResults {
        try await recall(try request.checked(limits), as: caller)
    }

    /// As `recall(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func recall(_ checked: Checked<RecallRequest>, as caller: Caller) async throws -> MemoryResults {
        try await memoryBook.recall(try inForce(checked), as: caller)
    }

    /// Memories as JSON Lines, oldest first, superseded ones and history included; of `scopes`
    /// the caller may read (none named: every scope, the admin's only).
    public func exportMemories(scopes: [MemoryScope] = [], as caller: Caller) async throws -> String {
        try caller.requireScopes(scopes, writing: false)
        return try await memoryBook.exportMemories(scopes: scopes)
    }

    /// Imports JSON Lines written by `exportMemories`, each memory in its own transaction with
    /// its id, times and history. The same memory already stored is left alone; a stored memory
    /// with the same id but other data is a conflict unless `replacing`. Bad lines are reported
    /// by number and the rest still import.
    /// The admin's only (an archive names its own scopes).
    public func importMemories(_ text: String, options: MemoryOptions = MemoryOptions(), replacing: Bool = false,
                               embedder choice: EmbedderChoice? = nil, as caller: Caller) async throws -> MemoryImportReport {
        try caller.requireAdmin("import memories")
        return try await memoryBook.importMemories(text, options: options, replacing: replacing, embedder: choice)
    }

    /// Proposes memories for the user from a conversation — by kb's explicit patterns, or by
    /// asking `model` — checks each against the user's current memories (the same content, or an
    /// embedding at least the near-duplicate threshold close, is `none`; a fact the user has one
    /// of, or a model's `replaces`, is an `update`), and with `apply` stores them through the
    /// memory rules. A model's answer is checked field by field before anything is stored: an
    /// answer that is not the JSON asked for, names a scope or a user, or replaces a memory that
    /// is not the user's is an error, and nothing is stored.
    ///
    /// - Parameters:
    ///   - request: the user, the bot, the turns and whether to apply.
    ///   - model: the chat model to ask; nil uses the explicit patterns.
    ///   - choice: the embedder for a new index; an existing one keeps its own.
    ///   - caller: who asks: the user's scope must be theirs to read (and, to apply, to write).
    public func extractMemories(_ request: MemoryExtractRequest, model: ChatModel? = nil,
                                embedder choice: EmbedderChoice? = nil, as caller: Caller) async throws -> MemoryExtraction {
        try await extractMemories(try request.checked(limits), model: model, embedder: choice, as: caller)
    }

    /// As `extractMemories(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func extractMemories(_ checked: Checked<MemoryExtractRequest>, model: ChatModel? = nil,
                                embedder choice: EmbedderChoice? = nil, as caller: Caller) async throws -> MemoryExtraction {
        try await memoryBook.extractMemories(try inForce(checked), model: model, embedder: choice, as: caller)
    }
}

/// Memories over time: feedback and consolidation (`MemoryBook+Time`).
extension KnowledgeBase {
    /// Feedback on a memory of a scope the caller may write: `wrong` hides it from recall and
    /// context until `confirmed`; `outdated` closes it now (a new version, kept); `useful` ranks
    /// it a little higher. Logged with the caller.
    public func memoryFeedback(_ request: MemoryFeedbackRequest, as caller: Caller) async throws -> MemoryFeedbackResult {
        try await memoryFeedback(try request.checked(limits), as: caller)
    }

    /// As `memoryFeedback(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func memoryFeedback(_ checked: Checked<MemoryFeedbackRequest>, as caller: Caller) async throws -> MemoryFeedbackResult {
        try await memoryBook.feedback(try inForce(checked), as: caller)
    }

    /// Proposes, and with `apply` makes, the changes that keep a scope's memories clean: expired
    /// ones retired, contradicted single-valued facts closed, near-duplicates merged into the
    /// newer one — each a new version, never a delete.
    public func consolidateMemories(_ request: MemoryConsolidateRequest, as caller: Caller) async throws -> MemoryConsolidation {
        try await consolidateMemories(try request.checked(limits), as: caller)
    }

    /// As `consolidateMemories(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func consolidateMemories(_ checked: Checked<MemoryConsolidateRequest>, as caller: Caller) async throws -> MemoryConsolidation {
        try await memoryBook.consolidate(try inForce(checked), as: caller)
    }
}

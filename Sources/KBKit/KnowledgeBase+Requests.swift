public import KBCore
import KBRetrieval
public import KBStore
import KBMemory

/// The answers to kb's requests: one method per request type, each validating its request
/// against `limits` once and then holding it to what `caller` may do (`Caller`). The CLI, the
/// HTTP service and the MCP server call these and nothing else.
extension KnowledgeBase {
    /// Ranked snippets (see `search(_ query: SearchQuery)`); with `bot`, only what that bot may
    /// see. A scoped token searches only through its bots, for users of its scopes.
    public func search(_ request: SearchRequest, as caller: Caller = .admin) async throws -> SearchResults {
        let valid = try request.validated(limits)
        try caller.requireBot(valid.bot)
        if let user = valid.query.user { try caller.requireScopes([try MemoryScope.user(user)], writing: false) }
        return try await search(valid)
    }

    /// Answers a checked search request.
    public func search(_ search: ValidSearch) async throws -> SearchResults {
        let query = search.query
        guard let name = search.bot else { return try await retriever.search(query) }
        // The bot is read in the ranking's own snapshot.
        let (seen, results, _) = try await retriever.retrieve(
            query.text, history: query.history, use: query.historyUse, needsVectors: query.mode != .keyword, mayDegrade: query.mode != .vector,
            arms: { snapshot in
                let bot = try snapshot.bot(named: name)
                guard !bot.sources.isEmpty else { return (false, []) }
                var query = query
                query.selectors = bot.sources
                query.kinds.remove(.memory)
                return (true, [Retriever.Arm(query)])
            }, extra: { _, _, _ in () })
        return seen ? results[0] : SearchResults(query: query.text, mode: query.mode, embedder: nil, hits: [])
    }

    /// Memories that match a query (see `recall(_ query: MemoryQuery)`), of scopes the caller
    /// may read.
    public func recall(_ request: RecallRequest, as caller: Caller = .admin) async throws -> MemoryResults {
        let query = try request.validated(limits)
        try caller.requireScopes(query.scopes, writing: false)
        return try await recall(checked: query)
    }

    /// Stores a memory (see `remember(_:options:superseding:embedder:)`) in a scope the caller may
    /// write. `embedder` applies to a new index only; an existing one keeps its own.
    public func remember(_ request: RememberRequest, embedder choice: EmbedderChoice? = nil, as caller: Caller = .admin) async throws -> RememberResult {
        let (draft, options, supersede) = try request.validated(limits)
        try caller.requireScopes([draft.scope], writing: true)
        return try await remember(draft, options: options, superseding: supersede, embedder: choice)
    }

    /// Changes a memory of a scope the caller may write, keeping the previous version (see
    /// `updateMemory(_:_:options:)`).
    public func changeMemory(_ request: MemoryChangeRequest, as caller: Caller = .admin) async throws -> Memory {
        let (id, change, options) = try request.validated(limits)
        return try await updateMemory(id, change, options: options) { try caller.requireScopes([$0.scope], writing: true) }
    }

    /// Deletes a memory of a scope the caller may write, and its history.
    public func forget(_ request: ForgetRequest, as caller: Caller = .admin) async throws -> Deleted {
        try request.check(limits)
        return Deleted(try await forget(request.id) { try caller.requireScopes([$0.scope], writing: true) }.id)
    }

    /// Memories of scopes the caller may read, oldest first. A scoped token must name them.
    public func memories(_ request: MemoryListRequest, as caller: Caller = .admin) async throws -> [Memory] {
        let (scopes, tags, includeSuperseded) = try request.validated(limits)
        try caller.requireScopes(scopes, writing: false)
        return try await memories(scopes: scopes, tags: tags, includeSuperseded: includeSuperseded)
    }

    /// Makes a bot (a scoped token needs the right `bots`).
    public func createBot(_ request: BotRequest, as caller: Caller = .admin) async throws -> Bot {
        let bot = try request.validated(limits)
        try caller.require(.bots, writing: true, "create bots")
        try await store.createBot(bot)
        return try await self.bot(bot.name)
    }

    /// Changes a bot's prompt, sources and scopes in one transaction: all of the change, or none
    /// (a scoped token needs the right `bots`).
    public func changeBot(_ request: BotChangeRequest, as caller: Caller = .admin) async throws -> Bot {
        let (sources, added, removed, scopes, prompt) = try request.validated(limits)
        try caller.require(.bots, writing: true, "change bots")
        let name = request.name
        return try await store.updateBot(named: name) { bot in
            if let prompt { bot.systemPrompt = prompt }
            if let scopes { bot.memoryScopes = scopes }
            if let sources { bot.sources = sources.reduce(into: []) { kept, selector in if !kept.contains(selector) { kept.append(selector) } } }
            for selector in added where !bot.sources.contains(selector) { bot.sources.append(selector) }
            for selector in removed {
                guard bot.sources.contains(selector) else {
                    throw KBError(.unprocessable, "Bot \(name) has no source \(selector). `kb bot show \(name)` lists its sources.")
                }
                bot.sources.removeAll { $0 == selector }
            }
        }
    }

    /// Deletes a bot (its memories stay: they belong to their scopes); a scoped token needs the
    /// right `bots`.
    public func deleteBot(_ name: String, as caller: Caller = .admin) async throws -> Deleted {
        let name = try Bot.validName(name)
        try caller.require(.bots, writing: true, "delete bots")
        try await store.deleteBot(named: name)
        return Deleted(name)
    }

    /// Every bot the caller may use (a scoped token: its own).
    public func bots(as caller: Caller = .admin) async throws -> [Bot] {
        try await store.snapshot { try $0.bots() }.filter { caller.sees($0) }
    }

    /// A bot the caller may use.
    public func bot(_ name: String, as caller: Caller = .admin) async throws -> Bot {
        let name = try Bot.validName(name)
        try caller.requireBot(name)
        return try await store.snapshot { try $0.bot(named: name) }
    }

    /// What the index holds and whether this process can embed queries (`GET /v1/status`).
    public func serviceStatus() async throws -> ServiceStatus {
        ServiceStatus(index: try await status(), queryEmbedder: queryEmbedderStatus)
    }

    /// Parses a selector given in a request: `tag:…`, `kind:…`, or an absolute path (a folder
    /// selects what is inside it). The CLI makes relative paths absolute before they get here.
    public static func selector(_ text: String) throws -> SourceSelector {
        guard text.isAbsolutePath else { return try SourceSelector(text) }
        return try SourceSelector(sourcePrefix(text))
    }

    /// An absolute path prefix given in a request (a folder matches what is inside it).
    static func absolutePrefix(_ text: String) throws -> String {
        guard text.isAbsolutePath else {
            throw KBError(.invalidArgument, "'\(text)' is not an absolute path. Give source paths from the root, e.g. /home/ada/notes.")
        }
        return sourcePrefix(text)
    }
}

/// What the index holds, and whether queries can be embedded: the index's status with a
/// `queryEmbedder` field.
public struct ServiceStatus: Sendable, Encodable {
    public var index: IndexStatus
    public var queryEmbedder: QueryEmbedderStatus

    enum Key: String, CodingKey { case queryEmbedder }

    public func encode(to encoder: any Encoder) throws {
        try index.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(queryEmbedder, forKey: .queryEmbedder)
    }
}

public import KBCore
import KBRetrieval
public import KBStore
import KBMemory

/// The answers to kb's requests: one method per request type, each validating its request
/// against `limits` once. The CLI, the HTTP service and the MCP server call these and nothing else.
extension KnowledgeBase {
    /// Ranked snippets (see `search(_ query: SearchQuery)`); with `bot`, only what that bot may see.
    public func search(_ request: SearchRequest) async throws -> SearchResults {
        try await search(try request.validated(limits))
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

    /// Memories that match a query (see `recall(_ query: MemoryQuery)`).
    public func recall(_ request: RecallRequest) async throws -> MemoryResults {
        try await recall(checked: try request.validated(limits))
    }

    /// Stores a memory (see `remember(_:options:superseding:embedder:)`). `embedder` applies to a
    /// new index only; an existing one keeps its own.
    public func remember(_ request: RememberRequest, embedder choice: EmbedderChoice? = nil) async throws -> RememberResult {
        let (draft, options, supersede) = try request.validated(limits)
        return try await remember(draft, options: options, superseding: supersede, embedder: choice)
    }

    /// Changes a memory, keeping the previous version (see `updateMemory(_:_:options:)`).
    public func changeMemory(_ request: MemoryChangeRequest) async throws -> Memory {
        let (id, change, options) = try request.validated(limits)
        return try await updateMemory(id, change, options: options)
    }

    /// Deletes a memory and its history.
    public func forget(_ request: ForgetRequest) async throws -> Deleted {
        try request.check(limits)
        return Deleted(try await forget(request.id).id)
    }

    /// Memories, oldest first.
    public func memories(_ request: MemoryListRequest) async throws -> [Memory] {
        let (scopes, tags, includeSuperseded) = try request.validated(limits)
        return try await memories(scopes: scopes, tags: tags, includeSuperseded: includeSuperseded)
    }

    /// Makes a bot.
    public func createBot(_ request: BotRequest) async throws -> Bot {
        let bot = try request.validated(limits)
        try await store.createBot(bot)
        return try await self.bot(bot.name)
    }

    /// Changes a bot's prompt, sources and scopes in one transaction: all of the change, or none.
    public func changeBot(_ request: BotChangeRequest) async throws -> Bot {
        let (sources, added, removed, scopes, prompt) = try request.validated(limits)
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

    /// Deletes a bot (its memories stay: they belong to their scopes).
    public func deleteBot(_ name: String) async throws -> Deleted {
        try await store.deleteBot(named: try Bot.validName(name))
        return Deleted(name)
    }

    public func bots() async throws -> [Bot] { try await store.snapshot { try $0.bots() } }

    public func bot(_ name: String) async throws -> Bot {
        let name = try Bot.validName(name)
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

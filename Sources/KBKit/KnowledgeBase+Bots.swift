public import KBCore
import KBMemory
public import KBRequests
import KBRetrieval
public import KBStore

/// Bots and the service's status. Like every request method of the facade, each validates its
/// request against `limits` once and then holds it to what `caller` may do (`Caller`); the CLI,
/// the HTTP service and the MCP server call these and nothing else.
extension KnowledgeBase {
    /// Makes a bot (a scoped token needs the right `bots`).
    public func createBot(_ request: BotRequest, as caller: Caller) async throws -> Bot {
        try await createBot(try request.checked(limits), as: caller)
    }

    /// As `createBot(_:as:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func createBot(_ checked: Checked<BotRequest>, as caller: Caller) async throws -> Bot {
        let bot = try inForce(checked).valid
        try caller.require(.bots, writing: true, "create bots")
        try await store.createBot(bot)
        return try await store.snapshot { try $0.bot(named: bot.name) }
    }

    /// Changes a bot's prompt, sources and scopes in one transaction: all of the change, or none
    /// (a scoped token needs the right `bots`).
    public func changeBot(_ request: BotChangeRequest, as caller: Caller) async throws -> Bot {
        try await changeBot(try request.checked(limits), as: caller)
    }

    /// As `changeBot(_:as:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func changeBot(_ checked: Checked<BotChangeRequest>, as caller: Caller) async throws -> Bot {
        let (sources, added, removed, scopes, prompt) = try inForce(checked).valid
        try caller.require(.bots, writing: true, "change bots")
        let name = checked.request.name
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
    public func deleteBot(_ name: String, as caller: Caller) async throws -> Deleted {
        let name = try Bot.validName(name)
        try caller.require(.bots, writing: true, "delete bots")
        try await store.deleteBot(named: name)
        return Deleted(name)
    }

    /// Every bot the caller may use (a scoped token: its own).
    public func bots(as caller: Caller) async throws -> [Bot] {
        try await store.snapshot { try $0.bots() }.filter { caller.sees($0) }
    }

    /// A bot the caller may use.
    public func bot(_ name: String, as caller: Caller) async throws -> Bot {
        let name = try Bot.validName(name)
        try caller.requireBot(name)
        return try await store.snapshot { try $0.bot(named: name) }
    }

    /// What the index holds, whether this process can embed queries, and the unfinished jobs by
    /// state, read in one snapshot: `GET /v1/status` (any caller: counts, no content) and, through
    /// `metricsStatus(as:)`, the gauges of `/metrics`.
    public func serviceStatus(as caller: Caller) async throws -> ServiceStatus {
        let (index, jobs) = try await store.snapshot { snapshot in
            (try snapshot.status(), Dictionary(grouping: try snapshot.unfinishedJobs(), by: { $0.job.state.rawValue }).mapValues(\.count))
        }
        return ServiceStatus(index: index, queryEmbedder: queryEmbedderStatus, jobs: jobs)
    }

    /// The service's status for `/metrics`: the same computation as `serviceStatus(as:)`, the
    /// admin's only (a scrape with `--metrics-public` acts as the admin).
    public func metricsStatus(as caller: Caller) async throws -> ServiceStatus {
        try caller.requireAdmin("read metrics")
        return try await serviceStatus(as: caller)
    }
}

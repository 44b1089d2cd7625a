public import KBCore
import KBRetrieval
public import KBStore
import KBMemory

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
    /// Unfinished jobs (uploads being read) by state: `receiving`, `queued`, `running`.
    public var jobs: [String: Int] = [:]

    enum Key: String, CodingKey { case queryEmbedder, jobs }

    public func encode(to encoder: any Encoder) throws {
        try index.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(queryEmbedder, forKey: .queryEmbedder)
        try container.encode(jobs, forKey: .jobs)
    }
}

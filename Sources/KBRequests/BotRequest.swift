public import KBCore

/// A bot to make: `kb bot create` and `POST /v1/bots`.
///
/// ```swift
/// var request = BotRequest(name: "astro")
/// request.sources = ["tag:area:career", "/home/ada/notes"]
/// let bot = try await kb.createBot(request, as: .admin)
/// ```
public struct BotRequest: KBRequest, Hashable {
    public var name: String
    public var systemPrompt: String?
    /// Knowledge sources: absolute paths or folders, `tag:NAME`, `kind:KIND`.
    public var sources: [String]?
    /// Memory scope templates; `{user}` and `{name}` are filled in per request.
    public var memoryScopes: [String]?

    public init(name: String) { self.name = name }

    public static let schemaName = "BotRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("name", "1–64 letters, digits, '-', '_' or '.'.", required: true, pattern: Pattern.botName),
            .string("systemPrompt", "The bot's system prompt.", pattern: nil),
            .strings("sources", "What the bot may see: absolute paths or folders, tag:NAME, kind:note, kind:pdf, kind:epub….", maxItems: limits.maxListItems,
                     pattern: Pattern.selector),
            .strings("memoryScopes", "Memory scopes it reads, as templates (default user:{user} and bot:{name}).", maxItems: limits.maxListItems,
                     pattern: Pattern.scope),
        ]
    }


    public func validated(_ limits: Limits) throws -> Bot {
        let rules = FieldRules(Self.self, limits)
        return Bot(name: try Bot.validName(try rules.text(name, "name")), systemPrompt: systemPrompt ?? "",
                   sources: try rules.list(sources, "sources").map(SourcePaths.selector),
                   memoryScopes: try (memoryScopes.map { try rules.list($0, "memoryScopes") } ?? Bot.defaultMemoryScopes)
                       .map(Bot.validScopeTemplate))
    }
}

/// A change to a bot, applied in one transaction: `kb bot update`, `kb bot add-source`,
/// `kb bot remove-source` and `PATCH /v1/bots/{name}`. `sources` replaces the sources whole;
/// then `addSources` are added and `removeSources` removed (each must be there).
public struct BotChangeRequest: KBRequest, Hashable {
    public var name: String
    public var systemPrompt: String?
    public var sources: [String]?
    public var addSources: [String]?
    public var removeSources: [String]?
    public var memoryScopes: [String]?

    public init(name: String) { self.name = name }

    public static let schemaName = "BotChangeRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("name", "The bot to change.", required: true, pattern: Pattern.botName),
            .string("systemPrompt", "A new system prompt.", pattern: nil),
            .strings("sources", "New sources, replacing the old ones.", maxItems: limits.maxListItems, pattern: Pattern.selector),
            .strings("addSources", "Sources to add.", maxItems: limits.maxListItems, pattern: Pattern.selector),
            .strings("removeSources", "Sources to take away (each must be one of the bot's).", maxItems: limits.maxListItems,
                     pattern: Pattern.selector),
            .strings("memoryScopes", "New memory scope templates, replacing the old ones.", maxItems: limits.maxListItems, pattern: Pattern.scope),
        ]
    }


    /// The change: sources replaced (nil: kept), added, removed; scopes and prompt (nil: kept).
    public func validated(_ limits: Limits) throws
        -> (sources: [SourceSelector]?, added: [SourceSelector], removed: [SourceSelector], scopes: [String]?, prompt: String?) {
        let rules = FieldRules(Self.self, limits)
        _ = try Bot.validName(try rules.text(name, "name"))
        let sources = try self.sources.map { try rules.list($0, "sources").map(SourcePaths.selector) }
        let added = try rules.list(addSources, "addSources").map(SourcePaths.selector)
        let removed = try rules.list(removeSources, "removeSources").map(SourcePaths.selector)
        let scopes = try memoryScopes.map { try rules.list($0, "memoryScopes").map(Bot.validScopeTemplate) }
        guard systemPrompt != nil || sources != nil || addSources != nil || removeSources != nil || scopes != nil else {
            throw KBError(.unprocessable,
                "Nothing to change: give \"systemPrompt\", \"sources\", \"addSources\", \"removeSources\" or \"memoryScopes\".")
        }
        return (sources, added, removed, scopes, systemPrompt)
    }
}

package import Foundation
public import KBCore
import KBContext

/// Prompt context to assemble: for a bot's turn (its knowledge sources and the memories of its
/// scopes) or for a report (section by section, as its template says). `kb context`,
/// `POST /v1/context` and the MCP tool `context`.
///
/// ```swift
/// var request = ContextRequest(bot: "astro", query: "what does Venus in my tenth house mean?")
/// request.user = "ada"
/// let context = try await kb.context(request, as: .admin)
/// ```
public struct ContextRequest: KBRequest, Hashable {
    public var bot: String?
    public var report: String?
    /// The user's turn (bots), or words added to every section's query (reports).
    public var query: String?
    /// Whose memories a bot may read (`user:{user}` scopes).
    public var user: String?
    public var budget: Int?
    /// The conversation before `query`, oldest first (bots): follow-up questions find what they
    /// refer to (`ConversationPlan`).
    public var history: [ConversationTurn]?
    /// Knowledge snippets must carry every one of these tags (reports: in every section, besides
    /// the section's own).
    public var tags: [String]?
    /// Knowledge snippets must carry at least one of these tags.
    public var anyTags: [String]?
    /// Only knowledge sources of these kinds (memories are chosen by the bot's scopes).
    public var kinds: [String]?
    /// Memories as they held at this time (ISO 8601) instead of now.
    public var asOf: String?

    public init(bot: String? = nil, report: String? = nil, query: String? = nil) {
        self.bot = bot
        self.report = report
        self.query = query
    }

    public static let schemaName = "ContextRequest"

    /// Tokens a context may use when the request does not say.
    public static let defaultBudget = 1500

    /// The fewest tokens a context can use: the frame around the material (conservative count).
    public static let minimumBudget = ContextAssembler(counter: ConservativeTokenCounter()).minimumBudget

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("bot", "The bot to assemble context for (give bot or report).", pattern: Pattern.botName),
            .string("report", "The report template to assemble context for (give bot or report).", pattern: Pattern.botName),
            .string("query", "The user's turn (bots; required), or words added to each section's query (reports).",
                    maxLength: limits.maxQueryCharacters),
            .string("user", "The user's id, for the bot's user:{user} memory scopes.", pattern: Pattern.userID),
            .integer("budget", "Tokens the context block may use, counted conservatively.",
                     default: min(max(defaultBudget, minimumBudget), limits.maxBudget), range: minimumBudget...max(minimumBudget, limits.maxBudget)),
            .turns("history", "The conversation before the turn, oldest first (bots): follow-up questions find what they refer to.",
                   maxItems: limits.maxHistoryTurns, maxCharacters: limits.maxTurnCharacters),
            .strings("tags", "Only knowledge snippets with every one of these tags, e.g. chart:ada.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .strings("anyTags", "Only knowledge snippets with at least one of these tags, e.g. placement:sun-aries, placement:moon-leo.",
                     maxItems: limits.maxListItems, pattern: Pattern.tag),
            .choices("kinds", "Only knowledge sources of these kinds.", SourceKind.documents.map(\.rawValue), maxItems: limits.maxListItems),
            .string("asOf", "Memories as they held at this time (ISO 8601 date or time) instead of now.", pattern: Pattern.time),
        ]
    }

    /// A bot with the user's turn, or a report; not both. Written as if/then/else, not as anyOf
    /// and not beside the properties: OpenAPI code generators (swift-openapi-generator, KBClient's)
    /// take a schema with a top-level anyOf for a union and drop one with not; they pass over
    /// if/then/else, which says the same to a JSON Schema validator.
    public static func constraints(_ limits: Limits) -> [String: JSONValue] {
        ["if": ["required": ["report"]], "then": ["not": ["required": ["bot"]]], "else": ["required": ["bot", "query"]]]
    }


    /// What context is assembled for: a bot's turn (for a user, maybe) or a report.
    public enum Target: Sendable, Hashable {
        case bot(String, user: String?)
        case report(String)
    }

    /// A checked request: what to assemble for, the turn, the budget, and what narrows the search.
    public struct Valid: Sendable, Hashable {
        public var target: Target
        public var query: String
        public var budget: Int
        public var history: [ConversationTurn]
        public var filters: ContextFilters
    }

    public func validated(_ limits: Limits) throws -> Valid {
        let rules = FieldRules(Self.self, limits)
        let budget = try rules.integer(budget, "budget")
        let text = try rules.optionalText(query, "query")?.trimmingWhitespace ?? ""
        let filters = ContextFilters(tags: try rules.list(tags, "tags").map { Tag($0) }, anyTags: try rules.list(anyTags, "anyTags").map { Tag($0) },
                                     kinds: Set(try rules.choices(kinds, "kinds", as: SourceKind.self)),
                                     memoriesAsOf: try rules.optionalText(asOf, "asOf").map { try TimeText.parse($0, name: "asOf") })
        let history = try rules.turns(history, "history")
        switch (bot, report) {
        case (let name?, nil):
            guard !text.isEmpty else {
                throw KBError(.unprocessable, "\"query\" is missing; give the user's turn to find context for.")
            }
            let user = try rules.optionalText(user, "user")
            if let user { _ = try MemoryScope.user(user) }   // a user id must make a valid scope
            return Valid(target: .bot(try rules.text(name, "bot"), user: user), query: text, budget: budget, history: history, filters: filters)
        case (nil, let name?):
            _ = try rules.optionalText(user, "user")   // a report reads no memories: a user changes nothing
            guard history.isEmpty else {
                throw KBError(.unprocessable, "\"history\" is for a bot's turn; a report's sections have queries of their own.")
            }
            return Valid(target: .report(try rules.text(name, "report")), query: text, budget: budget, history: [], filters: filters)
        default:
            throw KBError(.unprocessable, "Give either \"bot\" or \"report\" (one of them).")
        }
    }
}

/// What narrows the knowledge a context request searches: tags it must all carry, tags of which
/// it must carry one, and kinds of sources.
public struct ContextFilters: Sendable, Hashable {
    package var tags: [Tag] = []
    package var anyTags: [Tag] = []
    package var kinds: Set<SourceKind> = []
    /// Memories as they held then (nil: now).
    package var memoriesAsOf: Date?

    /// Adds these filters to a search.
    package func apply(to query: inout SearchQuery) {
        query.tags += tags.filter { !query.tags.contains($0) }
        if !anyTags.isEmpty { query.anyTags = anyTags }
        if !kinds.isEmpty { query.kinds = kinds }
    }
}

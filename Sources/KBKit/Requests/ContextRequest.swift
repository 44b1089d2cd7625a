import KBCore
import KBContext

/// Prompt context to assemble: for a bot's turn (its knowledge sources and the memories of its
/// scopes) or for a report (section by section, as its template says). `kb context`,
/// `POST /v1/context` and the MCP tool `context`.
///
/// ```swift
/// var request = ContextRequest(bot: "astro", query: "what does Venus in my tenth house mean?")
/// request.user = "ada"
/// let context = try await kb.context(request)
/// ```
public struct ContextRequest: KBRequest, Hashable {
    public var bot: String?
    public var report: String?
    /// The user's turn (bots), or words added to every section's query (reports).
    public var query: String?
    /// Whose memories a bot may read (`user:{user}` scopes).
    public var user: String?
    public var budget: Int?

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
        ]
    }

    /// A bot with the user's turn, or a report; not both.
    public static func constraints(_ limits: Limits) -> [String: JSONValue] {
        ["anyOf": [["required": ["bot", "query"]], ["required": ["report"]]], "not": ["required": ["bot", "report"]]]
    }

    public func check(_ limits: Limits) throws { _ = try validated(limits) }

    enum Target {
        case bot(String, user: String?)
        case report(String)
    }

    func validated(_ limits: Limits) throws -> (target: Target, query: String, budget: Int) {
        let rules = FieldRules(Self.self, limits)
        let budget = try rules.integer(budget, "budget")
        let text = try rules.optionalText(query, "query")?.trimmingWhitespace ?? ""
        switch (bot, report) {
        case (let name?, nil):
            guard !text.isEmpty else {
                throw KBError(.unprocessable, "\"query\" is missing; give the user's turn to find context for.")
            }
            let user = try rules.optionalText(user, "user")
            if let user { _ = try MemoryScope.user(user) }   // a user id must make a valid scope
            return (.bot(try rules.text(name, "bot"), user: user), text, budget)
        case (nil, let name?):
            _ = try rules.optionalText(user, "user")   // a report reads no memories: a user changes nothing
            return (.report(try rules.text(name, "report")), text, budget)
        default:
            throw KBError(.unprocessable, "Give either \"bot\" or \"report\" (one of them).")
        }
    }
}

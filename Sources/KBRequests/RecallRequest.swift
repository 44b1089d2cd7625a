import KBCore
import KBMemory

/// A search of memories: `kb memory search`, `POST /v1/memories/search` and the MCP tool `recall`.
///
/// ```swift
/// var request = RecallRequest(query: "diet")
/// request.scopes = ["user:ada"]
/// let results = try await kb.recall(request, as: .admin)
/// ```
public struct RecallRequest: KBRequest, Hashable {
    public var query: String
    public var scopes: [String]?
    public var tags: [String]?
    public var k: Int?
    public var mode: String?
    public var halfLife: String?
    public var includeSuperseded: Bool?
    /// What held at this time (ISO 8601 date or time) instead of now.
    public var asOf: String?

    public init(query: String) { self.query = query }

    public static let schemaName = "RecallRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("query", "What to recall, in plain words.", required: true, maxLength: limits.maxQueryCharacters),
            .strings("scopes", "Scopes to search: global, user:ID, bot:NAME (all when none).", maxItems: limits.maxListItems,
                     pattern: Pattern.scope),
            .strings("tags", "Only memories with every one of these tags.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .integer("k", "How many memories to return.", default: min(RetrievalProfile.standard.hits, limits.maxResults), range: 1...limits.maxResults),
            .choice("mode", "Ranking: keyword (bm25), vector (cosine) or both fused.", SearchMode.allCases.map(\.rawValue),
                    default: SearchMode.hybrid.rawValue),
            .string("halfLife", "Prefer recent memories: scores halve every 30d, 12h, 2w…", pattern: Pattern.halfLife),
            .boolean("includeSuperseded", "Also search memories replaced by newer ones, closed, expired or marked wrong."),
            .string("asOf", "Recall what held at this time (ISO 8601 date or time, e.g. 2026-03-01) instead of now.", pattern: Pattern.time),
        ]
    }


    public func validated(_ limits: Limits) throws -> MemoryQuery {
        let rules = FieldRules(Self.self, limits)
        var recall = MemoryQuery(try rules.text(query, "query"))
        recall.scopes = try rules.list(scopes, "scopes").map { try MemoryScope($0) }
        recall.tags = try rules.list(tags, "tags").map { Tag($0) }
        recall.limit = try rules.integer(k, "k")
        recall.mode = try rules.choice(mode, "mode", as: SearchMode.self) ?? .hybrid
        recall.recency = try rules.optionalText(halfLife, "halfLife").map { try Recency($0) }
        recall.includeSuperseded = includeSuperseded ?? false
        recall.asOf = try rules.optionalText(asOf, "asOf").map { try TimeText.parse($0, name: "asOf") }
        return recall
    }
}

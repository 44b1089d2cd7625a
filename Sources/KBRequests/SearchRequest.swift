public import KBCore

/// A search of the knowledge base, as a user or a program asks for it: `kb search`,
/// `POST /v1/search` and the MCP tool `search`. Absent fields take their defaults.
///
/// ```swift
/// var request = SearchRequest(query: "saturn return")
/// request.k = 3
/// let results = try await kb.search(request, as: .admin)
/// ```
public struct SearchRequest: KBRequest, Hashable {
    public var query: String
    public var k: Int?
    public var tags: [String]?
    /// At least one of these tags.
    public var anyTags: [String]?
    public var kinds: [String]?
    public var sources: [String]?
    public var mode: String?
    public var bot: String?
    public var groupBy: String?
    public var diversity: Double?
    public var candidates: Int?
    /// How hybrid search fuses its rankings: adaptive (the default) or rrf.
    public var fusion: String?
    public var keywordWeight: Double?
    public var vectorWeight: Double?
    public var quantized: Bool?
    /// Say why each hit is there (its ranks, scores, weight and the filters).
    public var explain: Bool?
    /// Run the server's second stage (its re-ranker), when it has one. The default is true.
    public var rerank: Bool?
    /// The user the search is made for: that user's private sources are searched too.
    public var user: String?

    public init(query: String) { self.query = query }

    public static let schemaName = "SearchRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("query", "What to look for, in plain words (quotes, *, - and : are not search syntax).", required: true,
                    maxLength: limits.maxQueryCharacters),
            .integer("k", "How many hits to return.", default: min(RetrievalProfile.standard.hits, limits.maxResults), range: 1...limits.maxResults),
            .strings("tags", "Only snippets with every one of these tags, e.g. area:career.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .strings("anyTags", "Only snippets with at least one of these tags.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .choices("kinds", "Only sources of these kinds; memories are searched only when named.", SourceKind.allCases.map(\.rawValue),
                     maxItems: limits.maxListItems),
            .strings("sources", "Only sources whose absolute path starts with one of these (a folder matches what is inside it).",
                     maxItems: limits.maxListItems, pattern: Pattern.absolutePath),
            .choice("mode", "Ranking: keyword (bm25), vector (cosine) or both fused.", SearchMode.allCases.map(\.rawValue),
                    default: SearchMode.hybrid.rawValue),
            .string("bot", "Search only the knowledge sources of this bot.", pattern: Pattern.botName),
            .choice("groupBy", "source keeps the best snippet of each source.", ["source"]),
            .number("diversity", "Maximal marginal relevance λ (1 = relevance only, lower = more varied).",
                    minimum: SearchQuery.diversityRange.lowerBound, maximum: SearchQuery.diversityRange.upperBound),
            .integer("candidates", "Candidates each ranking contributes before fusion.", default: min(RetrievalProfile.standard.candidates, limits.maxCandidates),
                     range: 1...limits.maxCandidates),
            .choice("fusion", "How hybrid search fuses its rankings: adaptive (scores scaled and mixed per query, the ranking whose best stands out weighing more) or rrf (reciprocal rank fusion with fixed weights).",
                    FusionMethod.allCases.map(\.rawValue), default: FusionMethod.adaptive.rawValue),
            .number("keywordWeight", "Weight of the keyword ranking in hybrid fusion.", default: 1, minimum: 0),
            .number("vectorWeight", "Weight of the vector ranking in hybrid fusion.", default: 1, minimum: 0),
            .boolean("quantized", "Scan an int8 copy of the vectors, then rescore the best candidates exactly."),
            .boolean("rerank", "Run the server's second stage (its re-ranker, when kb serve has one: --reranker); false keeps the first stage's order. The default is true."),
            .boolean("explain", "Say why each hit is there: its keyword rank and score, vector rank and cosine, fused score, weight and the filters applied."),
            .string("user", "The user the search is made for: that user's private sources are searched too (no one else's ever are).",
                    pattern: Pattern.userID),
        ]
    }

    /// The two fusion weights cannot both be 0 (as if/then: see `ContextRequest.constraints`).
    public static func constraints(_ limits: Limits) -> [String: JSONValue] {
        ["if": ["required": ["keywordWeight"], "properties": ["keywordWeight": ["const": 0]]],
         "then": ["properties": ["vectorWeight": ["not": ["const": 0]]]]]
    }


    /// The search this request asks for, checked against `limits` — the one check on the way in;
    /// what comes out flows down to `KnowledgeBase.search(_:)` unchecked again. A bot's sources
    /// are looked up when the search runs.
    public func validated(_ limits: Limits) throws -> ValidSearch {
        let rules = FieldRules(Self.self, limits)
        var search = SearchQuery(try rules.text(query, "query"))
        search.limit = try rules.integer(k, "k")
        search.tags = try rules.list(tags, "tags").map { Tag($0) }
        search.anyTags = try rules.list(anyTags, "anyTags").map { Tag($0) }
        search.kinds = Set(try rules.choices(kinds, "kinds", as: SourceKind.self))
        search.sourcePrefixes = try rules.list(sources, "sources").map(SourcePaths.absolutePrefix)
        search.mode = try rules.choice(mode, "mode", as: SearchMode.self) ?? .hybrid
        search.groupBySource = try rules.choice(groupBy, "groupBy", as: Grouping.self) == .source
        search.diversity = try rules.number(diversity, "diversity")
        search.candidates = try rules.integer(candidates, "candidates")
        search.fusion = try rules.choice(fusion, "fusion", as: FusionMethod.self) ?? .adaptive
        search.keywordWeight = try rules.number(keywordWeight, "keywordWeight") ?? 1
        search.vectorWeight = try rules.number(vectorWeight, "vectorWeight") ?? 1
        guard search.keywordWeight + search.vectorWeight > 0 else {
            throw KBError(.unprocessable, "\"keywordWeight\" and \"vectorWeight\" cannot both be 0.")
        }
        search.quantized = quantized ?? false
        search.explain = explain ?? false
        search.secondStage = rerank ?? true
        search.user = try rules.optionalText(user, "user")
        return ValidSearch(query: search, bot: try rules.optionalText(bot, "bot"))
    }

    enum Grouping: String { case source }
}

/// A search request checked against the limits (`SearchRequest.validated`): the query, and the
/// bot whose knowledge sources it is limited to.
public struct ValidSearch: Sendable, Hashable {
    public let query: SearchQuery
    public let bot: String?
}

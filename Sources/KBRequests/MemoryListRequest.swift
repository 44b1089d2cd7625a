public import KBCore

/// Which memories to list: `kb memory list`, `GET /v1/memories` (as query parameters: scope, tag,
/// all) and nothing in MCP. Oldest first.
public struct MemoryListRequest: KBRequest, Hashable {
    public var scopes: [String]?
    public var tags: [String]?
    public var includeSuperseded: Bool?

    public init() {}

    public static let schemaName = "MemoryListRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .strings("scopes", "Only these scopes (all when none).", maxItems: limits.maxListItems, pattern: Pattern.scope),
            .strings("tags", "Only memories with every one of these tags.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .boolean("includeSuperseded", "Also list memories replaced by newer ones."),
        ]
    }


    public func validated(_ limits: Limits) throws -> (scopes: [MemoryScope], tags: [Tag], includeSuperseded: Bool) {
        let rules = FieldRules(Self.self, limits)
        return (try rules.list(scopes, "scopes").map { try MemoryScope($0) }, try rules.list(tags, "tags").map { Tag($0) },
                includeSuperseded ?? false)
    }
}

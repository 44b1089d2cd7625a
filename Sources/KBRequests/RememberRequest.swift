import KBCore
public import KBMemory

/// A memory to store: `kb memory add`, `POST /v1/memories` and the MCP tool `remember`.
/// Content identical to a current memory of the scope returns that memory.
///
/// ```swift
/// var request = RememberRequest(content: "Ada is allergic to peanuts.")
/// request.scope = "user:ada"
/// let result = try await kb.remember(request, as: .admin)
/// ```
public struct RememberRequest: KBRequest, Hashable {
    public var content: String
    public var title: String?
    public var tags: [String]?
    public var scope: String?
    public var supersede: String?
    public var nearDuplicate: Double?
    /// When it became true (ISO 8601); the default is when it is stored.
    public var validFrom: String?
    /// When it stopped being true (ISO 8601).
    public var validTo: String?
    /// When it stops mattering (ISO 8601): left out of recall and context from then on.
    public var expiresAt: String?

    public init(content: String) { self.content = content }

    public static let schemaName = "RememberRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("content", "The fact to remember (at most \(limits.maxMemoryBytes) bytes).", required: true),
            .string("title", "A short title, one line.", maxLength: 300, pattern: Pattern.oneLine),
            .strings("tags", "Tags, e.g. diet or topic:health.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .string("scope", "global (the default), user:ID or bot:NAME.", pattern: Pattern.scope),
            .string("supersede", "Id of a memory of the same scope that this one replaces.", pattern: Pattern.memoryID),
            .number("nearDuplicate", "Cosine similarity from which other memories are reported as near-duplicates.",
                    default: Double(MemoryOptions().nearDuplicateThreshold), minimum: 0, maximum: 1),
            .string("validFrom", "When it became true (ISO 8601 date or time); the default is now.", pattern: Pattern.time),
            .string("validTo", "When it stopped being true (ISO 8601 date or time).", pattern: Pattern.time),
            .string("expiresAt", "When it stops mattering (ISO 8601): left out of recall and context from then on.", pattern: Pattern.time),
        ]
    }


    public func validated(_ limits: Limits) throws -> (draft: MemoryDraft, options: MemoryOptions, supersede: String?) {
        let rules = FieldRules(Self.self, limits)
        var options = MemoryOptions()
        options.maxContentBytes = limits.maxMemoryBytes
        options.nearDuplicateThreshold = Float(try rules.number(nearDuplicate, "nearDuplicate") ?? Double(options.nearDuplicateThreshold))
        _ = try rules.text(content, "content")
        let draft = MemoryDraft(
            try MemoryRules.validContent(content, options: options), title: try rules.optionalText(title, "title"),
            scope: try rules.optionalText(scope, "scope").map { try MemoryScope($0) } ?? .global,
            tags: try rules.list(tags, "tags").map { Tag($0) },
            validFrom: try rules.optionalText(validFrom, "validFrom").map { try TimeText.parse($0, name: "validFrom") },
            validTo: try rules.optionalText(validTo, "validTo").map { try TimeText.parse($0, name: "validTo") },
            expiresAt: try rules.optionalText(expiresAt, "expiresAt").map { try TimeText.parse($0, name: "expiresAt") })
        return (draft, options, try rules.optionalText(supersede, "supersede").map(MemoryRules.idOrPrefix))
    }
}

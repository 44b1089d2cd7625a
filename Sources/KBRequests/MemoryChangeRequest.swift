import KBCore
public import KBMemory

/// A change to a memory: `kb memory update`, `PATCH /v1/memories/{id}` and the MCP tool
/// `update_memory`. Fields left out stay as they are; `"title": null` removes the title and
/// `"tags": []` every tag. The previous version is kept in the memory's history.
///
/// ```swift
/// var request = MemoryChangeRequest(id: stored.id)
/// request.content = "Ada is allergic to peanuts and tree nuts."
/// let memory = try await kb.changeMemory(request, as: .admin)
/// ```
public struct MemoryChangeRequest: KBRequest, Hashable {
    public var id: String
    public var content: String?
    /// nil leaves the title; `.some(nil)` removes it.
    public var title: String??
    public var tags: [String]?
    /// When it became true (ISO 8601).
    public var validFrom: String?
    /// When it stopped being true; `.some(nil)` reopens it.
    public var validTo: String??
    /// When it stops mattering; `.some(nil)` removes the expiry.
    public var expiresAt: String??

    public init(id: String) { self.id = id }

    public static let schemaName = "MemoryChangeRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("id", "The memory's id, or a unique prefix of 4 or more characters.", required: true, pattern: Pattern.memoryID),
            .string("content", "New content (at most \(limits.maxMemoryBytes) bytes)."),
            .nullableString("title", "New title; null removes it.", maxLength: 300, pattern: Pattern.oneLine),
            .strings("tags", "New tags, replacing the old ones; [] removes them all.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .string("validFrom", "When it became true (ISO 8601 date or time).", pattern: Pattern.time),
            .nullableString("validTo", "When it stopped being true (ISO 8601); null opens it again.", pattern: Pattern.time),
            .nullableString("expiresAt", "When it stops mattering (ISO 8601); null removes the expiry.", pattern: Pattern.time),
        ]
    }

    enum CodingKeys: String, CodingKey { case id, content, title, tags, validFrom, validTo, expiresAt }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        content = try container.decodeIfPresent(String.self, forKey: .content)
        tags = try container.decodeIfPresent([String].self, forKey: .tags)
        if container.contains(.title) {
            title = try container.decodeNil(forKey: .title) ? .some(nil) : .some(try container.decode(String.self, forKey: .title))
        }
        validFrom = try container.decodeIfPresent(String.self, forKey: .validFrom)
        if container.contains(.validTo) {
            validTo = try container.decodeNil(forKey: .validTo) ? .some(nil) : .some(try container.decode(String.self, forKey: .validTo))
        }
        if container.contains(.expiresAt) {
            expiresAt = try container.decodeNil(forKey: .expiresAt) ? .some(nil) : .some(try container.decode(String.self, forKey: .expiresAt))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(content, forKey: .content)
        try container.encodeIfPresent(tags, forKey: .tags)
        try container.encodeIfPresent(validFrom, forKey: .validFrom)
        for (value, key) in [(title, CodingKeys.title), (validTo, .validTo), (expiresAt, .expiresAt)] {
            switch value {
            case .none: break
            case .some(.none): try container.encodeNil(forKey: key)
            case .some(.some(let text)): try container.encode(text, forKey: key)
            }
        }
    }


    public func validated(_ limits: Limits) throws -> (id: String, change: MemoryChange, options: MemoryOptions) {
        let rules = FieldRules(Self.self, limits)
        var options = MemoryOptions()
        options.maxContentBytes = limits.maxMemoryBytes
        let id = try MemoryRules.idOrPrefix(try rules.text(id, "id"))
        guard content != nil || title != nil || tags != nil || validFrom != nil || validTo != nil || expiresAt != nil else {
            throw KBError(.unprocessable, "Nothing to change: give \"content\", \"title\", \"tags\", \"validFrom\", \"validTo\" or \"expiresAt\".")
        }
        var change = MemoryChange(content: try content.map { _ in try rules.text(content, "content") })
        if let title { change.title = .some(try rules.optionalText(title, "title")) }
        if tags != nil { change.tags = try rules.list(tags, "tags").map { Tag($0) } }
        change.validFrom = try rules.optionalText(validFrom, "validFrom").map { try TimeText.parse($0, name: "validFrom") }
        if let validTo { change.validTo = .some(try rules.optionalText(validTo, "validTo").map { try TimeText.parse($0, name: "validTo") }) }
        if let expiresAt {
            change.expiresAt = .some(try rules.optionalText(expiresAt, "expiresAt").map { try TimeText.parse($0, name: "expiresAt") })
        }
        return (id, change, options)
    }
}

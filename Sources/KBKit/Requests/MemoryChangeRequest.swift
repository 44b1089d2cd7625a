import KBCore
public import KBMemory

/// A change to a memory: `kb memory update`, `PATCH /v1/memories/{id}` and the MCP tool
/// `update_memory`. Fields left out stay as they are; `"title": null` removes the title and
/// `"tags": []` every tag. The previous version is kept in the memory's history.
///
/// ```swift
/// var request = MemoryChangeRequest(id: stored.id)
/// request.content = "Ada is allergic to peanuts and tree nuts."
/// let memory = try await kb.changeMemory(request)
/// ```
public struct MemoryChangeRequest: KBRequest, Hashable {
    public var id: String
    public var content: String?
    /// nil leaves the title; `.some(nil)` removes it.
    public var title: String??
    public var tags: [String]?

    public init(id: String) { self.id = id }

    public static let schemaName = "MemoryChangeRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("id", "The memory's id, or a unique prefix of 4 or more characters.", required: true, pattern: Pattern.memoryID),
            .string("content", "New content (at most \(limits.maxMemoryBytes) bytes)."),
            .nullableString("title", "New title; null removes it.", maxLength: 300, pattern: Pattern.oneLine),
            .strings("tags", "New tags, replacing the old ones; [] removes them all.", maxItems: limits.maxListItems, pattern: Pattern.tag),
        ]
    }

    enum CodingKeys: String, CodingKey { case id, content, title, tags }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        content = try container.decodeIfPresent(String.self, forKey: .content)
        tags = try container.decodeIfPresent([String].self, forKey: .tags)
        if container.contains(.title) {
            title = try container.decodeNil(forKey: .title) ? .some(nil) : .some(try container.decode(String.self, forKey: .title))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(content, forKey: .content)
        try container.encodeIfPresent(tags, forKey: .tags)
        switch title {
        case .none: break
        case .some(.none): try container.encodeNil(forKey: .title)
        case .some(.some(let value)): try container.encode(value, forKey: .title)
        }
    }


    public func validated(_ limits: Limits) throws -> (id: String, change: MemoryChange, options: MemoryOptions) {
        let rules = FieldRules(Self.self, limits)
        var options = MemoryOptions()
        options.maxContentBytes = limits.maxMemoryBytes
        let id = try MemoryRules.idOrPrefix(try rules.text(id, "id"))
        guard content != nil || title != nil || tags != nil else {
            throw KBError(.unprocessable, "Nothing to change: give \"content\", \"title\" or \"tags\".")
        }
        var change = MemoryChange(content: try content.map { _ in try rules.text(content, "content") })
        if let title { change.title = .some(try rules.optionalText(title, "title")) }
        if tags != nil { change.tags = try rules.list(tags, "tags").map { Tag($0) } }
        return (id, change, options)
    }
}

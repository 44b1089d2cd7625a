public import Foundation

/// Who a memory belongs to: `global`, `user:ID` or `bot:NAME`. Searches never cross scopes
/// they were not given.
///
/// ```swift
/// let scope = try MemoryScope("user:ada")
/// ```
public struct MemoryScope: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    public let name: String

    /// The scope memories go to when none is named.
    public static let global = MemoryScope(validated: "global")

    /// What a scope looks like: `global`, or `user:` / `bot:` followed by 1–200 characters without
    /// white space (ICU's or ECMA-262's: U+FEFF is only the latter's) or control characters (the
    /// same regular expression the API's schemas state).
    public static let pattern = "^(global|(user|bot):[^\\s\\x00-\\x1f\\x7f-\\x9f\\uFEFF]{1,200})$"
    private static let expression = try! NSRegularExpression(pattern: pattern)

    /// Checks the form against `pattern`.
    public init(_ text: String) throws {
        let whole = NSRange(text.startIndex..., in: text)
        // ICU's `$` also matches before a final line break; the match must reach the end.
        guard let match = Self.expression.firstMatch(in: text, range: whole), match.range == whole else {
            throw KBError(.invalidArgument,
                "'\(text)' is not a memory scope. Use global, user:ID or bot:NAME (no spaces), e.g. user:ada.")
        }
        self.name = text
    }

    init(validated name: String) { self.name = name }

    /// A user's scope, `user:ID`.
    public static func user(_ id: String) throws -> MemoryScope { try MemoryScope("user:" + id) }
    /// A bot's scope, `bot:NAME`.
    public static func bot(_ name: String) throws -> MemoryScope { try MemoryScope("bot:" + name) }

    public var description: String { name }
    public static func < (a: MemoryScope, b: MemoryScope) -> Bool { a.name < b.name }

    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// One earlier state of a memory, kept when it was updated.
public struct MemoryVersion: Sendable, Hashable, Codable {
    /// 1 for the content the memory was added with, counting up with each update.
    public var version: Int
    public var title: String?
    public var content: String
    public var tags: [Tag]
    /// When this version was written.
    public var updatedAt: Date

    public init(version: Int, title: String?, content: String, tags: [Tag], updatedAt: Date) {
        self.version = version
        self.title = title
        self.content = content
        self.tags = tags
        self.updatedAt = updatedAt
    }
}

/// Something a user or a bot asked to remember: a small fact with a scope.
public struct Memory: Sendable, Hashable, Codable, Identifiable {
    /// Stable id: a lowercase UUID.
    public var id: String
    public var scope: MemoryScope
    public var title: String?
    public var content: String
    public var tags: [Tag]
    public var createdAt: Date
    /// When the current version was written.
    public var updatedAt: Date
    /// The current version number (1 until the first update).
    public var version: Int
    /// The id of the memory that replaced this one; superseded memories stay in the index but
    /// are left out of searches unless asked for.
    public var supersededBy: String?
    /// When what it says became true: stated ("since March"), else the time of the turn it was
    /// learned from, else when it was stored.
    public var validFrom: Date
    /// When it stopped being true: set when a newer memory superseded it (that one's
    /// `validFrom`) or when it was marked outdated. Nil while it holds.
    public var validTo: Date?
    /// When it stops mattering ("through Sunday", "next Thursday"): left out of searches for
    /// later times, kept until consolidation retires it.
    public var expiresAt: Date?
    /// Marked wrong by feedback: left out of recall and context until reviewed.
    public var flaggedWrong: Bool
    /// How many times feedback called it useful (a small ranking signal, see `MemoryBoost`).
    public var useful: Int

    public init(
        id: String, scope: MemoryScope, title: String?, content: String, tags: [Tag],
        createdAt: Date, updatedAt: Date, version: Int = 1, supersededBy: String? = nil,
        validFrom: Date? = nil, validTo: Date? = nil, expiresAt: Date? = nil, flaggedWrong: Bool = false, useful: Int = 0
    ) {
        self.id = id
        self.scope = scope
        self.title = title
        self.content = content
        self.tags = tags
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.supersededBy = supersededBy
        self.validFrom = validFrom ?? createdAt
        self.validTo = validTo
        self.expiresAt = expiresAt
        self.flaggedWrong = flaggedWrong
        self.useful = useful
    }

    enum CodingKeys: String, CodingKey {
        case id, scope, title, content, tags, createdAt, updatedAt, version, supersededBy, validFrom, validTo, expiresAt, flaggedWrong, useful
    }

    /// Reads memories written before valid time too (`validFrom` then is `createdAt`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let createdAt = try c.decode(Date.self, forKey: .createdAt)
        self.init(
            id: try c.decode(String.self, forKey: .id), scope: try c.decode(MemoryScope.self, forKey: .scope),
            title: try c.decodeIfPresent(String.self, forKey: .title), content: try c.decode(String.self, forKey: .content),
            tags: try c.decode([Tag].self, forKey: .tags), createdAt: createdAt, updatedAt: try c.decode(Date.self, forKey: .updatedAt),
            version: try c.decode(Int.self, forKey: .version), supersededBy: try c.decodeIfPresent(String.self, forKey: .supersededBy),
            validFrom: try c.decodeIfPresent(Date.self, forKey: .validFrom), validTo: try c.decodeIfPresent(Date.self, forKey: .validTo),
            expiresAt: try c.decodeIfPresent(Date.self, forKey: .expiresAt),
            flaggedWrong: try c.decodeIfPresent(Bool.self, forKey: .flaggedWrong) ?? false, useful: try c.decodeIfPresent(Int.self, forKey: .useful) ?? 0)
    }

    /// Whether it held at `time`: from `validFrom`, before `validTo` and before `expiresAt`.
    public func isValid(at time: Date) -> Bool {
        validFrom <= time && validTo.map { time < $0 } ?? true && expiresAt.map { time < $0 } ?? true
    }

    /// Neither superseded nor closed (an expired memory stays current until it is retired).
    public var isCurrent: Bool { supersededBy == nil && validTo == nil }

    /// The index path of the source that holds this memory: `memory:ID`.
    public var sourcePath: String { Memory.sourcePath(id) }
    public static func sourcePath(_ id: String) -> String { "memory:" + id }

    /// The current state as a version entry.
    public var currentVersion: MemoryVersion {
        MemoryVersion(version: version, title: title, content: content, tags: tags, updatedAt: updatedAt)
    }
}

/// One feedback on a memory, as logged.
public struct MemoryFeedbackEntry: Sendable, Hashable, Codable {
    public var memoryID: String
    /// `wrong`, `outdated`, `useful` or `confirmed`.
    public var feedback: String
    /// Who gave it: `admin`, or the token's name.
    public var caller: String
    public var note: String?
    public var at: Date

    public init(memoryID: String, feedback: String, caller: String, note: String?, at: Date) {
        self.memoryID = memoryID
        self.feedback = feedback
        self.caller = caller
        self.note = note
        self.at = at
    }
}

extension MemoryScope: SchemaDescribed {
    public static var jsonSchema: JSONValue { ["type": "string"] }
    public static var schemaPlaceholder: MemoryScope { .global }
}

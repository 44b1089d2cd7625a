public import Foundation
public import KBCore
public import KBMemory

/// A memory to add.
///
/// ```swift
/// let draft = MemoryDraft("Prefers metric units", scope: try .user("ada"), tags: ["preference"])
/// ```
public struct MemoryDraft: Sendable, Hashable {
    public var content: String
    public var title: String?
    public var tags: [Tag]
    /// The default is `global`.
    public var scope: MemoryScope
    /// When it became true; the default (nil) is when it is stored.
    public var validFrom: Date?
    /// When it stopped being true, for a fact told after it ended. The default is nil.
    public var validTo: Date?
    /// When it stops mattering ("through Sunday"). The default is nil.
    public var expiresAt: Date?

    public init(_ content: String, title: String? = nil, scope: MemoryScope = .global, tags: [Tag] = [],
                validFrom: Date? = nil, validTo: Date? = nil, expiresAt: Date? = nil) {
        self.content = content
        self.title = title
        self.scope = scope
        self.tags = tags
        self.validFrom = validFrom
        self.validTo = validTo
        self.expiresAt = expiresAt
    }
}

/// Changes to a memory; nil fields stay as they are.
public struct MemoryChange: Sendable, Hashable {
    public var content: String?
    /// `.some(nil)` removes the title.
    public var title: String??
    /// Replaces the tag set.
    public var tags: [Tag]?
    /// Valid time; `.some(nil)` removes an end or an expiry.
    public var validFrom: Date?
    public var validTo: Date??
    public var expiresAt: Date??

    public init(content: String? = nil, title: String?? = nil, tags: [Tag]? = nil,
                validFrom: Date? = nil, validTo: Date?? = nil, expiresAt: Date?? = nil) {
        self.content = content
        self.title = title
        self.tags = tags
        self.validFrom = validFrom
        self.validTo = validTo
        self.expiresAt = expiresAt
    }

    package var isEmpty: Bool { content == nil && title == nil && tags == nil && validFrom == nil && validTo == nil && expiresAt == nil }
}

/// What to recall.
public struct MemoryQuery: Sendable, Hashable {
    public var text: String
    /// Scopes searched; empty means every scope. The default is empty.
    public var scopes: [MemoryScope] = []
    /// Every tag must be on a memory. The default is none.
    public var tags: [Tag] = []
    /// How many memories to return. The default is 8 (`RetrievalProfile.hits`).
    public var limit = RetrievalProfile.standard.hits
    /// The default is `.hybrid` (keyword ranking on an index without vectors).
    public var mode: SearchMode = .hybrid
    /// Prefer recent memories: scores are multiplied by 2^(−age / half-life). The default is none.
    public var recency: Recency?
    /// Also return memories superseded by newer ones, closed, expired or marked wrong. The
    /// default is false.
    public var includeSuperseded = false
    /// Recall what held at this time (superseded memories included) instead of now. The
    /// default is nil.
    public var asOf: Date?
    /// Recall what was said, or held, within this window instead of now. The default is nil:
    /// read from the query's words when `timeFromWords` ("what did I tell you last week?",
    /// "where did I live in March?", "since I moved").
    public var during: TimeWindow?
    /// Whether a time the query's words name sets `during` (unless `asOf` or `during` is given).
    /// The default is true.
    public var timeFromWords = true
    /// The time ages are measured from and relative times in the query ("last week") are read
    /// against. The default is now.
    public var now = Date()

    public init(_ text: String) { self.text = text }
}

public import Foundation
public import KBCore
public import KBMemory
import KBStore

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

/// A stored memory whose content is very close to one just added.
public struct NearDuplicate: Sendable, Hashable, Codable {
    public var id: String
    /// Cosine similarity of the two contents' embeddings.
    public var similarity: Float
    public var content: String
}

/// What `remember` did.
public struct RememberResult: Sendable, Hashable, Codable {
    /// The new memory, or the existing one that already holds the same content.
    public var memory: Memory
    /// False when an identical memory (after whitespace normalisation) was already in the scope:
    /// nothing was added.
    public var created: Bool
    /// Current memories of the scope whose embedding is at least the threshold close.
    public var nearDuplicates: [NearDuplicate]
    /// The memory marked as superseded by this one, if one was named.
    public var superseded: String?
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

    var isEmpty: Bool { content == nil && title == nil && tags == nil && validFrom == nil && validTo == nil && expiresAt == nil }
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

/// One recalled memory.
public struct MemoryHit: Sendable, Hashable, Codable {
    public var rank: Int
    /// The search score, times the recency weight when a half-life was given.
    public var score: Double
    public var memory: Memory
}

/// The recalled memories and how they were ranked.
public struct MemoryResults: Sendable, Hashable, Codable {
    public var query: String
    public var mode: SearchMode
    public var embedder: String?
    public var hits: [MemoryHit]
    /// Set when a hybrid recall fell back to keywords because the query could not be embedded.
    public var degraded: Degraded?
    /// The window recalled, when the query asked about one (`MemoryQuery.during`).
    public var during: TimeWindow?
}

/// A memory and, when asked for, its earlier versions.
public struct MemoryWithHistory: Sendable, Hashable, Codable {
    public var memory: Memory
    public var history: [MemoryVersion]?
    /// With the history: the feedback given on it, oldest first.
    public var feedback: [MemoryFeedbackEntry]?
}

/// What `importMemories` did, line by line.
public struct MemoryImportReport: Sendable, Hashable, Codable {
    public struct Failure: Sendable, Hashable, Codable {
        public var line: Int
        public var message: String
    }
    public var added = 0
    public var unchanged = 0
    public var replaced = 0
    public var failed: [Failure] = []
}

/// A memory a conversation suggests, checked against the user's memories.
public struct MemoryProposal: Sendable, Hashable, Codable {
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        /// A new memory.
        case add
        /// A new version of the memory `replaces` (the old one stays in its history): a correction.
        case update
        /// A new memory that replaces `replaces` from its `validFrom` on: the fact changed, and
        /// the old one is closed then and kept (recall with `asOf` still finds it).
        case supersede
        /// The memory `replaces` is deleted, as the user asked.
        case forget
        /// Nothing to do: already remembered, or nothing matches what is to be forgotten.
        case none
    }

    public var action: Action
    public var content: String
    public var tags: [Tag]
    /// The memory an update or a forget is about.
    public var replaces: String?
    /// Why, in a sentence.
    public var reason: String
    /// With `apply`: the memory that was written (add, update, supersede) or deleted (forget).
    public var memory: String?
    /// Valid time the conversation gives it (dates it names, else the turn's time).
    public var validFrom: Date?
    public var expiresAt: Date?
    /// The words that named the time.
    public var timeWords: String?
    /// The language the memory is written in, that of the user's words it comes from (`en`, `uk`,
    /// `ru`, `ar`; nil when kb cannot tell).
    public var language: String?

    public init(action: Action, content: String, tags: [Tag], replaces: String?, reason: String, memory: String? = nil,
                validFrom: Date? = nil, expiresAt: Date? = nil, timeWords: String? = nil, language: String? = nil) {
        self.action = action
        self.content = content
        self.tags = tags
        self.replaces = replaces
        self.reason = reason
        self.memory = memory
        self.validFrom = validFrom
        self.expiresAt = expiresAt
        self.timeWords = timeWords
        self.language = language
    }
}

/// What `extractMemories` proposes, and whether it was stored.
public struct MemoryExtraction: Sendable, Hashable, Codable {
    /// The one scope the proposals are for: `user:{user}`.
    public var scope: String
    /// `patterns` (kb's explicit patterns, `ExplicitMemories`) or the model, `openai:MODEL`.
    public var extractor: String
    public var applied: Bool
    public var proposals: [MemoryProposal]
}

/// What an erasure removed.
public struct Erasure: Sendable, Hashable, Codable {
    public var scope: String
    /// Memories, superseded ones included.
    public var memories: Int
    /// Their versions, the current ones included.
    public var versions: Int
    /// Cached remote vectors of those texts.
    public var cachedVectors: Int
    /// The user's private sources, with their snippets, vectors and stored originals (user scopes).
    public var sources: Int
    /// The user's jobs that had not stored their source yet.
    public var jobs: Int
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

public import Foundation
public import KBCore
import KBMemory
import KBStore

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
public struct MemoryProposal: Sendable, Hashable, Codable, SchemaFieldNotes {
    public static let fieldNotes: [String: JSONValue] = [
        "validFrom": ["description": "Valid time the conversation gives the memory (dates it names, else the turn's time)."],
        "timeWords": ["description": "The words that named the time."],
        "language": ["description": "The language the memory is written in, that of the user's words it comes from (en, uk, ru, ar)."],
    ]

    public enum Action: String, Sendable, Hashable, Codable, CaseIterable, SchemaEnumeration {
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

public import KBContext
public import KBCore
import KBRetrieval

/// A prompt block with its citations, for a bot or a report.
public struct ContextResponse: Sendable, Codable {
    public var bot: String?
    public var report: String?
    /// The bot's system prompt (bots only).
    public var system: String?
    public var query: String
    public var context: String
    public var citations: [Citation]
    public var items: [AssembledItem]
    public var tokens: Int
    public var budget: Int
    /// How tokens were counted.
    public var counter: String
    /// Memory scopes read (bots only).
    public var scopes: [String]
    /// Set when the snippets and memories came from keywords alone because the query could not
    /// be embedded.
    public var degraded: Degraded?
    /// What a bot's knowledge was searched with when the request had a history (the turn
    /// first, then the turn with earlier turns, and each query's weight in the fusion).
    public var retrieval: Retrieval?
}

/// The queries a conversational context request searched.
public struct Retrieval: Sendable, Hashable, Codable {
    public var queries: [PlannedQuery]
}

public import Foundation
public import KBCore

/// What the index holds, and whether queries can be embedded: the index's status with a
/// `queryEmbedder` field.
public struct ServiceStatus: Sendable, Codable, SchemaFieldNotes {
    public static let fieldNotes: [String: JSONValue] = [
        "vectors": ["description": "Vectors stored, by embedder."],
        "tokensUsed": ["description": "Tokens remote embedders reported using, by embedder."],
        "cachedVectors": ["description": "Vectors kept in the embedding cache, by embedder."],
        "languages": ["description": "Snippets by the language detected at ingest."],
        "languageWarning": ["description": "Languages the index holds that its embedder does not read, and the fix."],
        "jobs": ["description": "Unfinished jobs by state (receiving, queued, running)."],
    ]

    public var index: IndexStatus
    public var queryEmbedder: QueryEmbedderStatus
    /// Unfinished jobs (uploads being read) by state: `receiving`, `queued`, `running`.
    public var jobs: [String: Int] = [:]

    enum Key: String, CodingKey { case queryEmbedder, jobs }

    public init(index: IndexStatus, queryEmbedder: QueryEmbedderStatus, jobs: [String: Int] = [:]) {
        self.index = index
        self.queryEmbedder = queryEmbedder
        self.jobs = jobs
    }

    public init(from decoder: any Decoder) throws {
        index = try IndexStatus(from: decoder)
        let container = try decoder.container(keyedBy: Key.self)
        queryEmbedder = try container.decode(QueryEmbedderStatus.self, forKey: .queryEmbedder)
        jobs = try container.decode([String: Int].self, forKey: .jobs)
    }

    public func encode(to encoder: any Encoder) throws {
        try index.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(queryEmbedder, forKey: .queryEmbedder)
        try container.encode(jobs, forKey: .jobs)
    }
}

/// Whether this process can embed queries, as `/v1/status` reports it.
public struct QueryEmbedderStatus: Sendable, Hashable, Codable {
    public var available: Bool
    /// What went wrong, while unavailable.
    public var problem: String?
    /// Since when, while unavailable.
    public var since: Date?
    /// Answers given from keywords alone because the query could not be embedded.
    public var degradedAnswers: Int
    /// Times the embedder came back after being unavailable.
    public var recoveries: Int

    public init(available: Bool, problem: String?, since: Date?, degradedAnswers: Int, recoveries: Int) {
        self.available = available
        self.problem = problem
        self.since = since
        self.degradedAnswers = degradedAnswers
        self.recoveries = recoveries
    }
}

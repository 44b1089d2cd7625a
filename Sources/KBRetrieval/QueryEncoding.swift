public import KBCore
public import KBStore

/// How a retriever embeds queries: with the embedder the index records, in one call for several
/// texts, or — when that embedder is unavailable and the search may fall back to keywords — no
/// vectors and the reason.
public protocol QueryEncoding: Sendable {
    /// One vector per text with `record`'s embedder; nil (and no reason) when the index has no
    /// vectors. Unavailability is thrown unless `mayDegrade`.
    func vectors(_ texts: [String], record: EmbedderRecord?, mayDegrade: Bool) async throws -> (vectors: [[Float]]?, degraded: Degraded?)
    /// Counts an answer that came from keywords alone because its query could not be embedded.
    func countDegradedAnswer()
}

import Foundation

/// What `reindex` did.
public struct ReindexReport: Sendable, Hashable, Codable {
    /// The embedder searched before and after, with its precision and context where it has them:
    /// `multilingual-e5-small (int8, with titles)`.
    public var from: String?
    public var to: String
    /// Snippets embedded by this run (a resumed run skips those done before).
    public var embedded = 0
    public var switched = false
    public var seconds = 0.0
}

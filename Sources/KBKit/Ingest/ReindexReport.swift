import Foundation

/// What `reindex` did.
public struct ReindexReport: Sendable, Hashable, Codable {
    public var from: String?
    public var to: String
    /// Snippets embedded by this run (a resumed run skips those done before).
    public var embedded = 0
    public var switched = false
    public var seconds = 0.0
}

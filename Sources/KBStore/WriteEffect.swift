/// What one write transaction changed: the source it wrote, the snippets it removed and
/// inserted, and the index's generation after it.
public struct WriteEffect: Sendable, Hashable {
    public var sourceID: Int64?
    /// Snippets deleted (their vectors went with them).
    public var removedSnippets: [Int64] = []
    /// Snippets inserted, in ordinal order.
    public var insertedSnippets: [Int64] = []
    /// The index's generation after the write (`IndexSnapshot.generation()`); 0 if nothing changed.
    public var generation: Int64 = 0

    public init(sourceID: Int64? = nil) { self.sourceID = sourceID }
}

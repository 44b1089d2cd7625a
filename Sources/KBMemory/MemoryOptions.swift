/// Limits and thresholds for memory writes.
///
/// ```swift
/// var options = MemoryOptions()
/// options.nearDuplicateThreshold = 0.95
/// ```
public struct MemoryOptions: Sendable, Hashable {
    /// Largest content accepted, in UTF-8 bytes. The default is 8192 (8 KB).
    public var maxContentBytes = 8192
    /// Cosine similarity at or above which a new memory is reported as a near-duplicate of an
    /// existing one in its scope (it is still added). The default is 0.92.
    public var nearDuplicateThreshold: Float = 0.92

    public init() {}
}

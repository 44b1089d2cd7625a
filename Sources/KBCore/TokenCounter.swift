/// Counts the tokens a text costs in a chat model's prompt.
///
/// ```swift
/// let tokens = counter.count("Venus rules the seventh house.")
/// ```
public protocol TokenCounter: Sendable {
    /// A short name for reports (`conservative`).
    var name: String { get }
    func count(_ text: String) -> Int
}

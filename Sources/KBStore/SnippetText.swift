/// A snippet's id and text.
public struct SnippetText: Sendable, Hashable {
    public var id: Int64
    public var text: String

    public init(id: Int64, text: String) {
        self.id = id
        self.text = text
    }
}

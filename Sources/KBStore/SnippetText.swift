import KBCore

/// A snippet's id and text, and what its embedder reads (`EmbeddingInput`).
public struct SnippetText: Sendable, Hashable {
    public var id: Int64
    public var text: String
    /// For a conversation's turn, the text of the turn before it (nil for the first turn and for
    /// every other kind of snippet).
    public var previousTurn: String?

    public init(id: Int64, text: String, previousTurn: String? = nil) {
        self.id = id
        self.text = text
        self.previousTurn = previousTurn
    }

    /// What the embedder reads for this snippet.
    public var embeddingInput: String { EmbeddingInput.turn(text, after: previousTurn) }
}

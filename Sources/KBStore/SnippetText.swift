public import KBCore

/// A snippet's id and text, and what its embedder reads (`EmbeddingInput`).
public struct SnippetText: Sendable, Hashable {
    public var id: Int64
    public var text: String
    /// For a conversation's turn, the text of the turn before it (nil for the first turn and for
    /// every other kind of snippet).
    public var previousTurn: String?
    /// The title of the snippet's source, nil for a conversation's turn.
    public var title: String?
    /// The path of the snippet's source.
    public var path: String

    public init(id: Int64, text: String, previousTurn: String? = nil, title: String? = nil, path: String = "") {
        self.id = id
        self.text = text
        self.previousTurn = previousTurn
        self.title = title
        self.path = path
    }

    /// SQL for the source's title (NULL for a conversation's turn: it reads the turn before it
    /// instead) and path, where `so` is the snippet's source: what a store selects for `title`
    /// and `path`.
    public static let titleColumns = "CASE WHEN so.kind = 'conversation' THEN NULL ELSE so.title END, so.path"

    /// What the embedder reads for this snippet in an index that embeds with `context`.
    public func embeddingInput(_ context: EmbeddingInput.Context) -> String {
        if let title { return EmbeddingInput.passage(text, title: title, path: path, context: context) }
        return EmbeddingInput.turn(text, after: previousTurn)
    }
}

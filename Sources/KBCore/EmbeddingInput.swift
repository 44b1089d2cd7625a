/// What the embedder reads for a snippet: its text — and, for a turn of a conversation, the turn
/// before it first.
///
/// A turn is short and leans on the one before ("What did you paint?" — "A sunset over the
/// lake."): embedded alone, the answer's vector knows nothing of painting. Embedded after the
/// turn it answers, it does (LoCoMo conversations 0–4, vector recall@10 0.486 → 0.625 with
/// multilingual-e5-small). The snippet's text, its keyword index and its citations stay the turn
/// alone; only the vector reads the pair.
///
/// ```swift
/// EmbeddingInput.turn("Bo: A sunset over the lake.", after: "Ada: What did you paint?")
/// // "Ada: What did you paint?\nBo: A sunset over the lake."
/// ```
public enum EmbeddingInput {
    /// A turn after the turn before it in its conversation (nil for the first).
    public static func turn(_ text: String, after previous: String?) -> String {
        guard let previous, !previous.isEmpty else { return text }
        return previous + "\n" + text
    }

    /// What the embedder reads for each of a source's snippets, in their order: a conversation's
    /// turns after the snippet before them, any other kind's snippets as they are.
    public static func texts(of snippets: [Snippet], kind: SourceKind) -> [String] {
        guard kind == .conversation else { return snippets.map(\.text) }
        return snippets.indices.map { index in
            turn(snippets[index].text, after: index > 0 && snippets[index - 1].ordinal == snippets[index].ordinal - 1 ? snippets[index - 1].text : nil)
        }
    }
}

import Foundation

/// What the embedder reads for a snippet: its text after its source's title — and, for a turn
/// of a conversation, the turn before it first.
///
/// A turn is short and leans on the one before ("What did you paint?" — "A sunset over the
/// lake."): embedded alone, the answer's vector knows nothing of painting. Embedded after the
/// turn it answers, it does (LoCoMo conversations 0–4, vector recall@10 0.486 → 0.625 with
/// multilingual-e5-small). A book's or a note's paragraph is embedded after its source's title,
/// as the model's document prompt expects (CISI cut into 500-character snippets, vector nDCG@10
/// 0.320 → 0.358, hybrid 0.383 → 0.400; kb's astrology notes vector 0.805 → 0.838; the heading
/// path as well measured worse: English questions over Ukrainian notes 0.876 → 0.828). The
/// snippet's text, its keyword index and its citations stay the snippet alone; only the vector
/// reads the context. An index records which it embedded (`Context`): one made before titles
/// were read keeps embedding bare text (a reindex to another model embeds titles).
///
/// ```swift
/// EmbeddingInput.turn("Bo: A sunset over the lake.", after: "Ada: What did you paint?")
/// // "Ada: What did you paint?\nBo: A sunset over the lake."
/// EmbeddingInput.passage("Saturn takes 29 years…", title: "Saturn", path: "notes/planets.md", context: .title)
/// // "Saturn\nSaturn takes 29 years…"
/// ```
public enum EmbeddingInput {
    /// A turn after the turn before it in its conversation (nil for the first).
    public static func turn(_ text: String, after previous: String?) -> String {
        guard let previous, !previous.isEmpty else { return text }
        return previous + "\n" + text
    }

    /// What a snippet's vector is embedded with besides its text (turns apart: they always read
    /// the turn before them). Recorded by the index (`EmbedderRecord.context`).
    public enum Context: String, Sendable, Hashable, Codable {
        /// The text alone: indexes made before kb read titles.
        case bare
        /// The source's title on a line before the text.
        case title
    }

    /// What a new index embeds.
    public static let newIndexContext = Context.title

    /// A book's or a note's snippet after its source's title, with `.title`. A title the text
    /// starts with already, or that only repeats the file's name (a note without a heading, a
    /// dataset's document id), adds nothing and is left out.
    public static func passage(_ text: String, title: String, path: String, context: Context) -> String {
        guard context == .title, !title.isEmpty, !text.hasPrefix(title), !path.hasSuffix(title),
              title != ((path as NSString).lastPathComponent as NSString).deletingPathExtension else { return text }
        return title + "\n" + text
    }

    /// What the embedder reads for each of a source's snippets, in their order: a conversation's
    /// turns after the snippet before them, any other kind's snippets after the source's title
    /// (`passage`).
    public static func texts(of snippets: [Snippet], source: Source, context: Context) -> [String] {
        guard source.kind == .conversation else {
            return snippets.map { passage($0.text, title: source.title, path: source.path, context: context) }
        }
        return snippets.indices.map { index in
            turn(snippets[index].text, after: index > 0 && snippets[index - 1].ordinal == snippets[index].ordinal - 1 ? snippets[index - 1].text : nil)
        }
    }
}

/// Which languages an embedding model reads, from its name: a multilingual model reads them all;
/// an English-only one (all-MiniLM-L6-v2, the English bge/gte/e5/nomic models) gives vectors
/// that are noise for a text in another language — measured: all-MiniLM-L6-v2 finds Arabic
/// paragraphs by Arabic questions at nDCG@10 0.04, where keywords alone reach 0.89.
///
/// ```swift
/// ModelLanguages.reads("all-MiniLM-L6-v2", "ar")         // false
/// ModelLanguages.reads("multilingual-e5-small", "ar")    // true
/// ```
public enum ModelLanguages {
    /// Whether the model `name` reads `language` (a code such as `en`, `uk`, `en-GB`). A model
    /// kb does not know is taken to read every language.
    public static func reads(_ name: String, _ language: String) -> Bool {
        guard isEnglishOnly(name) else { return true }
        return primary(language) == "en"
    }

    /// Whether kb knows `name` as a model trained on English alone.
    public static func isEnglishOnly(_ name: String) -> Bool {
        let name = name.lowercased()
        if ["multilingual", "m3", "labse", "xlm", "distiluse", "paraphrase-multilingual"].contains(where: name.contains) { return false }
        return ["all-minilm", "all-mpnet", "all-distilroberta", "multi-qa-", "msmarco-", "bge-small-en", "bge-base-en", "bge-large-en",
                "gte-small", "gte-base", "gte-large", "e5-small", "e5-base", "e5-large", "nomic-embed-text", "snowflake-arctic-embed"]
            .contains(where: name.contains)
    }

    /// A language tag's primary subtag, lower-cased: `en-GB` → `en`.
    public static func primary(_ language: String) -> String {
        String(language.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first ?? "")
    }
}

public import KBStore

extension KeywordQuery {
    /// The FTS5 MATCH expression for what the user typed: its search words, each quoted, joined
    /// by OR; nil when the text has no words. The keyword table's own tokenizer folds and stems
    /// the quoted words, as it did the indexed text.
    ///
    /// ```swift
    /// KeywordQuery.match(for: "venus -career (NEAR") // "\"venus\" OR \"career\" OR \"near\""
    /// ```
    public static func match(for text: String, language: KeywordLanguage = .english) -> String? {
        searchWords(in: text, language: language).map { words in words.map { "\"\($0)\"" }.joined(separator: " OR ") }
    }
}

extension KeywordLanguage {
    /// The FTS5 `tokenize` option of the keyword table: Porter over unicode61 for English, kb's
    /// `kb_fold` tokenizer (`FoldingTokenizer`) for the others.
    var ftsTokenizer: String {
        self == .english ? "porter unicode61 remove_diacritics 2" : "kb_fold \(rawValue)"
    }
}

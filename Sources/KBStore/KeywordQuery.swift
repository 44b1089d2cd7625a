/// The words a keyword search looks for in what the user typed.
///
/// Nothing the user types is query syntax: `"`, `*`, `-`, `:`, parentheses, `NEAR`, `AND`
/// are either separators or plain words. Common function words (`and`, `the`, `of`…) are left
/// out unless the query has nothing else: matching them alone says nothing about relevance, yet
/// it would put unrelated snippets into the keyword ranking. Each store turns the words into its
/// own query (an FTS5 MATCH expression, a tsquery); its keyword index folds and stems them as
/// it did the indexed text.
///
/// ```swift
/// KeywordQuery.searchWords(in: "venus -career (NEAR") // ["venus", "career", "near"]
/// ```
public enum KeywordQuery {
    /// The words to search for, in order, without `language`'s function words unless nothing
    /// else is left; nil when the text has no words.
    public static func searchWords(in text: String, language: KeywordLanguage = .english) -> [String]? {
        let all = self.words(in: text)
        guard !all.isEmpty else { return nil }
        let stopwords = language.stopwords
        let content = all.filter { !stopwords.contains(language == .arabic ? KeywordLanguage.foldArabic($0) : $0) }
        return content.isEmpty ? all : content
    }

    /// English function words skipped in keyword queries that have other words.
    public static let stopwords: Set<String> = [
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
        "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
        "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has",
        "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if",
        "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor",
        "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out",
        "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
        "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to",
        "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while",
        "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves",
    ]

    /// Runs of letters, digits and combining marks, lower-cased, in order, without repeats.
    public static func words(in text: String) -> [String] {
        var words: [String] = []
        var seen = Set<String>()
        var current = String.UnicodeScalarView()
        func flush() {
            if !current.isEmpty {
                let word = String(current).lowercased()
                if seen.insert(word).inserted { words.append(word) }
                current = String.UnicodeScalarView()
            }
        }
        for scalar in text.unicodeScalars {
            let p = scalar.properties
            if p.isAlphabetic || p.numericType != nil || p.generalCategory == .nonspacingMark
                || p.generalCategory == .spacingMark || p.generalCategory == .decimalNumber {
                current.append(scalar)
            } else {
                flush()
            }
        }
        flush()
        return words
    }
}

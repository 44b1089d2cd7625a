/// Turns user text into a safe FTS5 query: the words of the text, each quoted, joined by OR.
///
/// Nothing the user types is FTS5 syntax: `"`, `*`, `-`, `:`, parentheses, `NEAR`, `AND`
/// are either separators or plain words. Common English function words (`and`, `the`, `of`…)
/// are left out unless the query has nothing else: matching them alone says nothing about
/// relevance, yet it would put unrelated snippets into the keyword ranking.
///
/// ```swift
/// KeywordQuery.match(for: "venus -career (NEAR") // "\"venus\" OR \"career\" OR \"near\""
/// ```
public enum KeywordQuery {
    /// The FTS5 MATCH expression, or nil when the text has no words. The keyword table's own
    /// tokenizer folds and stems the quoted words, as it did the indexed text.
    public static func match(for text: String, language: KeywordLanguage = .english) -> String? {
        let all = self.words(in: text)
        guard !all.isEmpty else { return nil }
        let stopwords = language.stopwords
        let content = all.filter { !stopwords.contains(language == .arabic ? KeywordLanguage.foldArabic($0) : $0) }
        return (content.isEmpty ? all : content).map { "\"\($0)\"" }.joined(separator: " OR ")
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

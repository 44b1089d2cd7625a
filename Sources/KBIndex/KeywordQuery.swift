/// Turns user text into a safe FTS5 query: the words of the text, each quoted, joined by OR.
///
/// Nothing the user types is FTS5 syntax: `"`, `*`, `-`, `:`, parentheses, `NEAR`, `AND`
/// are either separators or plain words.
///
/// ```swift
/// KeywordQuery.match(for: "venus -career (NEAR") // "\"venus\" OR \"career\" OR \"near\""
/// ```
public enum KeywordQuery {
    /// The FTS5 MATCH expression, or nil when the text has no words.
    public static func match(for text: String) -> String? {
        let words = self.words(in: text)
        guard !words.isEmpty else { return nil }
        return words.map { "\"\($0)\"" }.joined(separator: " OR ")
    }

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

/// kb's keyword analysis as a function — the terms a keyword index keeps for a text, in order —
/// for a store whose database has no such analysis of its own. SQLite runs it inside FTS5
/// (`kb_fold`); PostgreSQL stores and searches the terms it gives (`KB_TEXT_SEARCH=auto`), so
/// both engines find the same words.
public protocol KeywordAnalyzer: Sendable {
    /// The language it analyses for (`auto`: each word by its script's rules).
    var language: KeywordLanguage { get }
    /// The terms of `text`, in order, repeats kept: folded, stemmed, ideographs in pairs.
    func terms(in text: String) -> [String]
}

/// A keyword excerpt made outside the database: up to `words` words of a text around its first
/// word whose terms meet the query's, each such word between `**`, `…` where the text was cut.
///
/// ```swift
/// KeywordExcerpt.excerpt(of: "We planted roses.", matching: ["plant"]) { [$0.lowercased().replacingOccurrences(of: "ed", with: "")] }
/// // "We **planted** roses."
/// ```
public enum KeywordExcerpt {
    /// nil when no word of `text` has a term among `terms`.
    public static func excerpt(of text: String, matching terms: Set<String>, words limit: Int = 32,
                               analyze: (String) -> [String]) -> String? {
        guard !terms.isEmpty else { return nil }
        let scalars = Array(text.unicodeScalars)
        // Words: runs of letters, digits and marks, as KeywordQuery reads them.
        var words: [Range<Int>] = []
        var start: Int?
        for (index, scalar) in scalars.enumerated() {
            let p = scalar.properties
            let inWord = p.isAlphabetic || p.numericType != nil || [.nonspacingMark, .spacingMark, .decimalNumber].contains(p.generalCategory)
            if inWord, start == nil { start = index }
            if !inWord, let first = start { words.append(first..<index); start = nil }
        }
        if let first = start { words.append(first..<scalars.count) }
        func string(_ range: Range<Int>) -> String { String(String.UnicodeScalarView(scalars[range])) }
        let matched = words.indices.filter { !terms.isDisjoint(with: analyze(string(words[$0]))) }
        guard let firstMatch = matched.first else { return nil }
        let from = max(0, min(firstMatch - 3, words.count - limit))
        let to = min(words.count, from + limit)
        let marked = Set(matched)
        var out = from > 0 ? "…" : ""
        var cursor = words[from].lowerBound
        for index in from..<to {
            out += string(cursor..<words[index].lowerBound)
            out += marked.contains(index) ? "**" + string(words[index]) + "**" : string(words[index])
            cursor = words[index].upperBound
        }
        if to == words.count { out += string(cursor..<scalars.count) } else { out += "…" }
        return out
    }
}

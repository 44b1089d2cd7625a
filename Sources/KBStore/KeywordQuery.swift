import KBCore

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
    ///
    /// With `.auto`, a word's function-word list follows its script: a Latin word is left out
    /// when it is an English function word or one of the query's own language (or languages, when
    /// two tie: `LanguageDetector.candidates`), a Cyrillic word when Ukrainian or Russian, an Arabic-script word when
    /// Arabic — so the English "the" of a question never matches a stray English phrase in a
    /// Russian page. Runs of ideographs become overlapping pairs, as the index keeps them.
    ///
    /// `pairingIdeographs: false` keeps runs of ideographs whole (for a keyword index that does).
    public static func searchWords(in text: String, language: KeywordLanguage = .english, pairingIdeographs: Bool = true) -> [String]? {
        var all = self.words(in: text)
        guard !all.isEmpty else { return nil }
        if language == .auto {
            var seen = Set<String>()
            all = all.flatMap { word in pairingIdeographs && word.unicodeScalars.contains(where: isIdeograph) ? pairs(word) : [word] }
                .filter { seen.insert($0).inserted }
            let stopwords = autoStopwords(for: text)
            let content = all.filter { word in
                guard let first = word.unicodeScalars.first(where: { LanguageDetector.script(of: $0) != .other }) else { return true }
                let list = stopwords[LanguageDetector.script(of: first)] ?? []
                return !list.contains(LanguageDetector.script(of: first) == .arabic ? KeywordLanguage.foldArabic(word) : word)
            }
            return content.isEmpty ? all : content
        }
        let stopwords = language.stopwords
        let content = all.filter { !stopwords.contains(language == .arabic ? KeywordLanguage.foldArabic($0) : $0) }
        return content.isEmpty ? all : content
    }

    /// The function words `auto` leaves out of a query, by script.
    static func autoStopwords(for text: String) -> [LanguageDetector.Script: Set<String>] {
        var latin = stopwords
        for code in LanguageDetector.candidates(of: text) ?? [] where LanguageDetector.languages(writtenIn: .latin).contains(code) {
            latin.formUnion(LanguageDetector.functionWords(code))
        }
        return [.latin: latin, .cyrillic: KeywordLanguage.ukrainianStopwords.union(KeywordLanguage.russianStopwords),
                .arabic: KeywordLanguage.arabic.stopwords]
    }

    /// Whether a scalar is a Chinese or Japanese ideograph or kana: scripts written without spaces.
    public static func isIdeograph(_ scalar: Unicode.Scalar) -> Bool {
        let script = LanguageDetector.script(of: scalar)
        return script == .han || script == .kana
    }

    /// A word with runs of ideographs cut into overlapping pairs (a run of one stays one); the
    /// rest of the word, between such runs, as it is.
    ///
    /// ```swift
    /// KeywordQuery.pairs("北京大学")   // ["北京", "京大", "大学"]
    /// ```
    public static func pairs(_ word: String) -> [String] {
        var pieces: [String] = []
        var run: [Unicode.Scalar] = []
        var other = String.UnicodeScalarView()
        func flushRun() {
            if run.count == 1 { pieces.append(String(run[0])) }
            for index in run.indices.dropLast() { pieces.append(String(run[index]) + String(run[index + 1])) }
            run = []
        }
        func flushOther() {
            if !other.isEmpty { pieces.append(String(other)) }
            other = String.UnicodeScalarView()
        }
        for scalar in word.unicodeScalars {
            if isIdeograph(scalar) {
                flushOther()
                run.append(scalar)
            } else {
                flushRun()
                other.append(scalar)
            }
        }
        flushRun()
        flushOther()
        return pieces
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

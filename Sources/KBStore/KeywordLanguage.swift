import Foundation
import KBCore

/// The language an index's keyword search is tuned for (`kb ingest --language`, recorded in
/// `kb_meta` as `language`): how words are folded and stemmed, in the index and in queries
/// alike, and which function words queries leave out.
///
/// - `auto` (the default for a new index): every word by the rules of its script, so an index may
///   hold several languages — Latin words by Porter's English stemmer (as `english`), Cyrillic by
///   the Ukrainian and Russian rules below (a word with letters only one of them has by that
///   one's endings, others by both lists, longest ending first), Arabic-script words folded and
///   stemmed as `arabic`, Chinese and Japanese ideographs cut into overlapping pairs (they are
///   written without spaces), any other script case-folded without diacritics. Arabic
///   presentation forms are folded to their letters (NFKC) in every language but `english`.
///   A query leaves out the function words of the languages each of its words may be in
///   (`KeywordQuery.searchWords`).
/// - `english` (the default of indexes made before `auto`): FTS5's Porter stemmer over
///   `unicode61 remove_diacritics 2`.
/// - `ukrainian`, `russian`: case-folded, `ё` → `е`, `ґ` kept apart from `г`, and a light
///   suffix-stripping stemmer (the longest known inflectional ending, keeping a stem of at least
///   three letters), so `книга`, `книги`, `книгою` meet.
/// - `arabic`: diacritics (harakat, superscript alef) and tatweel removed, alef forms
///   (`أ إ آ ٱ`) folded to `ا`, `ى` to `ي`, `ة` to `ه`, then Larkey's light10 stemmer: the
///   article and conjunction prefixes (`ال`, `وال`, `بال`…, `و`) and common suffixes (`ها`, `ات`, `ون`…).
/// - `simple`: case-folded and diacritics removed, no stemming: any other language.
///
/// In SQLite, the non-English languages use kb's FTS5 tokenizer `kb_fold` (a wrapper around
/// unicode61, in KBSQLite), registered on every connection kb opens; the stock `sqlite3` shell can
/// read such an index but not run MATCH on its keyword table. PostgreSQL uses its text search
/// configurations.
public enum KeywordLanguage: String, Sendable, CaseIterable, Hashable {
    case auto, english, ukrainian, russian, arabic, simple

    /// Reads `auto`, `en`, `english`, `uk`, `ukrainian`, `ru`, `russian`, `ar`, `arabic`, `simple`/`none`.
    public init(_ text: String) throws {
        switch text.lowercased() {
        case "auto", "multi", "multilingual": self = .auto
        case "en", "eng", "english": self = .english
        case "uk", "ukr", "ukrainian": self = .ukrainian
        case "ru", "rus", "russian": self = .russian
        case "ar", "ara", "arabic": self = .arabic
        case "simple", "none", "other": self = .simple
        default:
            throw KBError(.invalidArgument, "Unknown keyword language '\(text)'. Use auto (each word by its script's rules; the default), english, ukrainian, russian, arabic, or simple (no stemming) for any other.")
        }
    }

    /// Function words left out of queries that have other words (`auto`: see
    /// `KeywordQuery.searchWords`, which chooses them per word).
    public var stopwords: Set<String> {
        switch self {
        case .english, .auto: KeywordQuery.stopwords
        case .ukrainian: Self.ukrainianStopwords
        case .russian: Self.russianStopwords
        case .arabic: Set(Self.arabicStopwords.map { Self.foldArabic($0) })
        case .simple: []
        }
    }

    /// A token as the keyword index keeps it (after unicode61's lower-casing): folded and stemmed.
    public func normalize(_ token: String) -> String {
        let token = self == .english ? token : TextHygiene.foldPresentationForms(token)
        switch self {
        case .english, .simple: return token
        case .ukrainian, .russian: return Self.stemCyrillic(token.replacingOccurrences(of: "ё", with: "е"), endings: self == .ukrainian ? Self.ukrainianEndings : Self.russianEndings)
        case .arabic: return Self.stemArabic(Self.foldArabic(token))
        case .auto:
            guard let first = token.unicodeScalars.first(where: { LanguageDetector.script(of: $0) != .other }) else { return token }
            switch LanguageDetector.script(of: first) {
            case .arabic: return Self.stemArabic(Self.foldArabic(token))
            case .cyrillic:
                let word = token.replacingOccurrences(of: "ё", with: "е")
                if word.contains(where: { "іїєґ".contains($0) }) { return Self.stemCyrillic(word, endings: Self.ukrainianEndings) }
                if word.contains(where: { "ыэъ".contains($0) }) { return Self.stemCyrillic(word, endings: Self.russianEndings) }
                return Self.stemCyrillic(word, endings: Self.cyrillicEndings)
            default: return token
            }
        }
    }

    // MARK: - Cyrillic

    static func stemCyrillic(_ word: String, endings: [String]) -> String {
        let letters = Array(word)
        guard letters.count > 3 else { return word }
        for ending in endings where letters.count - ending.count >= 3 && word.hasSuffix(ending) {
            return String(letters.dropLast(ending.count))
        }
        return word
    }

    /// Inflectional endings of Ukrainian nouns, adjectives and verbs, longest first.
    static let ukrainianEndings: [String] = [
        "ування", "ювання", "ішого", "ішому", "ішими",
        "ання", "ення", "ями", "ами", "ові", "еві", "єві", "ого", "ому", "ими", "іми", "ою", "ею", "єю",
        "ати", "ити", "іти", "ють", "ять", "уть", "ать", "ить", "али", "или", "ила", "ало", "ило", "ується",
        "ах", "ях", "ам", "ям", "ом", "ем", "єм", "ів", "їв", "ий", "ій", "их", "іх", "ої", "ей", "ую", "юю", "ая", "яя", "ім",
        "ла", "ли", "ло", "ть", "ся", "сь",
        "а", "я", "і", "ї", "и", "у", "ю", "о", "е", "є", "ь", "й",
    ].sorted { $0.count > $1.count }

    /// Inflectional endings of Russian nouns, adjectives and verbs, longest first.
    static let russianEndings: [String] = [
        "ования", "ование", "ениями", "ениях",
        "ами", "ями", "ого", "его", "ому", "ему", "ыми", "ими", "ией", "ией", "ах", "ях", "ам", "ям", "ом", "ем",
        "ов", "ев", "ей", "ой", "ый", "ий", "ых", "их", "ую", "юю", "ая", "яя", "ое", "ее", "ые", "ие",
        "ать", "ять", "ить", "еть", "ут", "ют", "ат", "ят", "ит", "ет", "ла", "ли", "ло", "ся", "сь", "ть",
        "а", "я", "ы", "и", "у", "ю", "о", "е", "ь", "й",
    ].sorted { $0.count > $1.count }

    /// Both languages' endings, longest first: a Cyrillic word without letters only one of them
    /// has.
    static let cyrillicEndings: [String] = Array(Set(ukrainianEndings + russianEndings)).sorted {
        $0.count != $1.count ? $0.count > $1.count : $0 < $1
    }

    static let ukrainianStopwords: Set<String> = [
        "і", "й", "та", "а", "але", "або", "в", "у", "на", "з", "із", "зі", "до", "від", "по", "за", "про", "для", "при",
        "під", "над", "без", "через", "що", "як", "це", "цей", "ця", "ці", "той", "та", "ті", "то", "не", "ні", "так",
        "чи", "же", "ж", "би", "б", "ще", "вже", "є", "був", "була", "було", "були", "його", "її", "їх", "він", "вона",
        "воно", "вони", "ми", "ви", "я", "ти", "який", "яка", "яке", "які", "коли", "де", "чому", "хто", "там", "тут",
    ]

    static let russianStopwords: Set<String> = [
        "и", "а", "но", "или", "в", "во", "на", "с", "со", "к", "ко", "от", "по", "за", "о", "об", "про", "для", "при",
        "под", "над", "без", "через", "что", "как", "это", "этот", "эта", "эти", "тот", "та", "те", "то", "не", "ни",
        "так", "ли", "же", "бы", "еще", "уже", "есть", "был", "была", "было", "были", "его", "ее", "их", "он", "она",
        "оно", "они", "мы", "вы", "я", "ты", "который", "которая", "которое", "которые", "когда", "где", "почему", "кто",
    ]

    // MARK: - Arabic

    /// Diacritics and tatweel out, alef/ya/ta-marbuta forms folded.
    static func foldArabic(_ word: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in word.unicodeScalars {
            switch scalar.value {
            case 0x064B...0x065F, 0x0670, 0x06D6...0x06ED, 0x0640: continue   // harakat, Quranic marks, tatweel
            case 0x0622, 0x0623, 0x0625, 0x0671: out.append("\u{0627}")       // آ أ إ ٱ → ا
            case 0x0649: out.append("\u{064A}")                                // ى → ي
            case 0x0629: out.append("\u{0647}")                                // ة → ه
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// Larkey, Ballesteros and Connell's light10 stemmer (on folded text).
    static func stemArabic(_ word: String) -> String {
        var letters = Array(word.unicodeScalars)
        if letters.count > 3, letters.first == "\u{0648}" { letters.removeFirst() }   // و
        for prefix in arabicPrefixes {
            let p = Array(prefix.unicodeScalars)
            if letters.count - p.count >= 2, Array(letters.prefix(p.count)) == p {
                letters.removeFirst(p.count)
                break
            }
        }
        for suffix in arabicSuffixes {
            let s = Array(suffix.unicodeScalars)
            if letters.count - s.count >= 2, Array(letters.suffix(s.count)) == s { letters.removeLast(s.count) }
        }
        return String(String.UnicodeScalarView(letters))
    }

    static let arabicPrefixes = ["\u{0627}\u{0644}", "\u{0648}\u{0627}\u{0644}", "\u{0628}\u{0627}\u{0644}", "\u{0643}\u{0627}\u{0644}",
                                 "\u{0641}\u{0627}\u{0644}", "\u{0644}\u{0644}"]   // ال وال بال كال فال لل
        .sorted { $0.unicodeScalars.count > $1.unicodeScalars.count }
    static let arabicSuffixes = ["\u{0647}\u{0627}", "\u{0627}\u{0646}", "\u{0627}\u{062A}", "\u{0648}\u{0646}", "\u{064A}\u{0646}",
                                 "\u{064A}\u{0647}", "\u{064A}\u{0647}", "\u{0647}", "\u{064A}"]   // ها ان ات ون ين يه ية→يه ه ي (ة folded to ه)

    static let arabicStopwords: [String] = [
        "في", "من", "على", "إلى", "الى", "عن", "مع", "هذا", "هذه", "ذلك", "تلك", "التي", "الذي", "الذين", "هو", "هي", "هم",
        "أن", "إن", "ان", "كان", "كانت", "ما", "لا", "لم", "لن", "قد", "ثم", "أو", "او", "و", "ف", "ب", "ل", "كل", "بين",
        "عند", "حتى", "إذا", "اذا", "كما", "أي", "اي", "هل", "نحو", "بعد", "قبل",
    ]
}

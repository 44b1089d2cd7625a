import Foundation

/// The language of a text from its script and its commonest words: Arabic, Hebrew, Greek,
/// Devanagari (Hindi), Thai, Chinese, Japanese and Korean by their letters; Ukrainian and
/// Russian, which share Cyrillic, by the letters only one of them has (і ї є ґ / ы э ъ ё) and
/// their function words; English, German, Spanish, French, Italian, Portuguese, Dutch and
/// Turkish, which share Latin letters, by their function words (and a few letters only one of
/// them uses). nil when the evidence is too thin (a few words, numbers, names) or two languages
/// tie.
///
/// ```swift
/// LanguageDetector.language(of: "Сатурн повертається через двадцять дев'ять років")   // "uk"
/// LanguageDetector.language(of: "Wie viele Punkte hat die Verteidigung abgegeben?")   // "de"
/// ```
public enum LanguageDetector {
    /// Codes kb detects.
    public static let codes: Set<String> = Set(latinWords.keys).union(["uk", "ru", "ar", "he", "el", "hi", "th", "zh", "ja", "ko"])

    /// The writing systems kb tells apart.
    public enum Script: Sendable, Hashable {
        case latin, cyrillic, arabic, hebrew, greek, devanagari, thai, han, kana, hangul, other
    }

    /// The script a letter belongs to (`.other` for digits, punctuation and the rest).
    public static func script(of scalar: Unicode.Scalar) -> Script {
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF: .latin
        case 0x0400...0x052F: .cyrillic
        case 0x0600...0x06FF, 0x0750...0x077F, 0x08A0...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFC: .arabic
        case 0x0590...0x05FF, 0xFB1D...0xFB4F: .hebrew
        case 0x0370...0x03FF, 0x1F00...0x1FFF: .greek
        case 0x0900...0x097F: .devanagari
        case 0x0E00...0x0E7F: .thai
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2FFFF: .han
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: .kana
        case 0xAC00...0xD7AF, 0x1100...0x11FF, 0x3130...0x318F: .hangul
        default: .other
        }
    }

    /// The languages that write with `script` and that kb can tell apart by their words.
    public static func languages(writtenIn script: Script) -> Set<String> {
        switch script {
        case .latin: Set(latinWords.keys)
        case .cyrillic: ["uk", "ru"]
        case .arabic: ["ar"]
        case .hebrew: ["he"]
        case .greek: ["el"]
        case .devanagari: ["hi"]
        case .thai: ["th"]
        case .han: ["zh", "ja"]
        case .kana: ["ja"]
        case .hangul: ["ko"]
        case .other: []
        }
    }

    /// The script most of a text's letters are in (nil without letters, or without a majority).
    public static func dominantScript(of text: String) -> Script? {
        var counts: [Script: Int] = [:]
        for scalar in text.unicodeScalars where scalar.properties.isAlphabetic {
            let script = script(of: scalar)
            if script != .other { counts[script, default: 0] += 1 }
        }
        let letters = counts.values.reduce(0, +)
        guard let (script, count) = counts.max(by: { $0.value < $1.value }), count * 2 > letters else { return nil }
        return script
    }

    /// The script a language kb detects is written in (nil for a code it does not detect).
    public static func script(ofLanguage code: String) -> Script? {
        for script in [Script.latin, .cyrillic, .arabic, .hebrew, .greek, .devanagari, .thai, .hangul, .kana, .han]
        where languages(writtenIn: script).contains(code) {
            return script
        }
        return nil
    }

    /// Whether a text in `one` language may share words with a text in `other` by more than
    /// accident: the same language, or Ukrainian and Russian (close, and told apart by a few
    /// letters and words that a short question may not have).
    public static func mayShareWords(_ one: String, _ other: String) -> Bool {
        one == other || Set([one, other]) == ["uk", "ru"]
    }

    /// The function words kb knows for a language (lower case): what tells it apart, and what
    /// keyword search leaves out of a query in it.
    public static func functionWords(_ code: String) -> Set<String> {
        switch code {
        case "uk": ukrainianWords
        case "ru": russianWords
        default: latinWords[code] ?? []
        }
    }

    static let ukrainianWords: Set<String> = ["і", "й", "що", "це", "як", "та", "або", "але", "від", "для", "його", "її", "вони",
                                              "ми", "ви", "він", "вона", "був", "була", "були", "є", "цей", "ця", "які", "який", "коли", "тому", "щоб", "вже", "ще"]
    static let russianWords: Set<String> = ["и", "что", "это", "как", "или", "но", "от", "для", "его", "её", "они", "мы", "вы", "он",
                                            "она", "был", "была", "были", "этот", "эта", "которые", "который", "когда", "поэтому", "чтобы", "уже", "ещё"]
    static let englishWords: Set<String> = ["the", "and", "of", "to", "is", "in", "that", "it", "for", "with", "as", "on", "are", "be",
                                            "this", "by", "or", "from", "at", "an", "was", "which", "not", "can", "has", "have", "its", "when",
                                            "what", "who", "how", "did", "does", "why", "where", "were", "many", "much"]
    /// Function words of the Latin-script languages kb detects. A function word two of them share
    /// is in both lists, where it cancels out (German and Dutch "wie", "er", "als"; English,
    /// German and Dutch "was", "is"); a word that is a function word in one and a common word in
    /// another is in neither ("no", "do", "come", "son" are English words too); and there are no
    /// single letters (Spanish "y", Portuguese "o" are variables and initials in English text).
    static let latinWords: [String: Set<String>] = [
        "en": englishWords,
        "de": ["der", "die", "das", "und", "ist", "von", "zu", "den", "mit", "im", "ein", "eine", "einen", "auf", "für", "nicht", "sich",
               "des", "dem", "es", "auch", "wurde", "wurden", "werden", "hat", "sind", "wie", "wer", "wann", "wo", "welche",
               "welcher", "welches", "viele", "nach", "bei", "aus", "oder", "aber", "zum", "zur", "vom", "war", "was", "waren", "über",
               "er", "als"],
        "es": ["el", "la", "de", "en", "los", "las", "del", "que", "un", "una", "es", "por", "con", "para", "se", "su", "sus", "al", "lo",
               "como", "más", "qué", "cuál", "cuáles", "cuántos", "cuántas", "quién", "dónde", "cuándo", "fue", "fueron", "pero",
               "este", "esta", "entre", "sobre", "también", "hasta", "desde", "cómo", "muy"],
        "fr": ["le", "la", "de", "en", "les", "des", "du", "et", "est", "une", "qui", "dans", "pour", "pas", "sur", "au", "aux", "avec", "ce", "cette",
               "quel", "quelle", "quels", "combien", "où", "été", "sont", "il", "elle", "ils", "mais", "ou", "comme", "leur", 
               "par", "qu", "était", "ont"],
        "it": ["il", "la", "gli", "della", "delle", "dei", "di", "che", "è", "per", "una", "con", "non", "nel", "nella", "alla", "sono",
               "quale", "quali", "chi", "quanti", "quante", "dove", "quando", "anche", "ma", "più", "stato", "ha", "hanno"],
        "pt": ["de", "os", "da", "das", "dos", "que", "em", "uma", "para", "com", "não", "foi", "qual", "quais", "quantos",
               "onde", "quem", "quando", "como", "mais", "pelo", "pela", "são", "ao", "na", "nos", "nas", "seu", "sua", "também"],
        "nl": ["de", "het", "een", "en", "van", "is", "dat", "op", "te", "zijn", "met", "voor", "niet", "aan", "er", "ook", "als",
               "bij", "naar", "werd", "wat", "wie", "hoe", "waar", "welke", "hoeveel", "wanneer", "maar", "om", "uit"],
        "tr": ["ve", "bir", "bu", "için", "ile", "olarak", "olan", "çok", "ne", "mi", "mı", "mu", "mü", "kaç", "hangi", "nedir",
               "kim", "nerede", "daha", "gibi", "sonra", "kadar", "ise", "veya", "ama", "değil", "tarafından", "olduğu", "nasıl", "neden"],
    ]
    /// Letters only one of the Latin-script languages uses much, each worth two function words.
    static let latinLetters: [Character: String] = ["ß": "de", "ñ": "es", "¿": "es", "ğ": "tr", "ı": "tr", "ş": "tr", "ã": "pt", "õ": "pt"]

    /// The language of `text`, when kb can tell it (one candidate, see `candidates(of:)`).
    public static func language(of text: String) -> String? {
        guard let candidates = candidates(of: text), candidates.count == 1 else { return nil }
        return candidates.first
    }

    /// The languages `text` may be in, as far as kb can tell: one, or those that tie (Ukrainian
    /// and Russian for a Cyrillic question with neither's own letters or words; Spanish and
    /// Portuguese for one whose function words both have); nil when the evidence is too thin.
    public static func candidates(of text: String) -> Set<String>? {
        var counts: [Script: Int] = [:]
        var ukrainianLetters = 0, russianLetters = 0
        for scalar in text.unicodeScalars {
            let script = script(of: scalar)
            // ASCII letters are alphabetic; other letters are asked of Unicode's tables.
            guard script != .other, scalar.value < 0x80 || scalar.properties.isAlphabetic else { continue }
            counts[script, default: 0] += 1
            if script == .cyrillic {
                switch scalar {
                case "і", "ї", "є", "ґ", "І", "Ї", "Є", "Ґ": ukrainianLetters += 1
                case "ы", "э", "ъ", "ё", "Ы", "Э", "Ъ", "Ё": russianLetters += 1
                default: break
                }
            }
        }
        let letters = counts.values.reduce(0, +)
        // A script of its own writes one language; CJK ideographs count a word each.
        let ideographs = (counts[.han] ?? 0) + (counts[.kana] ?? 0) + (counts[.hangul] ?? 0)
        guard letters >= 8 || ideographs >= 4 else { return nil }
        guard let (script, count) = counts.max(by: { $0.value < $1.value }), count * 2 > letters else { return nil }
        let lower = text.lowercased()
        // Where the lower-cased text holds no combining marks or joiners (Latin and Cyrillic
        // letters, common punctuation), each of its characters is one scalar.
        let simple = lower.unicodeScalars.allSatisfy {
            switch $0.value {
            case 0..<0x300, 0x400...0x482, 0x48A...0x52F, 0x2010...0x2027: true
            default: false
            }
        }
        // Words as `Character.isLetter` splits them (a character is a letter when its first scalar is alphabetic).
        func words() -> [String] {
            if simple {
                return lower.unicodeScalars.split { !$0.properties.isAlphabetic && $0 != "'" && $0 != "’" }.map(String.init)
            }
            return lower.split { !$0.isLetter && $0 != "'" && $0 != "’" }.map(String.init)
        }
        switch script {
        case .arabic: return ["ar"]
        case .hebrew: return ["he"]
        case .greek: return ["el"]
        case .devanagari: return ["hi"]
        case .thai: return ["th"]
        case .hangul: return ["ko"]
        case .kana: return ["ja"]
        case .han: return [(counts[.kana] ?? 0) * 10 >= count ? "ja" : "zh"]
        case .cyrillic:
            let words = words()
            let uk = ukrainianLetters * 2 + words.filter(ukrainianWords.contains).count
            let ru = russianLetters * 2 + words.filter(russianWords.contains).count
            return uk > ru ? ["uk"] : ru > uk ? ["ru"] : ["uk", "ru"]
        case .latin:
            let words = words()
            var scores = latinWords.mapValues { _ in 0 }
            for word in words { for code in latinWordLanguages[word] ?? [] { scores[code, default: 0] += 1 } }
            if simple {
                for scalar in lower.unicodeScalars where scalar.value >= 0x80 {
                    if let code = latinLetters[Character(scalar)] { scores[code, default: 0] += 2 }
                }
            } else {
                for character in lower { if let code = latinLetters[character] { scores[code, default: 0] += 2 } }
            }
            guard let best = scores.values.max(), best >= max(1, words.count / 25) else { return nil }
            return Set(scores.filter { $0.value == best }.keys)
        case .other: return nil
        }
    }

    /// The Latin-script languages each function word belongs to.
    static let latinWordLanguages: [String: [String]] = {
        var map: [String: [String]] = [:]
        for (code, words) in latinWords { for word in words { map[word, default: []].append(code) } }
        return map
    }()

    /// Adds a `lang:` tag to each snippet that has none (from its source: front matter `lang: uk`,
    /// an EPUB's or web page's language) as `setting` says.
    /// A long document's snippets are detected on every core (a book's 6,000 snippets took half a
    /// second on one, while the other waited for the book to be read).
    public static func tag(_ document: inout SourceDocument, _ setting: TextLanguage) {
        guard setting != .off else { return }
        let untagged = document.snippets.indices.filter { !document.snippets[$0].tags.contains(where: { $0.key == "lang" }) }
        let codes: [String?]
        switch setting {
        case .fixed(let given): codes = untagged.map { _ in given }
        case .off: return
        case .detect:
            codes = untagged.map { document.snippets[$0].text }.concurrentMap(minimumCount: 256, language(of:))
        }
        for (index, code) in zip(untagged, codes) {
            if let code { document.snippets[index].tags.append(Tag(key: "lang", value: code)) }
        }
    }
}

/// How snippets get their `lang:` tag (`--text-language`): detected (the default), one code for
/// all, or none.
public enum TextLanguage: Sendable, Hashable {
    case detect
    case fixed(String)
    case off

    /// `auto`, `none`, or a language code (`uk`, `en`, `ar`, `ru`, any two or three letters).
    public init(_ text: String) throws {
        switch text.lowercased() {
        case "auto", "detect": self = .detect
        case "none", "off": self = .off
        case let code where (2...3).contains(code.count) && code.allSatisfy({ $0.isASCII && $0.isLetter }): self = .fixed(code)
        default:
            throw KBError(.invalidArgument, "'\(text)' is not a text language. Use auto (detect each snippet's), none, or a code such as uk, en, ar, ru.")
        }
    }
}

/// The language of a snippet from its script and its commonest words: Arabic by its letters;
/// Ukrainian and Russian, which share Cyrillic, by the letters only one of them has (і ї є ґ /
/// ы э ъ ё) and their function words; English by its function words among Latin letters. nil
/// when the evidence is too thin (a few words, numbers, another Latin-script language).
///
/// ```swift
/// LanguageDetector.language(of: "Сатурн повертається через двадцять дев'ять років")   // "uk"
/// ```
public enum LanguageDetector {
    /// Codes kb detects.
    public static let codes: Set<String> = ["en", "uk", "ru", "ar"]

    static let ukrainianWords: Set<String> = ["і", "й", "що", "це", "як", "та", "або", "але", "від", "для", "його", "її", "вони",
                                              "ми", "ви", "він", "вона", "був", "була", "були", "є", "цей", "ця", "які", "який", "коли", "тому", "щоб", "вже", "ще"]
    static let russianWords: Set<String> = ["и", "что", "это", "как", "или", "но", "от", "для", "его", "её", "они", "мы", "вы", "он",
                                            "она", "был", "была", "были", "этот", "эта", "которые", "который", "когда", "поэтому", "чтобы", "уже", "ещё", "не", "же"]
    static let englishWords: Set<String> = ["the", "and", "of", "to", "is", "in", "that", "it", "for", "with", "as", "on", "are", "be",
                                            "this", "by", "or", "from", "at", "an", "was", "which", "not", "can", "has", "have", "its", "when"]

    public static func language(of text: String) -> String? {
        var arabic = 0, cyrillic = 0, latin = 0
        var ukrainianLetters = 0, russianLetters = 0
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0600...0x06FF, 0x0750...0x077F, 0x08A0...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF:
                if scalar.properties.isAlphabetic { arabic += 1 }
            case 0x0400...0x04FF:
                cyrillic += 1
                switch scalar {
                case "і", "ї", "є", "ґ", "І", "Ї", "Є", "Ґ": ukrainianLetters += 1
                case "ы", "э", "ъ", "ё", "Ы", "Э", "Ъ", "Ё": russianLetters += 1
                default: break
                }
            case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F: if scalar.properties.isAlphabetic { latin += 1 }
            default: break
            }
        }
        let letters = arabic + cyrillic + latin
        guard letters >= 8 else { return nil }
        if arabic * 2 > letters { return "ar" }
        let words = text.lowercased().split { !$0.isLetter && $0 != "'" && $0 != "’" }.map(String.init)
        if cyrillic * 2 > letters {
            let uk = ukrainianLetters * 2 + words.filter(ukrainianWords.contains).count
            let ru = russianLetters * 2 + words.filter(russianWords.contains).count
            if uk > ru { return "uk" }
            if ru > uk { return "ru" }
            return nil
        }
        if latin * 2 > letters {
            let english = words.filter(englishWords.contains).count
            return english >= max(1, words.count / 25) ? "en" : nil
        }
        return nil
    }

    /// Adds a `lang:` tag to each snippet that has none (from its source: front matter `lang: uk`,
    /// an EPUB's or web page's language) as `setting` says.
    public static func tag(_ document: inout SourceDocument, _ setting: TextLanguage) {
        guard setting != .off else { return }
        for index in document.snippets.indices where !document.snippets[index].tags.contains(where: { $0.key == "lang" }) {
            let code: String?
            switch setting {
            case .fixed(let given): code = given
            case .detect: code = language(of: document.snippets[index].text)
            case .off: code = nil
            }
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

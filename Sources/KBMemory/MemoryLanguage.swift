import Foundation
import KBCore

/// The language a user states something about themselves in, as kb's memory rules read it:
/// English, Ukrainian, Russian or Arabic, from a sentence of a few words. Arabic by its script;
/// Ukrainian and Russian, which share Cyrillic, by the letters only one of them has (і ї є ґ /
/// ы э ъ ё) and the words only one of them uses (`мене` / `меня`, `працюю` / `работаю`,
/// `тепер` / `теперь`…); a Cyrillic sentence with no sign of either is read as Russian when it
/// has none of Ukrainian's own letters (Ukrainian writes `і` in nearly every sentence: "Я живу в
/// Киеве" is Russian, "Я живу в Києві" Ukrainian); Latin letters are English unless
/// `LanguageDetector` is sure of another language. nil for anything else: kb has no memory rules
/// for it, and no other language's rules read it.
///
/// ```swift
/// MemoryLanguage.of("Меня зовут Олег.")          // "ru"
/// MemoryLanguage.of("Мене звати Олег.")          // "uk"
/// MemoryLanguage.of("اسمي فاطمة وأعيش في عمّان")  // "ar"
/// ```
public enum MemoryLanguage {
    /// The languages kb's memory rules are written for.
    public static let codes: [String] = ["en", "uk", "ru", "ar"]

    public static func of(_ text: String) -> String? {
        switch LanguageDetector.dominantScript(of: text) {
        case .arabic?: return "ar"
        case .cyrillic?: return cyrillic(text)
        case .latin?:
            guard let candidates = LanguageDetector.candidates(of: text) else { return "en" }
            return candidates.contains("en") ? "en" : nil
        default: return nil
        }
    }

    /// A language's name in English, for messages.
    public static func name(_ code: String) -> String {
        ["en": "English", "uk": "Ukrainian", "ru": "Russian", "ar": "Arabic", "de": "German", "es": "Spanish", "fr": "French",
         "it": "Italian", "pt": "Portuguese", "nl": "Dutch", "tr": "Turkish", "he": "Hebrew", "el": "Greek", "hi": "Hindi",
         "th": "Thai", "zh": "Chinese", "ja": "Japanese", "ko": "Korean"][code] ?? code
    }

    /// The language a text is in when kb can tell — its memory languages as `of` reads them,
    /// others as `LanguageDetector` does — else the script's languages (a short text).
    static func languages(of text: String) -> Set<String>? {
        if let code = of(text), code != "en" { return [code] }
        if let candidates = LanguageDetector.candidates(of: text) { return candidates }
        return LanguageDetector.dominantScript(of: text).map(LanguageDetector.languages(writtenIn:))
    }

    /// Why `content` is not in the language `said` is in ("English, but the user wrote in
    /// Arabic"), or nil when it may be (the same language, or too short to tell). A memory is
    /// kept in the words the user said it in.
    public static func mismatch(content: String, said: String) -> (content: String, said: String)? {
        guard let written = languages(of: content), let spoken = languages(of: said), written.isDisjoint(with: spoken) else { return nil }
        let name = { (codes: Set<String>) in codes.count == 1 ? Self.name(codes.first!) : codes.sorted().map(Self.name).joined(separator: " or ") }
        return (name(written), name(spoken))
    }

    static func cyrillic(_ text: String) -> String {
        var ukrainian = 0, russian = 0, ukrainianLetters = 0
        for scalar in text.lowercased().unicodeScalars {
            switch scalar {
            case "і", "ї", "є", "ґ":
                ukrainian += 2
                ukrainianLetters += 1
            case "ы", "э", "ъ", "ё": russian += 2
            default: break
            }
        }
        for word in TimeExpressions.tokens(text) {
            if ukrainianWords.contains(word) { ukrainian += 1 }
            if russianWords.contains(word) { russian += 1 }
        }
        if ukrainian != russian { return ukrainian > russian ? "uk" : "ru" }
        return ukrainianLetters == 0 ? "ru" : "uk"
    }

    /// Words of one of the two and not the other, from the function words search knows and the
    /// words people say about themselves.
    static let ukrainianWords: Set<String> = LanguageDetector.functionWords("uk").union([
        "мене", "мені", "звати", "кличте", "називайте", "тепер", "зараз", "дуже", "також", "тільки", "зовсім", "добре", "навіть",
        "завжди", "ніколи", "трохи", "багато", "де", "чому", "коли", "знову", "можу", "з", "речі", "будь", "ласка", "запам'ятай",
        "зауваж", "алергія", "працюю", "працювати", "прийняли", "влаштувався", "влаштувалася", "влаштувалась", "живемо", "мешкаю",
        "мешкаємо", "оселився", "оселилася", "оселилися", "переїхав", "переїхала", "переїхали", "перебрався", "перебралася",
        "перебралися", "вегетаріанець", "вегетаріанка", "веганка", "відмовився", "відмовилася", "відмовилась", "їм", "кинув",
        "кинула", "покинув", "покинула", "палити", "курити", "пити", "почав", "почала", "одружився", "одружилася", "одружена",
        "одружений", "заміжня", "вийшла", "заміж", "перебуваю", "народився", "народилася", "народилась", "народження", "обожнюю",
        "ненавиджу", "подобається", "подобаються", "терпіти", "любить", "мій", "моє", "наступного", "наступної", "наступний",
        "наступну", "минулого", "минулої", "тиждень", "тижня", "неділі", "вівторка", "середи", "суботи", "місяця", "року",
    ]).subtracting(sharedWords)
    static let russianWords: Set<String> = LanguageDetector.functionWords("ru").union([
        "меня", "мне", "зовут", "зовите", "называйте", "теперь", "сейчас", "очень", "тоже", "только", "совсем", "хорошо", "даже",
        "всегда", "никогда", "немного", "много", "где", "почему", "снова", "опять", "могу", "с", "кстати", "пожалуйста", "запомни",
        "учти", "имей", "виду", "аллергия", "работаю", "работать", "приняли", "устроился", "устроилась", "живём", "живем",
        "проживаю", "проживаем", "поселился", "поселилась", "поселились", "обосновался", "обосновалась", "переехал", "переехала",
        "переехали", "перебрался", "перебралась", "перебрались", "вегетарианец", "вегетарианка", "отказался", "отказалась",
        "мясо", "мяса", "ем", "бросил", "бросила", "курить", "пить", "начал", "начала", "женился", "замуж", "замужем", "женат",
        "нахожусь", "родился", "родилась", "рождения", "обожаю", "ненавижу", "нравится", "нравятся", "терпеть", "выношу", "любит",
        "мой", "моё", "следующий", "следующей", "следующую", "следующем", "прошлой", "прошлый", "прошлом", "неделе", "неделю",
        "недели", "воскресенья", "среды", "субботы", "месяце", "году",
    ]).subtracting(sharedWords)
    static let sharedWords: Set<String> = ["моя", "люблю", "забудь"]
}

/// Arabic text as kb's memory rules and time words read it: without the short-vowel marks
/// (harakat, shadda, sukun, the dagger alif) and the stretching tatweel, which a writer may or
/// may not add (`عمّان` and `عمان`, `مهندساً` and `مهندسا` are one word).
public enum ArabicText {
    public static func strippingMarks(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isMark) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.lazy.filter { !isMark($0) })
        return String(scalars)
    }

    /// `strippingMarks`, and each letter that is written in several forms in its commonest one:
    /// the hamza-carrying alifs (أ إ آ ٱ) as ا, alif maqsura (ى) as ي. For comparing words.
    public static func folded(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in strippingMarks(text).unicodeScalars {
            switch scalar {
            case "أ", "إ", "آ", "ٱ": scalars.append("ا")
            case "ى": scalars.append("ي")
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        (0x064B...0x065F).contains(scalar.value) || scalar.value == 0x0670 || scalar.value == 0x0640
    }

    /// A regular expression written with plain letters, made to match each of their forms: ا
    /// also matches أ إ آ ٱ, ي also ى, ه also ة (outside bracketed classes, which are left as
    /// written).
    static func pattern(_ pattern: String) -> String {
        var result = "", depth = 0, escaped = false
        for character in pattern {
            defer { escaped = character == "\\" && !escaped }
            if !escaped && character == "[" { depth += 1 }
            if !escaped && character == "]" { depth = max(0, depth - 1) }
            guard depth == 0 else { result.append(character); continue }
            switch character {
            case "ا", "أ", "إ", "آ": result += "[اأإآٱ]"
            case "ي", "ى": result += "[يى]"
            case "ه", "ة": result += "[هة]"
            default: result.append(character)
            }
        }
        return result
    }
}

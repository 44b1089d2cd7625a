public import Foundation

/// The time a question about memories names, read without a language model: "what did I tell
/// you last week?" asks for what was said in a window; "where did I live in March?" for what held
/// during one; "since I moved" starts a window at an event the memories know (`event`). Pure.
///
/// ```swift
/// let window = MemoryWindow.find(in: "what did I tell you last week?", at: now)   // told, 7 days
/// ```
public struct MemoryWindow: Sendable, Hashable {
    /// The first instant (nil: from the start).
    public var start: Date?
    /// The instant after the last (nil: until now).
    public var end: Date?
    /// Asks what was said then (tell, say, mention …), not what held then.
    public var told: Bool
    /// The words that named the time.
    public var words: String

    public init(start: Date?, end: Date?, told: Bool, words: String) {
        self.start = start
        self.end = end
        self.told = told
        self.words = words
    }

    /// The window a question names with a date ("last week", "in March", "since 2020", "until
    /// Sunday"; English, Ukrainian, Russian and Arabic), or nil.
    public static func find(in text: String, at now: Date) -> MemoryWindow? {
        guard let reference = TimeExpressions.find(in: text, at: now).first else { return nil }
        let told = tells(text)
        switch reference.kind {
        case .day, .span: return MemoryWindow(start: reference.start, end: reference.end, told: told, words: reference.words)
        case .since: return MemoryWindow(start: reference.start, end: nil, told: told, words: reference.words)
        case .until: return MemoryWindow(start: now, end: reference.end, told: told, words: reference.words)
        }
    }

    /// An event a window starts at — "since I moved", "since I started at Grammarly", "відколи я
    /// переїхала", "с тех пор как я переехал", "منذ أن انتقلت" — with the single-valued fact it
    /// changed when the words say which (`home`, `work`, `partner`, `smoking`, `diet`), else the
    /// words to look for.
    public static func event(in text: String) -> (words: String, fact: String?, told: Bool)? {
        let whole = NSRange(text.startIndex..., in: text)
        guard let match = eventPattern.firstMatch(in: text, range: whole), let range = Range(match.range(at: 1), in: text) else { return nil }
        let words = String(text[range]).trimmingCharacters(in: CharacterSet.whitespaces.union(.punctuationCharacters))
        guard !words.isEmpty else { return nil }
        let lowered = words.lowercased()
        let fact = facts.first { _, stems in stems.contains { lowered.contains($0) } }?.key
        return (words, fact, tells(text))
    }

    static let eventPattern = try! NSRegularExpression(
        pattern: "(?:\\bsince\\s+(?:i|we)|відколи\\s+(?:я|ми)|з\\s+тих\\s+пір,?\\s+як\\s+(?:я|ми)|с\\s+тех\\s+пор,?\\s+как\\s+(?:я|мы)"
            + "|منذ\\s+[أاإ]ن(?:ني)?)\\s+(.+)$", options: [.caseInsensitive])

    static let facts: [String: [String]] = [
        "home": ["moved", "relocat", "settled", "переїха", "оселил", "перебрал", "переех", "поселил", "انتقل", "استقر"],
        "work": ["hired", "new job", "started working", "started at", "joined", "changed jobs", "працюю", "влаштува", "на роботу",
                 "работаю", "устроил", "توظف", "وظيفة", "اعمل", "أعمل"],
        "partner": ["married", "одружил", "вийшла заміж", "женил", "вышла замуж", "تزوج"],
        "smoking": ["smoking", "курити", "палити", "курить", "التدخين"],
        "diet": ["vegan", "vegetarian", "meat", "веган", "вегетаріан", "м'яс", "вегетариан", "мяс", "نباتي", "اللحم"],
    ]

    static let tellingWords: Set<String> = [
        "tell", "told", "say", "said", "mention", "mentioned", "talk", "talked", "wrote", "write", "share", "shared",
        "казав", "казала", "сказав", "сказала", "говорив", "говорила", "розповідав", "розповідала", "розповів", "розповіла",
        "згадував", "згадувала", "писав", "писала",
        "говорил", "говорила", "сказал", "сказала", "рассказывал", "рассказывала", "рассказал", "рассказала", "упоминал", "упоминала",
        "писал", "писала", "قلت", "ذكرت", "أخبرتك", "اخبرتك", "حكيت",
    ]

    static func tells(_ text: String) -> Bool {
        TimeExpressions.tokens(text).contains { tellingWords.contains($0) }
    }
}

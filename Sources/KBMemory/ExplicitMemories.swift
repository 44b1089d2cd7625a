public import Foundation
public import KBCore

/// Memories a user states or asks for in plain words, found without a language model. Only the
/// user's own turns are read (an assistant's turns never become memories), one sentence at a
/// time, by the rules of the sentence's language — English, Ukrainian, Russian or Arabic
/// (`MemoryLanguage`; one language's sentence is never read by another's rules) — and a memory is
/// worded in that language, tagged alike in all four, so that a move said in Arabic supersedes a
/// home said in English. The English patterns (case-insensitive; a few of each shown, with the
/// Ukrainian; docs/memories.md lists every language's):
///
/// | the user says | memory | tags | a new one replaces |
/// |---|---|---|---|
/// | remember (that) X · please note (that) X · keep in mind (that) X · запам'ятай, що X | X | | |
/// | forget (that / about) X | (forgets the memory that matches X, read by these rules: "forget that I live in Paris" → Lives in Paris.) | | |
/// | I'm / I am allergic to X · у мене алергія на X | Allergic to X. | health, allergy | |
/// | my name is X · call me X · I go by X these days · мене звати X | Is called X. | name | the name |
/// | I live in X · I've moved to X · we've settled in X · I'm based in X · я живу у X · ми переїхали до X | Lives in X. | home | the home |
/// | I'm vegetarian / vegan · I gave up meat · I went vegan · я вегетаріанка · я відмовився від м'яса | Is vegetarian. | diet | the diet |
/// | my birthday is X · I was born on / in X | Born X. | birthday | the birthday |
/// | I work as / at / for X · I got hired at X · I started working at X · я працюю в X · мене взяли на роботу в X | Works at X. | work | the work |
/// | I quit smoking · I started smoking again · я кинув палити | Quit smoking. | habit | smoking |
/// | I got married to X · I'm married to X | Is married to X. | family | the partner |
/// | I'm in X through / until T · я в X до T | Is in X (until T). | whereabouts | where they are |
/// | my X is next Thursday · I have an X tomorrow · у мене X наступного четверга | X (next thursday: 2026-12-03). | plan | |
/// | I prefer / like / love / enjoy X | Likes X. | preference | |
/// | I don't like X · I dislike X · I hate X | Dislikes X. | preference | |
///
/// Dates in the sentence (`TimeExpressions`, read against the turn's `time`, else now) give the
/// memory its valid time and keep their words: "since March", "last week", "in March" (past) set
/// `validFrom`; "through Sunday", "until Friday" and a future day or span ("next Thursday", "in
/// two weeks") set `expiresAt`. Without one, `validFrom` is the turn's time. The `whereabouts` and
/// `plan` patterns need a date.
///
/// A sentence that joins several facts ("I live in Paris and my name is Ada", "اسمي فاطمة
/// وأعيش في عمّان", commas, and, і, и, و) gives a memory for each. Words that only pad a sentence
/// ("by the way", "btw", "please", "actually", "now", "these days", "кстати", "بالمناسبة") are dropped. What is found is a candidate: `KnowledgeBase.extractMemories` checks it
/// against the user's memories.
///
/// ```swift
/// ExplicitMemories.find(in: [ConversationTurn(.user, "I'm allergic to peanuts, by the way.")])
/// // [Allergic to peanuts. (tags: health, allergy)]
/// ```
public enum ExplicitMemories {
    public struct Found: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable { case remember, forget }
        public var kind: Kind
        public var content: String
        public var tags: [Tag]
        /// A fact of which the user has one (name, home, diet, birthday, work, …): a new one
        /// replaces the memory tagged `fact:KEY`.
        public var fact: String?
        /// The sentence it was found in.
        public var sentence: String
        /// Valid time, from the dates the sentence names (else the turn's time).
        public var validFrom: Date?
        public var expiresAt: Date?
        /// The words that named the time, as said.
        public var timeWords: String?
        /// The language the sentence was said in, whose rules read it (`MemoryLanguage.codes`).
        public var language: String = "en"
    }

    /// What the user's turns state or ask for, in order; the same content once. Relative dates
    /// are read against each turn's `time`, else `now`.
    public static func find(in turns: [ConversationTurn], now: Date = Date()) -> [Found] {
        let said = turns.filter { $0.role == .user }
        let feminine = said.contains { speaksAsAWoman(ArabicText.strippingMarks($0.content)) }
        var found: [Found] = []
        for turn in said {
            for sentence in sentences(turn.content) {
                for match in facts(in: sentence, at: turn.time ?? now, turnTime: turn.time, feminine: feminine)
                where !found.contains(where: { $0.content == match.content && $0.kind == match.kind }) {
                    found.append(match)
                }
            }
        }
        return found
    }

    /// @unchecked Sendable: an `NSRegularExpression` is immutable, and matching with one is safe
    /// from any thread (Foundation documents it so).
    struct Rule: @unchecked Sendable {
        let expression: NSRegularExpression
        let kind: Found.Kind
        let tags: [Tag]
        let fact: String?
        /// Only with a date in the sentence (whereabouts, plans).
        let needsTime: Bool
        /// The memory, from what the sentence said.
        let wording: @Sendable (Said) -> String

        /// A rule whose memory is worded from the captured text alone.
        init(_ pattern: String, _ kind: Found.Kind = .remember, tags: [Tag] = [], fact: String? = nil, needsTime: Bool = false,
             content: @escaping @Sendable (String) -> String) {
            self.init(pattern, kind, tags: tags, fact: fact, needsTime: needsTime, wording: { content($0.text) })
        }

        init(_ pattern: String, _ kind: Found.Kind, tags: [Tag], fact: String?, needsTime: Bool, wording: @escaping @Sendable (Said) -> String) {
            expression = try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            self.kind = kind
            self.tags = tags
            self.fact = fact
            self.needsTime = needsTime
            self.wording = wording
        }

        /// A rule whose memory is worded from what was said: the verb the user used (a group
        /// named `verb`), and whether the speaker spoke of themselves as a woman.
        static func worded(_ pattern: String, _ kind: Found.Kind = .remember, tags: [Tag] = [], fact: String? = nil, needsTime: Bool = false,
                           _ wording: @escaping @Sendable (Said) -> String) -> Rule {
            Rule(pattern, kind, tags: tags, fact: fact, needsTime: needsTime, wording: wording)
        }
    }

    /// What a rule's pattern found in a clause.
    struct Said: Sendable {
        /// The last group the pattern captured, without padding and without the words of a date.
        var text: String
        /// The group named `verb`, as said (lower case).
        var verb: String?
        /// Whether the user spoke of themselves in the feminine (Arabic predicates such as
        /// `أنا مهندسة`): Arabic memories are worded in the third person of that gender.
        var feminine: Bool

        /// `verb` with a capital, the captured text after it, and a full stop: "Переехала в Казань."
        var verbAndText: String { sentenceCase((verb ?? "") + " " + text) }
        /// The masculine or the feminine wording.
        func gendered(_ masculine: String, _ feminine: String) -> String { self.feminine ? feminine : masculine }
    }

    /// One language's rules, what joins two facts in a sentence, and the word a clause after a
    /// join may leave out ("I live in Kyiv and [I] work at MacPaw").
    struct Language: Sendable {
        let rules: [Rule]
        let joints: Pattern
        let subject: String?
    }

    /// An immutable regular expression, safe to share (see `Rule`).
    struct Pattern: @unchecked Sendable {
        let expression: NSRegularExpression
        init(_ pattern: String) { expression = try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) }
    }

    static let languages: [String: Language] = [
        "en": Language(rules: english, joints: Pattern("\\s*,?\\s+(?:and|but)\\s+|\\s*,\\s*"), subject: "I"),
        "uk": Language(rules: ukrainian, joints: Pattern("\\s*,?\\s+(?:і|й|та|а|але)\\s+|\\s*,\\s*"), subject: "я"),
        "ru": Language(rules: russian, joints: Pattern("\\s*,?\\s+(?:и|а|но)\\s+|\\s*,\\s*"), subject: "я"),
        "ar": Language(rules: arabic, joints: Pattern("\\s*[،,]\\s*(?:و(?=\\S{2,}))?|\\s+(?:ثم|لكن|ولكن)\\s+|\\s+و(?=\\S{2,})"), subject: nil),
    ]

    /// The facts of one sentence, by the rules of the sentence's language (`MemoryLanguage`).
    /// A sentence that joins several facts ("I live in Paris and my name is Ada", "اسمي فاطمة
    /// وأعيش في عمّان") gives each: it is cut at a join when what follows is a fact on its own
    /// (or with the subject the language may leave out) and what comes before gives one too;
    /// otherwise it is one fact ("I'm allergic to peanuts and tree nuts").
    static func facts(in sentence: String, at time: Date, turnTime: Date?, feminine: Bool) -> [Found] {
        guard let code = MemoryLanguage.of(sentence), let language = languages[code] else { return [] }
        let text = code == "ar" ? ArabicText.strippingMarks(sentence) : sentence
        let joints = language.joints.expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).prefix(12)
            .compactMap { Range($0.range, in: text) }.filter { $0.lowerBound > text.startIndex && $0.upperBound < text.endIndex }
        func clause(_ words: Substring) -> Found? {
            let words = String(words)
            return match(words, rules: language.rules, at: time, turnTime: turnTime, feminine: feminine)
                ?? language.subject.flatMap { match($0 + " " + words, rules: language.rules, at: time, turnTime: turnTime, feminine: feminine) }
        }
        // facts(before: k): the facts of the text before joint k (k == joints.count: the whole text).
        var memo: [Int: [Found]] = [:]
        func facts(before k: Int) -> [Found] {
            if let known = memo[k] { return known }
            let end = k == joints.count ? text.endIndex : joints[k].lowerBound
            var result: [Found] = []
            for j in (0..<k).reversed() {
                guard let last = clause(text[joints[j].upperBound..<end]) else { continue }
                let first = facts(before: j)
                if !first.isEmpty {
                    result = first + [last]
                    break
                }
            }
            if result.isEmpty, let whole = clause(text[..<end]) { result = [whole] }
            memo[k] = result
            return result
        }
        return facts(before: joints.count).map { found in
            var found = found
            found.sentence = sentence
            found.language = code
            return found
        }
    }

    /// The memory a clause states, by `rules`, said at `time` (the turn's `turnTime`, when it has one).
    static func match(_ clause: String, rules: [Rule], at time: Date = Date(), turnTime: Date? = nil, feminine: Bool = false) -> Found? {
        let clause = withoutLeadingPadding(clause)
        let whole = NSRange(clause.startIndex..., in: clause)
        for rule in rules {
            guard let result = rule.expression.firstMatch(in: clause, range: whole), result.numberOfRanges > 1,
                  let group = (1..<result.numberOfRanges).last(where: { result.range(at: $0).location != NSNotFound }),
                  let range = Range(result.range(at: group), in: clause) else { continue }
            var captured = cleaned(String(clause[range]))
            guard captured.count >= 2, captured.count <= 300 else { continue }
            let verb = Range(result.range(withName: "verb"), in: clause).map { clause[$0].lowercased() }
            if rule.kind == .forget, var stated = match(captured, rules: rules, at: time, turnTime: turnTime, feminine: feminine), stated.kind == .remember {
                // "forget that I live in Paris" is about the memory "Lives in Paris."
                stated.kind = .forget
                stated.sentence = clause
                return stated
            }
            let reference = TimeExpressions.find(in: clause, at: time).first
            if rule.needsTime && reference == nil { continue }
            var found = Found(kind: rule.kind, content: "", tags: rule.tags + (rule.fact.map { [Tag("fact:" + $0)] } ?? []),
                              fact: rule.fact, sentence: clause, validFrom: turnTime)
            if let reference, rule.kind == .remember {
                let without = cleaned(removing(reference.words, from: captured))
                if without.count >= 2 { captured = without }
                found.timeWords = reference.words
                let stated = describe(reference, at: time)
                found.validFrom = stated.validFrom ?? turnTime
                found.expiresAt = stated.expiresAt
                found.content = annotated(rule.wording(Said(text: captured, verb: verb, feminine: feminine)), "\(reference.words): \(stated.dates)")
            } else {
                found.content = rule.wording(Said(text: captured, verb: verb, feminine: feminine))
            }
            return found
        }
        return nil
    }

    /// What a time reference says of a memory stated at `time`: since or a past day or span —
    /// it holds from then; until, or a day or span not yet over — it matters until its end.
    public static func describe(_ reference: TimeReference, at time: Date) -> (validFrom: Date?, expiresAt: Date?, dates: String) {
        let day = { (date: Date) in String(MemoryArchive.format(date).prefix(10)) }
        let lastDay = { (end: Date) in day(end.addingTimeInterval(-1)) }
        switch reference.kind {
        case .since:
            return (reference.start, nil, "since " + day(reference.start!))
        case .until:
            return (nil, reference.end, "until " + lastDay(reference.end!))
        case .day, .span:
            let (start, end) = (reference.start!, reference.end!)
            let dates = reference.kind == .day || lastDay(end) == day(start) ? day(start) : day(start) + " – " + lastDay(end)
            if end <= time { return (start, nil, dates) }
            return (nil, end, dates)
        }
    }

    /// `text` with `note` in brackets before its final full stop.
    static func annotated(_ text: String, _ note: String) -> String {
        let body = text.hasSuffix(".") ? String(text.dropLast()) : text
        return "\(body) (\(note))."
    }

    /// `text` without the words of a time reference (as `TimeExpressions` folds them).
    static func removing(_ words: String, from text: String) -> String {
        let pattern = words.split(separator: " ").map { word in
            NSRegularExpression.escapedPattern(for: String(word)).replacingOccurrences(of: "'", with: "['’ʼ]")
        }.joined(separator: "[^\\p{L}\\p{N}'’ʼ]+")
        guard let expression = try? NSRegularExpression(pattern: "(?:^|(?<=[^\\p{L}\\p{N}]))" + pattern + "(?=$|[^\\p{L}\\p{N}])", options: [.caseInsensitive]) else {
            return text
        }
        let stripped = expression.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "")
        return stripped.replacingOccurrences(of: "  ", with: " ").trimmingCharacters(in: .whitespaces)
    }

    /// A turn's sentences: split at . ! ? ; (and Arabic's ؟ ؛) and line breaks, trimmed.
    static func sentences(_ text: String) -> [String] {
        text.split(whereSeparator: { ".!?;؟؛\n".contains($0) }).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// Words a clause may start with that say nothing of the fact ("oh, and", "кстати", "بالمناسبة").
    static let leading = "(?:oh|well|also|and|so|btw|by the way|now|до речі|а також|також|і|кстати|а ещё|а еще|также|и|а|بالمناسبة|ايضا|كذلك|ثم)"

    static let padding = try! NSRegularExpression(
        pattern: ArabicText.pattern(
            "(?:[,،]?\\s*(?:by the way|btw|please|actually|though|too|as well|now|these days|nowadays|at the moment|for good|тепер|зараз|до речі"
                + "|теперь|сейчас|кстати|пожалуйста|بالمناسبة|من فضلك|رجاء|الان|حاليا|ايضا|كذلك))+\\s*$"
                + "|^\(leading)[,،\\s]+"),
        options: [.caseInsensitive])

    static let leadingPadding = try! NSRegularExpression(pattern: ArabicText.pattern("^\(leading)[,،\\s]+"), options: [.caseInsensitive])

    /// A clause without the words it starts with that only pad it.
    static func withoutLeadingPadding(_ clause: String) -> String {
        var clause = clause.trimmingCharacters(in: .whitespacesAndNewlines)
        while let found = leadingPadding.firstMatch(in: clause, range: NSRange(clause.startIndex..., in: clause)), found.range.length > 0,
              found.range.length < (clause as NSString).length, let range = Range(found.range, in: clause) {
            clause = String(clause[range.upperBound...])
        }
        return clause
    }

    /// Whether an Arabic speaker speaks of themselves in the feminine: `أنا مهندسة`, `أعمل
    /// طبيبة`, `متزوجة`, `زوجي` (my husband)…
    static func speaksAsAWoman(_ text: String) -> Bool {
        guard LanguageDetector.dominantScript(of: text) == .arabic else { return false }
        return feminine.expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    static let feminine = Pattern(ArabicText.pattern(
        "(?:^|\\s)(?:و|ف)?(?:انا|اعمل|اشتغل|اصبحت|صرت|لست|العمل|توظفت|تعينت)\\s+(?:الان\\s+|حاليا\\s+)?(?:ك)?(?!(?:في|لدى|لدي|عند|مع|من|على|الى|ب\\S*)(?:\\s|$))")
            // A feminine noun or adjective ends in ta marbuta (ة, never read as ه here: `أحبه` is "I love him").
            + "\\S{2,}ة(?=\\s|$|[.,،!؟])|" + ArabicText.pattern("(?:^|\\s)(?:و|ف)?(?:زوجي|متزوجة|مولودة|مقيمة|ساكنة|حساسة|نباتية|موجودة|مسافرة|حامل)(?=\\s|$|[.,،!؟])"))

    /// The captured words without padding, trailing punctuation or quotes.
    static func cleaned(_ text: String) -> String {
        var text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        for _ in 0..<2 {
            text = padding.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "")
            text = text.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(.punctuationCharacters).subtracting(CharacterSet(charactersIn: "%)")))
        }
        return text
    }

    /// The text with its first letter in upper case and a full stop.
    static func sentenceCase(_ text: String) -> String {
        (text.prefix(1).uppercased() + text.dropFirst()) + "."
    }
}

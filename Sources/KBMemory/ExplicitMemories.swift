public import Foundation
public import KBCore

/// Memories a user states or asks for in plain words, found without a language model. Only the
/// user's own turns are read (an assistant's turns never become memories), one sentence at a
/// time, with these patterns (English and Ukrainian, case-insensitive; a few of each shown):
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
/// Words that only pad a sentence ("by the way", "btw", "please", "actually", "now", "these
/// days") are dropped. What is found is a candidate: `KnowledgeBase.extractMemories` checks it
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
    }

    /// What the user's turns state or ask for, in order; the same content once. Relative dates
    /// are read against each turn's `time`, else `now`.
    public static func find(in turns: [ConversationTurn], now: Date = Date()) -> [Found] {
        var found: [Found] = []
        for turn in turns where turn.role == .user {
            for sentence in sentences(turn.content) {
                guard let match = match(sentence, at: turn.time ?? now, turnTime: turn.time),
                      !found.contains(where: { $0.content == match.content && $0.kind == match.kind }) else { continue }
                found.append(match)
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
        /// The memory, from the captured text.
        let content: @Sendable (String) -> String

        init(_ pattern: String, _ kind: Found.Kind = .remember, tags: [Tag] = [], fact: String? = nil, needsTime: Bool = false,
             content: @escaping @Sendable (String) -> String) {
            expression = try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            self.kind = kind
            self.tags = tags
            self.fact = fact
            self.needsTime = needsTime
            self.content = content
        }
    }

    /// Every language's rules, in the order they are tried.
    static let rules: [Rule] = english + ukrainian

    /// The memory a sentence states, said at `time` (the turn's `turnTime`, when it has one).
    static func match(_ sentence: String, at time: Date = Date(), turnTime: Date? = nil) -> Found? {
        let whole = NSRange(sentence.startIndex..., in: sentence)
        for rule in rules {
            guard let result = rule.expression.firstMatch(in: sentence, range: whole), result.numberOfRanges > 1,
                  let range = Range(result.range(at: 1), in: sentence) else { continue }
            var captured = cleaned(String(sentence[range]))
            guard captured.count >= 2, captured.count <= 300 else { continue }
            if rule.kind == .forget, var stated = match(captured, at: time, turnTime: turnTime), stated.kind == .remember {
                // "forget that I live in Paris" is about the memory "Lives in Paris."
                stated.kind = .forget
                stated.sentence = sentence
                return stated
            }
            let reference = TimeExpressions.find(in: sentence, at: time).first
            if rule.needsTime && reference == nil { continue }
            var found = Found(kind: rule.kind, content: "", tags: rule.tags + (rule.fact.map { [Tag("fact:" + $0)] } ?? []),
                              fact: rule.fact, sentence: sentence, validFrom: turnTime)
            if let reference, rule.kind == .remember {
                let without = cleaned(removing(reference.words, from: captured))
                if without.count >= 2 { captured = without }
                found.timeWords = reference.words
                let stated = describe(reference, at: time)
                found.validFrom = stated.validFrom ?? turnTime
                found.expiresAt = stated.expiresAt
                found.content = annotated(rule.content(captured), "\(reference.words): \(stated.dates)")
            } else {
                found.content = rule.content(captured)
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

    /// A turn's sentences: split at . ! ? ; and line breaks, trimmed.
    static func sentences(_ text: String) -> [String] {
        text.split(whereSeparator: { ".!?;\n".contains($0) }).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    static let padding = try! NSRegularExpression(
        pattern: "(?:,?\\s*(?:by the way|btw|please|actually|though|too|as well|now|these days|nowadays|at the moment|for good|тепер|зараз|до речі))+\\s*$"
            + "|^(?:oh|well|also|and|so|btw|by the way|now|до речі)[,\\s]+",
        options: [.caseInsensitive])

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

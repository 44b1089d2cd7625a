import Foundation
public import KBCore

/// Memories a user states or asks for in plain words, found without a language model. Only the
/// user's own turns are read (an assistant's turns never become memories), one sentence at a
/// time, with these patterns (English, case-insensitive):
///
/// | the user says | memory | tags | a new one replaces |
/// |---|---|---|---|
/// | remember (that) X · please note (that) X · keep in mind (that) X · don't forget (that) X | X | | |
/// | forget (that / about) X | (forgets the memory that matches X, read by these rules: "forget that I live in Paris" → Lives in Paris.) | | |
/// | I'm / I am allergic to X | Allergic to X. | health, allergy | |
/// | my name is X · call me X | Is called X. | name | the name |
/// | I live in X · I've moved to X · I moved to X | Lives in X. | home | the home |
/// | I'm / I am vegetarian / vegan / pescatarian | Is vegetarian. | diet | the diet |
/// | my birthday is X · I was born on / in X | Born X. | birthday | the birthday |
/// | I work as / at / for X | Works as X. | work | the work |
/// | I prefer / like / love / enjoy X | Likes X. | preference | |
/// | I don't like X · I dislike X · I hate X | Dislikes X. | preference | |
///
/// Words that only pad a sentence ("by the way", "btw", "please", "actually") are dropped. What is
/// found is a candidate: `KnowledgeBase.extractMemories` checks it against the user's memories.
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
        /// A fact of which the user has one (name, home, diet, birthday, work): a new one
        /// replaces the memory tagged `fact:KEY`.
        public var fact: String?
        /// The sentence it was found in.
        public var sentence: String
    }

    /// What the user's turns state or ask for, in order; the same content once.
    public static func find(in turns: [ConversationTurn]) -> [Found] {
        var found: [Found] = []
        for turn in turns where turn.role == .user {
            for sentence in sentences(turn.content) {
                guard let match = match(sentence), !found.contains(where: { $0.content == match.content && $0.kind == match.kind }) else { continue }
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
        /// The memory, from the captured text.
        let content: @Sendable (String) -> String

        init(_ pattern: String, _ kind: Found.Kind = .remember, tags: [Tag] = [], fact: String? = nil, content: @escaping @Sendable (String) -> String) {
            expression = try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            self.kind = kind
            self.tags = tags
            self.fact = fact
            self.content = content
        }
    }

    static let am = "(?:i'm|i’m|i am|im)"
    static let rules: [Rule] = [
        Rule("^(?:please\\s+)?(?:remember|note|keep in mind|don't forget|don’t forget|do not forget)\\s+(?:that\\s+)?(.+)$") { sentenceCase($0) },
        Rule("^(?:please\\s+)?forget\\s+(?:that\\s+|about\\s+)?(.+)$", .forget) { sentenceCase($0) },
        Rule("\\b\(am)\\s+(?:very\\s+|severely\\s+|also\\s+)?allergic\\s+to\\s+(.+)$", tags: ["health", "allergy"]) { "Allergic to \($0)." },
        Rule("\\b(?:my name is|call me)\\s+(.+)$", tags: ["name"], fact: "name") { "Is called \($0)." },
        Rule("\\b(?:i live in|\(am) living in|i(?:'ve|’ve| have)? moved to)\\s+(.+)$", tags: ["home"], fact: "home") { "Lives in \($0)." },
        Rule("\\b\(am)\\s+(?:a\\s+)?(vegetarian|vegan|pescatarian)\\b", tags: ["diet"], fact: "diet") { "Is \($0.lowercased())." },
        Rule("\\b(?:my birthday is|i was born)\\s+(?:on\\s+|in\\s+)?(.+)$", tags: ["birthday"], fact: "birthday") { "Born \($0)." },
        Rule("\\bi work\\s+((?:as|at|for)\\s+.+)$", tags: ["work"], fact: "work") { "Works \($0)." },
        Rule("\\bi (?:don't|don’t|do not) (?:like|enjoy)\\s+(.+)$", tags: ["preference"]) { "Dislikes \($0)." },
        Rule("\\bi (?:dislike|hate|can't stand|can’t stand)\\s+(.+)$", tags: ["preference"]) { "Dislikes \($0)." },
        Rule("\\bi (?:really\\s+)?(?:prefer|like|love|enjoy)\\s+(.+)$", tags: ["preference"]) { "Likes \($0)." },
    ]

    static func match(_ sentence: String) -> Found? {
        let whole = NSRange(sentence.startIndex..., in: sentence)
        for rule in rules {
            guard let result = rule.expression.firstMatch(in: sentence, range: whole), result.numberOfRanges > 1,
                  let range = Range(result.range(at: 1), in: sentence) else { continue }
            let captured = cleaned(String(sentence[range]))
            guard captured.count >= 2, captured.count <= 300 else { continue }
            if rule.kind == .forget, var stated = match(captured), stated.kind == .remember {
                // "forget that I live in Paris" is about the memory "Lives in Paris."
                stated.kind = .forget
                stated.sentence = sentence
                return stated
            }
            return Found(kind: rule.kind, content: rule.content(captured), tags: rule.tags + (rule.fact.map { [Tag("fact:" + $0)] } ?? []),
                         fact: rule.fact, sentence: sentence)
        }
        return nil
    }

    /// A turn's sentences: split at . ! ? ; and line breaks, trimmed.
    static func sentences(_ text: String) -> [String] {
        text.split(whereSeparator: { ".!?;\n".contains($0) }).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    static let padding = try! NSRegularExpression(
        pattern: "(?:,?\\s*(?:by the way|btw|please|actually|though|too|as well))+\\s*$|^(?:oh|well|also|and|so|btw|by the way)[,\\s]+",
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

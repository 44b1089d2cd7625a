import Foundation

/// kb's memory rules for English (see `ExplicitMemories` for what each kind of sentence becomes).
extension ExplicitMemories {
    static let am = "(?:i'm|i’m|i am|im)"
    static let have = "(?:'ve|’ve| have)?"
    static let soon = "(?:just\\s+|recently\\s+|finally\\s+|now\\s+|already\\s+)?"
    static let english: [Rule] = [
        Rule("^(?:please\\s+)?(?:remember|note|keep in mind|don't forget|don’t forget|do not forget)\\s+(?:that\\s+)?(.+)$") { sentenceCase($0) },
        Rule("^(?:please\\s+)?forget\\s+(?:that\\s+|about\\s+)?(.+)$", .forget) { sentenceCase($0) },
        Rule("\\b\(am)\\s+(?:very\\s+|severely\\s+|also\\s+)?allergic\\s+to\\s+(.+)$", tags: ["health", "allergy"]) { "Allergic to \($0)." },
        Rule("\\b(?:my (?:new )?name is|call me|i go by|people call me|everyone calls me|i(?:'ve|’ve| have)? changed my name to)\\s+(.+)$",
             tags: ["name"], fact: "name") { "Is called \($0)." },
        Rule("\\b(?:(?:i|we) live in|(?:i|we)(?:'ve|’ve| have) (?:been\\s+)?liv(?:ed|ing) in|(?:i|we)(?:'re|’re| are) living in|\(am) living in|(?:i|we)\(have)\\s+\(soon)(?:moved|relocated)\\s+(?:to|into)"
             + "|(?:i|we)\(have)\\s+\(soon)settled(?:\\s+down)?\\s+in|\(am)\\s+(?:now\\s+)?based\\s+in|my (?:new )?(?:home|place|flat|apartment|house) is in|home is now)\\s+(.+)$",
             tags: ["home"], fact: "home") { "Lives in \($0)." },
        Rule("\\b\(am)\\s+(?:now\\s+|a\\s+|now a\\s+)?(vegetarian|vegan|pescatarian)\\b", tags: ["diet"], fact: "diet") { "Is \($0.lowercased())." },
        Rule("\\bi\\s+(?:went|became|have become|'ve become|’ve become|turned)\\s+(vegetarian|vegan|pescatarian)\\b", tags: ["diet"], fact: "diet") {
            "Is \($0.lowercased())."
        },
        Rule("\\bi\(have)\\s+(?:gave up|given up|stopped eating|quit eating|no longer eat|don't eat|don’t eat)\\s+((?:red\\s+)?meat)\\b",
             tags: ["diet"], fact: "diet") { _ in "Is vegetarian." },
        Rule("\\b\(am) no longer (?:a\\s+)?(vegetarian|vegan)\\b", tags: ["diet"], fact: "diet") { _ in "Eats meat." },
        Rule("\\bi (?:eat|started eating|am eating|'m eating|’m eating) (meat) again\\b", tags: ["diet"], fact: "diet") { _ in "Eats meat." },
        Rule("\\b(?:my birthday is|i was born)\\s+(?:on\\s+|in\\s+)?(.+)$", tags: ["birthday"], fact: "birthday") { "Born \($0)." },
        Rule("\\bi\\s+(?:now\\s+)?(?:work|am working|'m working|’m working|started working|(?:'ve|’ve|have) started working)\\s+((?:as|at|for)\\s+.+)$",
             tags: ["work"], fact: "work") { "Works \($0)." },
        Rule("\\bi\(have)\\s+(?:just\\s+)?(?:got|gotten|been)\\s+(?:hired|taken on|a job|a new job|a position)\\s+((?:as|at|by|with|for)\\s+.+)$",
             tags: ["work"], fact: "work") { "Works " + employer($0) + "." },
        Rule("\\bi\\s+(?:took|have taken|'ve taken|’ve taken|started|accepted)\\s+(?:a\\s+|the\\s+)?(?:new\\s+)?(?:job|position|role)\\s+((?:as|at|with|for)\\s+.+)$",
             tags: ["work"], fact: "work") { "Works " + employer($0) + "." },
        Rule("\\b\(am)\\s+(?:now\\s+)?employed\\s+((?:at|by)\\s+.+)$", tags: ["work"], fact: "work") { "Works " + employer($0) + "." },
        Rule("\\bi\(have)\\s+(?:quit|stopped|given up|gave up)\\s+(smoking|cigarettes|vaping)\\b", tags: ["habit"], fact: "smoking") { _ in "Quit smoking." },
        Rule("\\bi\(have)\\s+(?:started|began|begun)\\s+(smoking|vaping)\\s+again\\b", tags: ["habit"], fact: "smoking") { _ in "Smokes again." },
        Rule("\\bi\(have)\\s+(?:quit|stopped|given up|gave up)\\s+(drinking|alcohol)\\b", tags: ["habit"], fact: "drinking") { _ in "Quit drinking." },
        Rule("\\b(?:i\(have)\\s+(?:just\\s+)?got married to|\(am)\\s+(?:now\\s+)?married to)\\s+(.+)$", tags: ["family"], fact: "partner") { "Is married to \($0)." },
        Rule("\\b\(am)\\s+(?:staying\\s+|travell?ing\\s+|away\\s+|currently\\s+)?in\\s+(.+)$", tags: ["whereabouts"], fact: "whereabouts",
             needsTime: true) { "Is in \($0)." },
        Rule("\\bmy\\s+((?:[\\p{L}'’-]+\\s+){0,3}?(?:is|are)\\s+(?:on\\s+|at\\s+)?(?:next|this|tomorrow|today|in|on|the day)\\b.*)$", tags: ["plan"],
             needsTime: true) { plan($0) },
        Rule("\\bi(?:'ve|’ve| have)(?:\\s+got)?\\s+(an?\\s+(?:[\\p{L}'’-]+\\s+){1,3}?(?:next|this|tomorrow|today|in|on|the day)\\b.*)$", tags: ["plan"],
             needsTime: true) { "Has \($0)." },
        Rule("\\bi (?:don't|don’t|do not) (?:like|enjoy)\\s+(.+)$", tags: ["preference"]) { "Dislikes \($0)." },
        Rule("\\bi (?:dislike|hate|can't stand|can’t stand)\\s+(.+)$", tags: ["preference"]) { "Dislikes \($0)." },
        Rule("\\bi (?:really\\s+)?(?:prefer|like|love|enjoy)\\s+(.+)$", tags: ["preference"]) { "Likes \($0)." },

    ]

    /// "at Google" from "by Google", "with Google" (hired by, a job with).
    static func employer(_ text: String) -> String {
        for lead in ["by ", "with "] where text.lowercased().hasPrefix(lead) { return "at " + text.dropFirst(lead.count) }
        return text
    }

    /// "Interview" from "interview is", the rest of the sentence being its date.
    static func plan(_ text: String) -> String {
        let words = text.split(separator: " ")
        guard let verb = words.firstIndex(where: { $0.lowercased() == "is" || $0.lowercased() == "are" }) else { return sentenceCase(text) }
        let rest = words[(verb + 1)...].filter { !["on", "at"].contains($0.lowercased()) }
        return sentenceCase((words[..<verb] + rest).joined(separator: " "))
    }
}

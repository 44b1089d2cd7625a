import Foundation
public import KBCore

/// Checks and normal forms for what goes into a memory. Pure.
public enum MemoryRules {
    /// Content with surrounding whitespace trimmed and every inner run of whitespace made one
    /// space: two memories with the same key in a scope are the same memory.
    ///
    /// ```swift
    /// MemoryRules.contentKey("  prefers\n metric   units ")   // "prefers metric units"
    /// ```
    public static func contentKey(_ content: String) -> String {
        content.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The content as stored (trimmed), after checking it is neither empty nor too large.
    public static func validContent(_ content: String, options: MemoryOptions) throws -> String {
        let trimmed = content.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw KBError(.invalidArgument, "A memory needs some content; the text given is empty.")
        }
        let bytes = trimmed.utf8.count
        guard bytes <= options.maxContentBytes else {
            throw KBError(.tooLarge,
                "The memory is \(bytes) bytes; the limit is \(options.maxContentBytes). "
              + "Store a shorter fact (ingest long documents as notes).")
        }
        return trimmed
    }

    /// A title as stored: trimmed, nil when empty; at most 300 characters.
    public static func validTitle(_ title: String?) throws -> String? {
        guard let trimmed = title?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        guard trimmed.count <= 300 else {
            throw KBError(.tooLarge, "The title is \(trimmed.count) characters; the limit is 300. Put the details in the content.")
        }
        guard !trimmed.contains(where: \.isNewline) else {
            throw KBError(.invalidArgument, "A memory title is one line; put the rest in the content.")
        }
        return trimmed
    }

    /// Tags as stored: normalised, without empties and repeats, sorted.
    public static func validTags(_ tags: [Tag]) throws -> [Tag] {
        if let empty = tags.first(where: \.isEmpty) {
            throw KBError(.invalidArgument, "'\(empty.name)' is not a tag. Use a word or key:value, e.g. diet or topic:health.")
        }
        return Array(Set(tags)).sorted()
    }

    /// Checks a memory id (a UUID) or an id prefix of at least 4 hex digits, lower-cased.
    public static func idOrPrefix(_ text: String) throws -> String {
        let lowered = text.lowercased()
        guard lowered.count >= 4, lowered.count <= 36,
              lowered.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
            throw KBError(.invalidArgument,
                "'\(text)' is not a memory id. Give the id `kb memory add` printed (a UUID), or its first 4 or more characters.")
        }
        return lowered
    }
}

/// What extraction may learn from: the user's own words. kb's own prompt context (a
/// `<context>…</context>` block, or `<source …>…</source>` items, that a chat app pasted into a
/// user turn) is cut out of user turns, and a proposal whose words stand in what was cut or in the
/// assistant's turns — but not in the user's own words — is an echo, not something the user said
/// (recalled memories re-extracted, the assistant's phrasing, prompt text). Pure.
public enum ExtractionEchoes {
    /// The turns with kb's context blocks cut out of the user's turns (assistant turns as they were).
    public static func userWords(_ turns: [ConversationTurn]) -> [ConversationTurn] {
        turns.map { turn in
            guard turn.role == .user else { return turn }
            return ConversationTurn(.user, cut(turn.content).kept, time: turn.time)
        }
    }

    /// Whether `content` is an echo: at least three quarters of its words (of three letters or
    /// more; a word matches another that starts with it, or that it starts with, from four
    /// letters) stand in an assistant turn or a context block of `turns` (as given, before
    /// `userWords`), and fewer than half in what the user said.
    public static func isEcho(_ content: String, in turns: [ConversationTurn]) -> Bool {
        let words = Set(fold(content).split(separator: " ").map(String.init).filter { $0.count >= 3 })
        guard !words.isEmpty else { return false }
        var user = Set<String>(), elsewhere = Set<String>()
        for turn in turns {
            if turn.role == .user {
                let (kept, removed) = cut(turn.content)
                user.formUnion(fold(kept).split(separator: " ").map(String.init))
                elsewhere.formUnion(fold(removed).split(separator: " ").map(String.init))
            } else {
                elsewhere.formUnion(fold(turn.content).split(separator: " ").map(String.init))
            }
        }
        func share(_ pool: Set<String>) -> Double {
            Double(words.filter { word in pool.contains(word) || pool.contains { similar($0, word) } }.count) / Double(words.count)
        }
        return share(elsewhere) >= 0.75 && share(user) < 0.5
    }

    /// `prefer` and `prefers`: one starts with the other, both at least four letters.
    static func similar(_ a: String, _ b: String) -> Bool {
        a.count >= 4 && b.count >= 4 && (a.hasPrefix(b) || b.hasPrefix(a))
    }

    /// The text without kb's context blocks, and the blocks.
    static func cut(_ text: String) -> (kept: String, removed: String) {
        var kept = text, removed = ""
        for pattern in [#"<context\b[^>]*>[\s\S]*?(</context>|$)"#, #"<source\b[^>]*>[\s\S]*?(</source>|$)"#] {
            guard let expression = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else { continue }
            let range = NSRange(kept.startIndex..., in: kept)
            for match in expression.matches(in: kept, range: range) {
                if let found = Range(match.range, in: kept) { removed += " " + kept[found] }
            }
            kept = expression.stringByReplacingMatches(in: kept, range: range, withTemplate: " ")
        }
        return (kept, removed)
    }

    /// Lower-cased words, one space apart, without punctuation.
    static func fold(_ text: String) -> String {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.joined(separator: " ")
    }
}

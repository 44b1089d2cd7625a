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

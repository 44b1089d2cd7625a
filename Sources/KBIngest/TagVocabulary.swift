import Foundation
public import KBCore
import Yams

/// A user's rules for tagging snippets by their words: tag → words, phrases or `/regex/`es.
///
/// ```yaml
/// planet:venus: [venus, morning star, /venus(ian)?/]
/// area:career: career, vocation, profession
/// ```
///
/// Words and phrases match case-insensitively as whole words; `/…/` is a case-insensitive
/// regular expression. A snippet is matched on its text, heading path and source title.
public struct TagVocabulary: @unchecked Sendable {
    // @unchecked: NSRegularExpression is immutable after creation and documented thread-safe.
    struct Rule {
        var tag: KBCore.Tag
        var pattern: NSRegularExpression
    }

    let rules: [Rule]

    public var tags: [KBCore.Tag] { rules.map(\.tag) }

    public init(yaml: String, name: String) throws {
        let node: Node?
        do {
            node = try Yams.compose(yaml: yaml)
        } catch {
            throw KBError(.invalidVocabulary, "\(name) is not valid YAML: \(error). It should map each tag to a list of words or /regular expressions/.")
        }
        guard let mapping = node?.mapping else {
            throw KBError(.invalidVocabulary, "\(name) should map each tag to a list of words or /regular expressions/, e.g. `planet:venus: [venus, morning star]`.")
        }
        var rules: [Rule] = []
        for (key, value) in mapping {
            guard let tagName = key.string, !KBCore.Tag(tagName).isEmpty else { continue }
            let tag = KBCore.Tag(tagName)
            let entries: [String]
            if let list = value.sequence {
                entries = list.compactMap { $0.string }
            } else if let string = value.string {
                entries = string.split(separator: ",").map { String($0).trimmingSpaces }
            } else {
                throw KBError(.invalidVocabulary, "\(name): tag '\(tag)' needs a list of words or /regular expressions/.")
            }
            var alternatives: [String] = []
            for entry in entries.map(\.trimmingSpaces) where !entry.isEmpty {
                if entry.count >= 2 && entry.hasPrefix("/") && entry.hasSuffix("/") {
                    let regex = String(entry.dropFirst().dropLast())
                    do {
                        _ = try NSRegularExpression(pattern: regex)
                    } catch {
                        throw KBError(.invalidVocabulary, "\(name): tag '\(tag)' has an invalid regular expression \(entry). Fix or quote it.")
                    }
                    alternatives.append("(?:\(regex))")
                } else {
                    let words = entry.split(whereSeparator: \.isWhitespace).map { NSRegularExpression.escapedPattern(for: String($0)) }
                    alternatives.append("(?<![\\p{L}\\p{N}])" + words.joined(separator: "\\s+") + "(?![\\p{L}\\p{N}])")
                }
            }
            guard !alternatives.isEmpty else { continue }
            let pattern = try NSRegularExpression(pattern: alternatives.joined(separator: "|"), options: [.caseInsensitive])
            rules.append(Rule(tag: tag, pattern: pattern))
        }
        self.rules = rules
    }

    /// The vocabulary's tags whose words occur in `text`.
    public func tags(for text: String) -> [KBCore.Tag] {
        let range = NSRange(text.startIndex..., in: text)
        return rules.filter { $0.pattern.firstMatch(in: text, range: range) != nil }.map(\.tag)
    }
}

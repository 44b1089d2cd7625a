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
    /// The `records:` entry, when the file has one: how record files' fields are read.
    public private(set) var records: RecordMapping?

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
            if key.string == "records", let fields = value.mapping {
                records = try Self.recordMapping(fields, name: name)
                continue
            }
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

    /// `records: {text: body, title: name, tags: [planet, aspect], weight: weight, id: id}`.
    static func recordMapping(_ fields: Node.Mapping, name: String) throws -> RecordMapping {
        var mapping = RecordMapping()
        func list(_ node: Node) -> [String] {
            node.sequence.map { $0.compactMap(\.string) } ?? (node.string ?? "").split(separator: ",").map { String($0).trimmingSpaces }
        }
        for (key, value) in fields {
            switch key.string {
            case "text": mapping.text = list(value)
            case "title": mapping.title = value.string
            case "tags": mapping.tags = list(value)
            case "weight": mapping.weight = value.string
            case "id": mapping.id = value.string
            default:
                throw KBError(.invalidVocabulary, "\(name): records: has no setting '\(key.string ?? "")'; it takes text, title, tags, weight and id.")
            }
        }
        guard !mapping.text.isEmpty else { throw KBError(.invalidVocabulary, "\(name): records: text: names no field.") }
        return mapping
    }

    /// The vocabulary's tags whose words occur in `text`.
    public func tags(for text: String) -> [KBCore.Tag] {
        let range = NSRange(text.startIndex..., in: text)
        return rules.filter { $0.pattern.firstMatch(in: text, range: range) != nil }.map(\.tag)
    }
}

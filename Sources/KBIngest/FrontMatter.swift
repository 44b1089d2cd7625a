public import KBCore
import Yams

/// What a Markdown note's YAML front matter says about it.
///
/// ```swift
/// let fm = try FrontMatter.parse(scalars, name: "venus.md")
/// fm.title   // "Venus"
/// fm.tags    // [planet:venus, area:love]
/// ```
public struct FrontMatter: Sendable, Hashable {
    /// `title:`, if present.
    public var title: String?
    /// From `tags:` (a list or a comma-separated string) and from every other key with a
    /// short scalar value (`area: career` → `area:career`) or a list of short scalars.
    public var tags: [KBCore.Tag] = []
    /// From `aliases:`, `description:` and `summary:`: searchable, not shown.
    public var keywords: [String] = []
    /// Offset (in Unicode scalars) where the body starts: 0 when there is no front matter.
    public var bodyStart: Int = 0

    /// Values longer than this do not become tags.
    public static let maximumTagValueLength = 64
    static let keywordKeys: Set<String> = ["aliases", "alias", "description", "summary"]

    public init() {}

    /// Parses a leading `---` … `---` (or `...`) block. No block gives an empty `FrontMatter`.
    public static func parse(_ scalars: [Unicode.Scalar], name: String) throws -> FrontMatter {
        var result = FrontMatter()
        let lines = Lines(scalars)
        guard let first = lines.first, lines.text(first, in: scalars).trimmingTrailingSpaces == "---" else {
            return result
        }
        var closing: Lines.Line?
        for line in lines.dropFirst() {
            let text = lines.text(line, in: scalars).trimmingTrailingSpaces
            if text == "---" || text == "..." { closing = line; break }
        }
        guard let closing else {
            throw KBError(.invalidFrontMatter,
                "\(name): front matter starts with `---` on line 1 but has no closing `---` line. Close it or remove it.")
        }
        let yaml = String(String.UnicodeScalarView(scalars[first.next..<closing.start]))
        result.bodyStart = closing.next
        let node: Node?
        do {
            node = try Yams.compose(yaml: yaml)
        } catch {
            throw KBError(.invalidFrontMatter,
                "\(name): front matter is not valid YAML (\(describe(error))). Fix it or remove the `---` block.")
        }
        guard let node else { return result }
        guard let mapping = node.mapping else {
            throw KBError(.invalidFrontMatter,
                "\(name): front matter must be a YAML mapping of keys to values (`title: …`), not a \(kindName(node)).")
        }
        var tags: [KBCore.Tag] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.string?.trimmingSpaces, !key.isEmpty else { continue }
            let lowered = key.lowercased()
            switch lowered {
            case "title":
                if let title = value.string?.trimmingSpaces, !title.isEmpty { result.title = title }
            case "tags", "tag":
                tags += listOrCommaString(value).map { KBCore.Tag($0) }
            case _ where keywordKeys.contains(lowered):
                result.keywords += listOrCommaString(value, splitCommas: false)
            default:
                tags += scalarValues(of: value).map { KBCore.Tag(key: key, value: $0) }
            }
        }
        var seen = Set<KBCore.Tag>()
        result.tags = tags.filter { !$0.isEmpty && seen.insert($0).inserted }
        return result
    }

    private static func listOrCommaString(_ node: Node, splitCommas: Bool = true) -> [String] {
        if let sequence = node.sequence {
            return sequence.compactMap { $0.string?.trimmingSpaces }.filter { !$0.isEmpty }
        }
        guard let string = node.string else { return [] }
        let parts = splitCommas ? string.split(separator: ",").map(String.init) : [string]
        return parts.map(\.trimmingSpaces).filter { !$0.isEmpty }
    }

    private static func scalarValues(of node: Node) -> [String] {
        let values: [Node] = node.sequence.map(Array.init) ?? [node]
        return values.compactMap { item in
            guard let s = item.scalar?.string.trimmingSpaces, !s.isEmpty,
                  s.count <= maximumTagValueLength, !s.contains(where: \.isNewline) else { return nil }
            return s
        }
    }

    private static func kindName(_ node: Node) -> String {
        switch node {
        case .scalar: "single value"
        case .sequence: "list"
        case .mapping: "mapping"
        case .alias: "alias"
        }
    }

    private static func describe(_ error: any Error) -> String {
        // Line numbers count from the file's first line, where the opening `---` stands.
        switch error as? YamlError {
        case let .scanner(_, problem, mark, _)?, let .parser(_, problem, mark, _)?, let .composer(_, problem, mark, _)?:
            return "line \(mark.line + 1): \(problem)"
        case let .duplicatedKeysInMapping(duplicates, _)?:
            return "duplicate keys: \(duplicates.joined(separator: ", "))"
        default:
            return String(describing: error).split(separator: "\n").first.map(String.init) ?? "unreadable"
        }
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}

import Foundation
public import KBCore
import Yams

/// A report's outline: sections, each with a query, tag filters, a snippet count and a share of
/// the token budget. Read from YAML:
///
/// ```yaml
/// title: Career outlook
/// sections:
///   - name: Vocation
///     query: career, reputation and the tenth house
///     tags: [area:career]
///     snippets: 4
///     share: 0.6
///     fallback:                       # used when the section finds nothing
///       - title: Vocation in general
///         text: The tenth house describes the work a person is seen doing.
/// ```
///
/// A section may also narrow its search with `anyTags` (at least one) and `kinds`.
public struct ReportTemplate: Sendable, Hashable, Codable {
    public struct Section: Sendable, Hashable, Codable {
        public var name: String
        public var query: String
        /// Every tag must be on a snippet.
        public var tags: [KBCore.Tag]
        /// At least one of these tags must be on a snippet (none: no such rule).
        public var anyTags: [KBCore.Tag] = []
        /// Only sources of these kinds (none: notes and books).
        public var kinds: [SourceKind] = []
        /// Curated texts that fill the section when it finds nothing.
        public var fallback: [Fallback] = []
        /// At most this many items in the section. The default is 4.
        public var snippets: Int
        /// Fraction of the budget, 0 < share ≤ 1; shares add up to at most 1.
        public var share: Double

        public init(name: String, query: String, tags: [KBCore.Tag] = [], snippets: Int = 4, share: Double) {
            self.name = name
            self.query = query
            self.tags = tags
            self.snippets = snippets
            self.share = share
        }
    }

    /// A short curated text with its title: what a section says when retrieval finds nothing.
    public struct Fallback: Sendable, Hashable, Codable {
        public var title: String
        public var text: String

        public init(title: String, text: String) {
            self.title = title
            self.text = text
        }
    }

    /// The name requests use: the file name without `.yaml` unless the file says otherwise.
    public var name: String
    public var title: String
    public var sections: [Section]

    public init(name: String, title: String, sections: [Section]) throws {
        self.name = name
        self.title = title
        self.sections = sections
        try validate()
    }

    func validate() throws {
        _ = try Bot.validName(name)
        guard !sections.isEmpty else { throw KBError(.invalidArgument, "Report \(name) has no sections; add at least one under `sections:`.") }
        for section in sections {
            guard !section.name.trimmingCharacters(in: .whitespaces).isEmpty,
                  !section.query.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw KBError(.invalidArgument, "Every section of report \(name) needs a name and a query.")
            }
            guard (1...50).contains(section.snippets) else {
                throw KBError(.invalidArgument, "Section \(section.name) of report \(name): snippets must be 1–50; got \(section.snippets).")
            }
            for item in section.fallback where item.title.trimmingCharacters(in: .whitespaces).isEmpty
                || item.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw KBError(.invalidArgument, "Section \(section.name) of report \(name): every fallback needs a title and a text.")
            }
            guard section.share > 0, section.share <= 1 else {
                throw KBError(.invalidArgument, "Section \(section.name) of report \(name): share must be above 0 and at most 1; got \(section.share).")
            }
        }
        let total = sections.reduce(0) { $0 + $1.share }
        guard total <= 1.000_001 else {
            throw KBError(.invalidArgument, "The shares of report \(name) add up to \(total); they must add up to at most 1.")
        }
    }

    /// Parses a template; `name` is used unless the YAML names the report.
    public static func parse(_ yaml: String, name: String) throws -> ReportTemplate {
        let node: Any?
        do {
            node = try Yams.load(yaml: yaml)
        } catch {
            throw KBError(.invalidArgument, "Report \(name) is not valid YAML: \(error).")
        }
        guard let root = node as? [String: Any], let rawSections = root["sections"] as? [[String: Any]] else {
            throw KBError(.invalidArgument, "Report \(name) must be a YAML mapping with a `sections:` list.")
        }
        let sections = try rawSections.enumerated().map { index, raw -> Section in
            func tags(_ key: String) throws -> [KBCore.Tag] {
                switch raw[key] {
                case let list as [Any]: return list.map { KBCore.Tag("\($0)") }
                case let text as String: return text.split(separator: ",").map { KBCore.Tag(String($0)) }
                case nil: return []
                default: throw KBError(.invalidArgument, "Section \(index + 1) of report \(name): \(key) must be a list.")
                }
            }
            func number(_ key: String) -> Double? {
                switch raw[key] {
                case let value as Int: Double(value)
                case let value as Double: value
                default: nil
                }
            }
            guard let share = number("share") else {
                throw KBError(.invalidArgument, "Section \(index + 1) of report \(name) needs a share of the budget (e.g. share: 0.5).")
            }
            var section = Section(name: "\(raw["name"] ?? "")", query: "\(raw["query"] ?? "")", tags: try tags("tags"),
                                  snippets: Int(number("snippets") ?? 4), share: share)
            section.anyTags = try tags("anyTags")
            section.kinds = try tags("kinds").map { kind in
                guard let parsed = SourceKind(rawValue: kind.name), parsed != .memory else {
                    throw KBError(.invalidArgument, "Section \(index + 1) of report \(name): kinds may hold \(SourceKind.documents.map(\.rawValue).joined(separator: ", ")); got \(kind.name).")
                }
                return parsed
            }
            switch raw["fallback"] {
            case nil: break
            case let list as [[String: Any]]:
                section.fallback = list.map { Fallback(title: "\($0["title"] ?? "")", text: "\($0["text"] ?? "")") }
            default:
                throw KBError(.invalidArgument, "Section \(index + 1) of report \(name): fallback must be a list of {title, text}.")
            }
            return section
        }
        return try ReportTemplate(name: (root["name"] as? String) ?? name, title: (root["title"] as? String) ?? name, sections: sections)
    }

    /// Reads a template file.
    public static func load(file: String) throws -> ReportTemplate {
        let url = URL(fileURLWithPath: SourcePaths.absolute(file))
        guard let data = FileManager.default.contents(atPath: url.path), let text = String(data: data, encoding: .utf8) else {
            throw KBError(.noSuchFile, "Cannot read the report template \(file). Check the path.")
        }
        return try parse(text, name: url.deletingPathExtension().lastPathComponent)
    }

    /// Every `.yaml`/`.yml` template in a folder, by name.
    public static func loadAll(folder: String) throws -> [String: ReportTemplate] {
        let path = SourcePaths.absolute(folder)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw KBError(.noSuchFile, "No such folder: \(folder). Give the folder that holds the report templates.")
        }
        var result: [String: ReportTemplate] = [:]
        for name in names.sorted() where name.hasSuffix(".yaml") || name.hasSuffix(".yml") {
            let template = try load(file: path + "/" + name)
            result[template.name] = template
        }
        return result
    }
}

public import Foundation

/// One of a bot's knowledge sources: a path or path prefix, `tag:NAME`, `kind:KIND`, or
/// `upload:ID` (a source added over the API).
/// A bot sees a snippet when any of its selectors matches it.
///
/// ```swift
/// let selector = try SourceSelector("tag:area:career")
/// ```
public enum SourceSelector: Sendable, Hashable, Codable, CustomStringConvertible {
    /// An absolute path: the file itself, or everything under it when it ends in `/`.
    case path(String)
    case tag(Tag)
    /// `note` or `pdf` (memories reach bots through their memory scopes, not selectors).
    case kind(SourceKind)
    /// A source added over the API, by its id: `upload:ID`.
    case upload(String)

    /// Parses `tag:…`, `kind:…` or a path. Paths must already be absolute (the caller resolves
    /// relative ones against its working folder).
    public init(_ text: String) throws {
        // Prefixes are matched on scalars: a mark after `:` or `/` joins it into one character.
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func after(_ prefix: String) -> String? {
            trimmed.unicodeScalars.starts(with: prefix.unicodeScalars)
                ? String(trimmed.unicodeScalars.dropFirst(prefix.unicodeScalars.count)) : nil
        }
        if let name = after("tag:") {
            let tag = Tag(name)
            guard !tag.isEmpty else { throw KBError(.invalidArgument, "'\(text)' names no tag. Write tag:NAME, e.g. tag:area:career.") }
            self = .tag(tag)
        } else if let name = after("kind:") {
            guard let kind = SourceKind(rawValue: name), kind != .memory else {
                throw KBError(.invalidArgument,
                    "'\(text)' is not a kind selector. Use kind:\(SourceKind.documentList) (memories come from the bot's memory scopes).")
            }
            self = .kind(kind)
        } else if let id = after(Source.uploadPrefix) {
            self = .upload(try Source.validID(id))
        } else if trimmed.isAbsolutePath {
            self = .path(trimmed)
        } else {
            throw KBError(.invalidArgument, "'\(text)' is not a selector. Use a path (or folder), tag:NAME, kind:\(SourceKind.documentList) or upload:ID.")
        }
    }

    public var description: String {
        switch self {
        case .path(let path): path
        case .tag(let tag): "tag:" + tag.name
        case .kind(let kind): "kind:" + kind.rawValue
        case .upload(let id): Source.uploadPath(id)
        }
    }

    public init(from decoder: any Decoder) throws { try self.init(try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A chat bot as kb knows it: a system prompt, the knowledge it may see, and the memory scopes it
/// may read.
public struct Bot: Sendable, Hashable, Codable {
    /// 1–64 characters: letters, digits, `-`, `_`, `.`.
    public var name: String
    public var systemPrompt: String
    /// What the bot may see; none means no knowledge snippets at all.
    public var sources: [SourceSelector]
    /// Memory scopes the bot reads, as templates: `{user}` is the user of the request, `{name}` the
    /// bot's name. The default is `user:{user}` and `bot:{name}`.
    public var memoryScopes: [String]
    public var createdAt: Date
    public var updatedAt: Date

    public static let defaultMemoryScopes = ["user:{user}", "bot:{name}"]

    public init(name: String, systemPrompt: String, sources: [SourceSelector] = [], memoryScopes: [String] = Bot.defaultMemoryScopes,
                createdAt: Date = Date(), updatedAt: Date = Date()) {
        self.name = name
        self.systemPrompt = systemPrompt
        self.sources = sources
        self.memoryScopes = memoryScopes
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Checks a bot name.
    public static func validName(_ name: String) throws -> String {
        guard (1...64).contains(name.count),
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw KBError(.invalidArgument, "'\(name)' is not a bot name. Use 1–64 letters, digits, '-', '_' or '.', e.g. astro-helper.")
        }
        return name
    }

    /// Checks a memory scope template: it must become a valid scope once `{user}` and `{name}` are filled in.
    public static func validScopeTemplate(_ template: String) throws -> String {
        _ = try MemoryScope(template.replacingOccurrences(of: "{user}", with: "u").replacingOccurrences(of: "{name}", with: "b"))
        return template
    }

    /// The scopes the bot reads for a user (templates naming `{user}` are skipped without one).
    public func scopes(user: String?) -> [MemoryScope] {
        memoryScopes.compactMap { template in
            if template.contains("{user}") && user == nil { return nil }
            let filled = template.replacingOccurrences(of: "{user}", with: user ?? "").replacingOccurrences(of: "{name}", with: name)
            return try? MemoryScope(filled)
        }
    }
}

extension SourceSelector: SchemaDescribed {
    public static var jsonSchema: JSONValue { ["type": "string"] }
    public static var schemaPlaceholder: SourceSelector { .tag("placeholder") }
}

import Foundation
import KBCore
import KBSystem

/// What an app holds of one collection, for kb to compare with its own: `POST /v1/sources/sync`,
/// the MCP tool `sync_sources` and `kb sources sync`. kb answers which items to upload (new, or
/// held with other content or title), which it already holds, and which it holds that the list
/// no longer names — removed with `prune`. A collection is the sources uploaded with its name
/// (`SourceRequest.collection`), so apps with collections of their own never prune each other's.
///
/// ```swift
/// var sync = SourceSyncRequest(collection: "handbook", items: [
///     SourceSyncItem(id: "onboarding", sha256: String(repeating: "0", count: 64), title: "Onboarding"),
/// ])
/// sync.prune = true
/// let answer = try await kb.syncSources(sync, as: .admin)
/// ```
public struct SourceSyncRequest: KBRequest, Hashable {
    public var collection: String
    public var items: [SourceSyncItem]
    /// Remove the collection's sources the list does not name.
    public var prune: Bool?
    /// The items are this user's private sources (a collection's sources of other users are
    /// left alone).
    public var user: String?

    public init(collection: String, items: [SourceSyncItem]) {
        self.collection = collection
        self.items = items
    }

    public static let schemaName = "SourceSyncRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("collection", "The collection: the sources uploaded with this name in their collection field.", required: true,
                    pattern: Pattern.collection),
            .objects("items", "Every item the app holds in the collection (an empty list: none).", maxItems: limits.maxSyncItems, required: true,
                     fields: [
                        .string("id", "The source's id, as uploaded.", required: true, pattern: Pattern.sourceID),
                        .string("sha256", "The SHA-256 of the bytes uploaded (of a text source, its text in UTF-8, trimmed), 64 hex digits.",
                                required: true, pattern: Pattern.sha256),
                        .string("title", "The title the source should have (compared when given).", maxLength: 300, pattern: Pattern.oneLine),
                     ]),
            .boolean("prune", "Remove the collection's sources that the list does not name."),
            .string("user", "The items are this user's private sources.", pattern: Pattern.userID),
        ]
    }

    public func validated(_ limits: Limits) throws -> SourceSyncRequest {
        let rules = FieldRules(Self.self, limits)
        var checked = self
        checked.collection = try rules.text(collection, "collection")
        var seen = Set<String>()
        checked.items = try rules.objects(items, "items") { item, rules in
            _ = try rules.text(item.id, "id")
            _ = try rules.text(item.sha256, "sha256")
            _ = try rules.optionalText(item.title, "title")
            guard seen.insert(item.id).inserted else {
                throw KBError(.invalidArgument, "the id \(item.id) is listed twice; an id names one source.")
            }
        }.map { SourceSyncItem(id: $0.id, sha256: $0.sha256.lowercased(), title: $0.title?.trimmingWhitespace) }
        checked.user = try rules.optionalText(user, "user")
        return checked
    }
}

/// One item an app holds: its id, the SHA-256 of its bytes, and its title.
public struct SourceSyncItem: Codable, Sendable, Hashable {
    public var id: String
    public var sha256: String
    public var title: String?

    public init(id: String, sha256: String, title: String? = nil) {
        self.id = id
        self.sha256 = sha256
        self.title = title
    }
}

/// A part of one source to read: `GET /v1/sources/{id}/text`, the MCP tool `read_source` and
/// `kb sources read`. Pages (physical numbers, or printed labels), a heading path and a character
/// range choose the part (each given narrows it); without any the source is read from its start. The text comes in
/// pieces of at most `maxCharacters`; `next` says where the following piece starts.
///
/// ```swift
/// var read = SourceReadRequest(source: "file:0123456789abcdef")
/// read.pages = "212-213"
/// let part = try await kb.readSource(read, as: .admin)
/// ```
public struct SourceReadRequest: KBRequest, Hashable {
    /// The source's id, as listed (`GET /v1/sources`).
    public var source: String
    /// Physical pages of a book: `12` or `12-14`.
    public var pages: String?
    /// Printed page labels of a book: `xii` or `xii-3`.
    public var labels: String?
    /// Headings, outermost first: the part under them.
    public var heading: [String]?
    /// Characters (Unicode scalars) from the start of the source's text.
    public var start: Int?
    public var end: Int?
    public var maxCharacters: Int?
    /// Read as this bot sees the sources (a scoped token must name one of its bots).
    public var bot: String?
    /// The user whose private sources may be read.
    public var user: String?

    public init(source: String) { self.source = source }

    public static let schemaName = "SourceReadRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("source", "The source's id, as listed (GET /v1/sources, list_sources) or as a hit's sourceID.", required: true,
                    pattern: Pattern.listedSourceID),
            .string("pages", "Physical pages of a book, from 1: 12 or 12-14.", pattern: Pattern.pageRange),
            .string("labels", "Pages of a book by their printed labels: xii or xii-3.", maxLength: 100, pattern: Pattern.labelRange),
            .strings("heading", "Headings, outermost first (a prefix of a hit's headingPath): the part under them.", maxItems: 16),
            .integer("start", "The first character to read (Unicode scalars from the start of the source's text).", range: 0...Int(Int32.max)),
            .integer("end", "One past the last character to read.", range: 1...Int(Int32.max)),
            .integer("maxCharacters", "Most characters one answer holds; `next` continues.", default: min(8_000, limits.maxReadCharacters),
                     range: 100...limits.maxReadCharacters),
            .string("bot", "Read as this bot sees the sources.", pattern: Pattern.botName),
            .string("user", "The user whose private sources may be read.", pattern: Pattern.userID),
        ]
    }

    public func validated(_ limits: Limits) throws -> SourceReadRequest {
        let rules = FieldRules(Self.self, limits)
        var checked = self
        checked.source = try rules.text(source, "source")
        checked.pages = try rules.optionalText(pages, "pages")
        checked.labels = try rules.optionalText(labels, "labels")
        checked.heading = try rules.list(heading, "heading").map(\.trimmingWhitespace)
        if checked.heading?.isEmpty == true { checked.heading = nil }
        checked.start = try start.map { _ in try rules.integer(start, "start") }
        checked.end = try end.map { _ in try rules.integer(end, "end") }
        checked.maxCharacters = try rules.integer(maxCharacters, "maxCharacters")
        checked.bot = try rules.optionalText(bot, "bot").map(Bot.validName)
        checked.user = try rules.optionalText(user, "user")
        return checked
    }
}

/// A regular expression (or a literal) to find in the sources a caller may read:
/// `POST /v1/sources/grep`, the MCP tool `grep_sources` and `kb sources grep`. The pattern is a
/// POSIX extended regular expression (GNU flavour: `\b`, `\w`, `\s`, `[[:digit:]]`; `\d` is read
/// as `[0-9]`), matched within each snippet's text; back-references and counted repetitions over
/// 32 are refused, and the search stops at its time and count bounds (`truncated` says which).
///
/// ```swift
/// var grep = SourceGrepRequest(pattern: "rent is due")
/// grep.literal = true
/// let found = try await kb.grepSources(grep, as: .admin)
/// ```
public struct SourceGrepRequest: KBRequest, Hashable {
    public var pattern: String
    /// Match the pattern as plain text.
    public var literal: Bool?
    public var ignoreCase: Bool?
    /// Only these sources (ids, as listed).
    public var sources: [String]?
    /// Only sources with all these tags.
    public var tags: [String]?
    public var kinds: [String]?
    public var limit: Int?
    public var bot: String?
    public var user: String?

    public init(pattern: String) { self.pattern = pattern }

    public static let schemaName = "SourceGrepRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("pattern", "A POSIX extended regular expression (\\b, \\w, \\s, [[:digit:]]; \\d is [0-9]), or with literal the text to find.",
                    required: true, maxLength: 500),
            .boolean("literal", "Find the pattern as plain text."),
            .boolean("ignoreCase", "Ignore the difference between upper and lower case."),
            .strings("sources", "Only these sources (ids, as listed).", maxItems: limits.maxListItems, pattern: Pattern.listedSourceID),
            .strings("tags", "Only sources with all these tags.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .choices("kinds", "Only sources of these kinds.", SourceKind.documents.map(\.rawValue), maxItems: limits.maxListItems),
            .integer("limit", "Most matches to return.", default: 50, range: 1...limits.maxGrepMatches),
            .string("bot", "Search what this bot sees.", pattern: Pattern.botName),
            .string("user", "The user whose private sources may be searched too.", pattern: Pattern.userID),
        ]
    }

    public func validated(_ limits: Limits) throws -> SourceGrepRequest {
        let rules = FieldRules(Self.self, limits)
        var checked = self
        checked.pattern = try rules.optionalText(pattern, "pattern") ?? pattern
        guard !pattern.isEmpty else { throw KBError(.invalidArgument, "\"pattern\" is empty; give the text or expression to find.") }
        checked.sources = try rules.list(sources, "sources")
        checked.tags = try rules.list(tags, "tags")
        checked.kinds = try rules.choices(kinds, "kinds", as: SourceKind.self).map(\.rawValue)
        checked.limit = try rules.integer(limit, "limit")
        checked.bot = try rules.optionalText(bot, "bot").map(Bot.validName)
        checked.user = try rules.optionalText(user, "user")
        if literal != true { _ = try GrepPattern(checked.pattern, literal: false, ignoreCase: ignoreCase == true) }
        return checked
    }
}

/// A page of a PDF source as a picture, for the MCP tool `read_page` (over HTTP:
/// `GET /v1/sources/{id}/pages/{n}`). The rights of `SourceReadRequest`.
public struct PageReadRequest: KBRequest, Hashable {
    /// The source's id, as listed.
    public var source: String
    /// The page, from 1.
    public var page: Int?
    /// The picture's width in pixels (200–2,000; 1,000 unless given).
    public var width: Int?
    /// Read as this bot sees the sources (a scoped token must name one of its bots).
    public var bot: String?
    /// The user whose private sources may be read.
    public var user: String?

    public init(source: String, page: Int) {
        self.source = source
        self.page = page
    }

    public static let schemaName = "PageReadRequest"
    /// Pictures are this many pixels wide at least, at most, and unless asked.
    public static let widths = 200...2_000
    public static let defaultWidth = 1_000

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("source", "The source's id, as listed (list_sources) or as a citation's sourceID.", required: true, pattern: Pattern.listedSourceID),
            .integer("page", "The page, from 1 (a citation's pages.start).", range: 1...Int(Int32.max)),
            .integer("width", "The picture's width in pixels.", default: Self.defaultWidth, range: Self.widths),
            .string("bot", "Read as this bot sees the sources.", pattern: Pattern.botName),
            .string("user", "The user whose private sources may be read.", pattern: Pattern.userID),
        ]
    }

    public func validated(_ limits: Limits) throws -> PageReadRequest {
        let rules = FieldRules(Self.self, limits)
        var checked = self
        checked.source = try rules.text(source, "source")
        checked.page = try rules.integer(page, "page")
        checked.width = try rules.integer(width, "width")
        checked.bot = try rules.optionalText(bot, "bot").map(Bot.validName)
        checked.user = try rules.optionalText(user, "user")
        return checked
    }
}

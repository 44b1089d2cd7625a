import Foundation
public import KBCore
public import KBIngest

/// A text source to add: `POST /v1/sources` with a JSON body, the MCP tool `add_source` and
/// `kb ingest -`. Markdown is understood as in notes (headings, front matter). Posting the same
/// `id` again replaces that source; unchanged text (and title, tags and user) changes nothing.
///
/// ```swift
/// var request = SourceRequest(text: "# Lease\nThe rent is due on the first of the month.")
/// request.id = "ada-lease"
/// request.user = "ada"
/// let added = try await kb.addSource(request, as: .admin)
/// ```
public struct SourceRequest: KBRequest, Hashable {
    public var text: String
    public var title: String?
    public var tags: [String]?
    /// Bots that see the source from now on (an `upload:ID` selector is added to each).
    public var bots: [String]?
    /// The user the source belongs to: then only requests for that user see it.
    public var user: String?
    /// The caller's stable name for the source; kb makes one when it is missing.
    public var id: String?
    /// The collection an app keeps the source in (`POST /v1/sources/sync` compares it).
    public var collection: String?

    public init(text: String) { self.text = text }

    public static let schemaName = "SourceRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [.string("text", "The text: Markdown (headings, front matter) or plain.", required: true, maxLength: limits.maxSourceTextCharacters)]
            + UploadFields.fields(limits, tags: "tags", bots: "bots")
    }


    public func validated(_ limits: Limits) throws -> (text: String, upload: UploadFields) {
        let rules = FieldRules(Self.self, limits)
        return (try rules.text(text, "text"),
                try UploadFields(rules, title: title, tags: tags, tagsField: "tags", bots: bots, botsField: "bots", user: user, id: id,
                                 collection: collection))
    }
}

/// A file to add: `POST /v1/sources` with the file's bytes as the body and its media type as
/// `Content-Type`; the other fields are query parameters (`tag` and `bot` repeatable).
public struct UploadRequest: KBRequest, Hashable {
    /// `application/pdf`, `text/markdown`, `text/plain`, `image/png`, `image/jpeg` or `image/tiff`.
    public var contentType: String
    public var title: String?
    public var tag: [String]?
    public var bot: [String]?
    public var user: String?
    public var id: String?
    public var collection: String?

    public init(contentType: String) { self.contentType = contentType }

    public static let schemaName = "UploadRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [.choice("contentType", "The body's media type (the Content-Type header).", MediaType.allCases.map(\.rawValue))]
            + UploadFields.fields(limits, tags: "tag", bots: "bot")
    }


    public func validated(_ limits: Limits) throws -> (type: MediaType, upload: UploadFields) {
        let rules = FieldRules(Self.self, limits)
        return (try MediaType(contentType),
                try UploadFields(rules, title: title, tags: tag, tagsField: "tag", bots: bot, botsField: "bot", user: user, id: id,
                                 collection: collection))
    }
}

/// What a new source is given besides its bytes, checked: the fields text and file uploads share.
/// A source's fields as an upload or a text gives them: its id, title, tags, bots and user.
public struct UploadFields: Sendable, Hashable {
    package var id: String
    package var title: String?
    package var tags: [Tag]
    package var bots: [String]
    package var owner: String?

    static func fields(_ limits: Limits, tags: String, bots: String) -> [RequestField] {
        [
            .string("title", "The title (else the document's own: front matter, first heading, PDF metadata).", maxLength: 300,
                    pattern: Pattern.oneLine),
            .strings(tags, "Tags for the whole source, e.g. area:career.", maxItems: limits.maxListItems, pattern: Pattern.tag),
            .strings(bots, "Bots that see the source from now on.", maxItems: limits.maxListItems, pattern: Pattern.botName),
            .string("user", "The user the source belongs to: only requests for that user see it.", pattern: Pattern.userID),
            .string("id", "Your stable name for the source (posting it again replaces the source); kb makes one when missing.",
                    pattern: Pattern.sourceID),
            .string("collection", "The collection your app keeps the source in (POST /v1/sources/sync compares it); stored as the tag collection:NAME.",
                    pattern: Pattern.collection),
        ]
    }

    init(_ rules: FieldRules, title: String?, tags: [String]?, tagsField: String, bots: [String]?, botsField: String,
                       user: String?, id: String?, collection: String?) throws {
        self.id = try rules.optionalText(id, "id").map(Source.validID) ?? UUID.random().uuidString.lowercased()
        self.title = try rules.optionalText(title, "title")
        self.tags = try rules.list(tags, tagsField).map { Tag($0) }
        if let collection = try rules.optionalText(collection, "collection") {
            // A collection is a tag, so that searches can filter on it; a source is in one collection.
            if let other = self.tags.first(where: { $0.name.hasPrefix(SourceCollection.tagPrefix) && $0 != SourceCollection.tag(collection) }) {
                throw KBError(.invalidArgument, "The source is in the collection \(collection) but tagged \(other.name); a source is in one collection.")
            }
            if !self.tags.contains(SourceCollection.tag(collection)) { self.tags.append(SourceCollection.tag(collection)) }
        }
        self.bots = try rules.list(bots, botsField).map(Bot.validName)
        self.owner = try rules.optionalText(user, "user")
    }
}

/// Which sources to list: `GET /v1/sources` and the MCP tool `list_sources`, a page at a time.
public struct SourceListRequest: KBRequest, Hashable {
    /// Only the private sources of this user.
    public var user: String?
    /// Only the sources this bot sees.
    public var bot: String?
    public var kind: String?
    /// Only sources with this tag.
    public var tag: String?
    public var limit: Int?
    public var offset: Int?

    public init() {}

    public static let schemaName = "SourceListRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("user", "Only the private sources of this user.", pattern: Pattern.userID),
            .string("bot", "Only the sources this bot sees.", pattern: Pattern.botName),
            .choice("kind", "Only sources of this kind.", SourceKind.documents.map(\.rawValue)),
            .string("tag", "Only sources with this tag.", pattern: Pattern.tag),
            .integer("limit", "How many sources a page holds.", default: min(100, limits.maxListedSources), range: 1...limits.maxListedSources),
            .integer("offset", "How many sources to skip (the page's start).", default: 0, range: 0...Int(Int32.max)),
        ]
    }


    public func validated(_ limits: Limits) throws -> SourceListRequest {
        let rules = FieldRules(Self.self, limits)
        var checked = self
        checked.user = try rules.optionalText(user, "user")
        checked.bot = try rules.optionalText(bot, "bot").map(Bot.validName)
        checked.kind = try rules.choice(kind, "kind", as: SourceKind.self)?.rawValue
        checked.tag = try rules.optionalText(tag, "tag")
        checked.limit = try rules.integer(limit, "limit")
        checked.offset = try rules.integer(offset, "offset")
        return checked
    }
}

/// A source to remove: `DELETE /v1/sources/{id}`, the MCP tool `remove_source` and
/// `kb sources remove ID`. Only sources added over the API can be removed this way; a file's
/// source belongs to the file (`kb remove PATH`).
public struct SourceRemoveRequest: KBRequest, Hashable {
    public var id: String

    public init(id: String) { self.id = id }

    public static let schemaName = "SourceRemoveRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [.string("id", "The source's id, as listed.", required: true, pattern: Pattern.listedSourceID)]
    }


    public func validated(_ limits: Limits) throws -> String { try FieldRules(Self.self, limits).text(id, "id") }
}

/// A collection of sources an app owns: the sources uploaded with its name, which carry the tag
/// `collection:NAME` (so searches can filter on it). Names are compared as tags are, without case.
public enum SourceCollection {
    public static let tagPrefix = "collection:"

    public static func tag(_ name: String) -> Tag { Tag(tagPrefix + name) }
}

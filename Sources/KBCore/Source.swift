public import Foundation

/// A file, an uploaded source or a memory that was ingested, as the index knows it.
public struct Source: Hashable, Sendable, Codable {
    /// Absolute, standardised file path; `upload:ID` for a source added over the API
    /// (`Source.uploadPath`), `memory:ID` for memories.
    public var path: String
    public var kind: SourceKind
    public var title: String
    /// Hex SHA-256 of the file's bytes.
    public var contentHash: String
    /// Size in bytes.
    public var size: Int
    public var modifiedAt: Date?
    /// Tags that apply to the whole source (front matter, `--tag`).
    public var tags: [Tag]
    /// Other names and short descriptions, searchable by keyword but not shown as text.
    public var keywords: [String]
    /// How OCR read the source's page images (`OCRSettings.record`): nil when every page had a
    /// text layer, `never` when pages without one were left unread, else the mode, languages and
    /// resolution (`auto eng+ukr 300`). A re-run with other OCR settings reads the file again.
    public var ocr: String?
    /// The user a private source belongs to: only searches, recalls and contexts made for that
    /// user see it. nil for a shared source (every file, and uploads posted without a user).
    public var owner: String?

    public init(
        path: String, kind: SourceKind, title: String, contentHash: String, size: Int,
        modifiedAt: Date? = nil, tags: [Tag] = [], keywords: [String] = [], ocr: String? = nil, owner: String? = nil
    ) {
        self.path = path
        self.kind = kind
        self.title = title
        self.contentHash = contentHash
        self.size = size
        self.modifiedAt = modifiedAt
        self.tags = tags
        self.keywords = keywords
        self.ocr = ocr
        self.owner = owner
    }

    /// The index path of a source added over the API with this id.
    public static func uploadPath(_ id: String) -> String { uploadPrefix + id }
    public static let uploadPrefix = "upload:"

    /// The id of a source added over the API, or nil for a file or a memory.
    public var uploadID: String? { Self.uploadID(path: path) }

    public static func uploadID(path: String) -> String? {
        path.hasPrefix(uploadPrefix) ? String(path.dropFirst(uploadPrefix.count)) : nil
    }

    /// Checks the id a caller gives a source: 1–128 letters, digits, `-`, `_` or `.`.
    public static func validID(_ id: String) throws -> String {
        guard (1...128).contains(id.count), id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw KBError(.invalidArgument, "'\(id)' is not a source id. Use 1–128 letters, digits, '-', '_' or '.', e.g. ada-lease-2026.")
        }
        return id
    }
}

/// A source with the snippets made from it: what a loader produces and the index stores.
public struct SourceDocument: Sendable, Hashable, Codable {
    public var source: Source
    public var snippets: [Snippet]
    /// Things the user should know that did not stop ingestion (repaired bytes, empty pages).
    public var warnings: [String]
    /// Where each page starts in the text (books): what makes pages exact. nil for sources
    /// without pages, and for books indexed before kb kept them (their snippets' spans stand in).
    public var pageStarts: [PageStart]?

    public init(source: Source, snippets: [Snippet], warnings: [String] = [], pageStarts: [PageStart]? = nil) {
        self.source = source
        self.snippets = snippets
        self.warnings = warnings
        self.pageStarts = pageStarts
    }
}

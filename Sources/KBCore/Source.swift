public import Foundation

/// A file (or memory) that was ingested, as the index knows it.
public struct Source: Hashable, Sendable, Codable {
    /// Absolute, standardised file path (or `memory:ID` for memories).
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

    public init(
        path: String, kind: SourceKind, title: String, contentHash: String, size: Int,
        modifiedAt: Date? = nil, tags: [Tag] = [], keywords: [String] = [], ocr: String? = nil
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
    }
}

/// A source with the snippets made from it: what a loader produces and the index stores.
public struct SourceDocument: Sendable, Hashable, Codable {
    public var source: Source
    public var snippets: [Snippet]
    /// Things the user should know that did not stop ingestion (repaired bytes, empty pages).
    public var warnings: [String]

    public init(source: Source, snippets: [Snippet], warnings: [String] = []) {
        self.source = source
        self.snippets = snippets
        self.warnings = warnings
    }
}

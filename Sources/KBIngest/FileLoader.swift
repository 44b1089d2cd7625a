public import Foundation
public import KBCore

/// A file's bytes and what is known of them, as every loader takes them.
public struct FileInput: Sendable {
    /// The bytes, read once by the caller (which hashed them).
    public var data: Data
    /// The path recorded in the index.
    public var path: String
    /// How errors name the file (the path as the user typed it); nil: `path`.
    public var displayName: String?
    public var contentHash: String
    public var modifiedAt: Date?
    /// Whether a note's text is Markdown; nil: by the path's extension (an upload says by its
    /// media type).
    public var markdown: Bool?
    /// A records file's format (`csv`, `jsonl`, `json`); nil: by the path's extension.
    public var recordFormat: String?

    public init(_ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil,
                markdown: Bool? = nil, recordFormat: String? = nil) {
        self.data = data
        self.path = path
        self.displayName = displayName
        self.contentHash = contentHash
        self.modifiedAt = modifiedAt
        self.markdown = markdown
        self.recordFormat = recordFormat
    }
}

/// Reads one kind of source from a file's bytes: every loader adopts it, and `FileLoaders`
/// finds the one for a kind (or an extension). Pure but for OCR, which a session runs.
///
/// ```swift
/// let loader = try FileLoaders.loader(for: .html, options: IngestOptions(), ocr: nil)
/// let document = try loader.load(FileInput(data, path: "/manual/install.html", contentHash: hash))
/// ```
public protocol FileLoader: Sendable {
    /// The kind of source it makes.
    static var kind: SourceKind { get }
    /// The file extensions it reads, lower case, in the order messages list them.
    static var extensions: [String] { get }
    /// `ocr` reads pages without a text layer and images; loaders of text ignore it.
    init(options: IngestOptions, ocr: OCRSession?)
    func load(_ file: FileInput) throws -> SourceDocument
}

/// Every loader, by the kind of source it makes: the one place a file's kind picks its loader.
public enum FileLoaders {
    /// In the order kb lists what it reads.
    public static let all: [any FileLoader.Type] = [
        NoteLoader.self, PDFLoader.self, ImageLoader.self, EPUBLoader.self, HTMLLoader.self, DOCXLoader.self, RecordLoader.self,
    ]

    /// The loader of a kind of source. Memories are not read from files: asking for their loader
    /// is an error.
    public static func loader(for kind: SourceKind, options: IngestOptions, ocr: OCRSession?) throws -> any FileLoader {
        guard let type = all.first(where: { $0.kind == kind }) else {
            throw KBError(.unsupportedFileType, "No file becomes a source of kind \(kind.rawValue); kb reads \(FileTypes.supportedList).")
        }
        return type.init(options: options, ocr: ocr)
    }
}

extension NoteLoader: FileLoader {
    public static let kind = SourceKind.note
    public static let extensions = ["md", "markdown", "txt"]
    public init(options: IngestOptions, ocr: OCRSession?) { self.init(options: options) }
    public func load(_ file: FileInput) throws -> SourceDocument {
        try load(file.data, path: file.path, displayName: file.displayName, contentHash: file.contentHash, modifiedAt: file.modifiedAt,
                 markdown: file.markdown)
    }
}

extension PDFLoader: FileLoader {
    public static let kind = SourceKind.pdf
    public static let extensions = ["pdf"]
    /// The password comes from `options.password`.
    public init(options: IngestOptions, ocr: OCRSession?) { self.init(options: options, password: options.password, ocr: ocr) }
    public func load(_ file: FileInput) throws -> SourceDocument {
        try load(file.data, path: file.path, displayName: file.displayName, contentHash: file.contentHash, modifiedAt: file.modifiedAt)
    }
}

extension ImageLoader: FileLoader {
    public static let kind = SourceKind.image
    /// Scans, read by OCR.
    public static let extensions = ["png", "jpg", "jpeg", "tif", "tiff"]
    public func load(_ file: FileInput) throws -> SourceDocument {
        try load(file.data, path: file.path, displayName: file.displayName, contentHash: file.contentHash, modifiedAt: file.modifiedAt)
    }
}

extension EPUBLoader: FileLoader {
    public static let kind = SourceKind.epub
    public static let extensions = ["epub"]
    public init(options: IngestOptions, ocr: OCRSession?) { self.init(options: options) }
    public func load(_ file: FileInput) throws -> SourceDocument {
        try load(file.data, path: file.path, displayName: file.displayName, contentHash: file.contentHash, modifiedAt: file.modifiedAt)
    }
}

extension HTMLLoader: FileLoader {
    public static let kind = SourceKind.html
    public static let extensions = ["html", "htm", "xhtml"]
    public init(options: IngestOptions, ocr: OCRSession?) { self.init(options: options) }
    public func load(_ file: FileInput) throws -> SourceDocument {
        try load(file.data, path: file.path, displayName: file.displayName, contentHash: file.contentHash, modifiedAt: file.modifiedAt)
    }
}

extension DOCXLoader: FileLoader {
    public static let kind = SourceKind.docx
    public static let extensions = ["docx"]
    public init(options: IngestOptions, ocr: OCRSession?) { self.init(options: options) }
    public func load(_ file: FileInput) throws -> SourceDocument {
        try load(file.data, path: file.path, displayName: file.displayName, contentHash: file.contentHash, modifiedAt: file.modifiedAt)
    }
}

extension RecordLoader: FileLoader {
    public static let kind = SourceKind.record
    /// Files of records, one snippet per record.
    public static let extensions = ["json", "jsonl", "ndjson", "csv"]
    public init(options: IngestOptions, ocr: OCRSession?) { self.init(options: options) }
    public func load(_ file: FileInput) throws -> SourceDocument {
        try load(file.data, path: file.path, displayName: file.displayName, contentHash: file.contentHash, modifiedAt: file.modifiedAt,
                 format: file.recordFormat)
    }
}

public import Foundation
public import KBCore

/// The media types kb reads from uploads (`Content-Type`), what each becomes, and a check of the
/// bytes against the type they were sent as (kb looks at them: a mismatch is refused rather than
/// read as something it is not).
///
/// ```swift
/// let type = try MediaType("application/pdf")
/// try type.check(head: Data("%PDF-1.7".utf8))
/// ```
public enum MediaType: String, Sendable, Hashable, Codable, CaseIterable {
    case pdf = "application/pdf"
    case markdown = "text/markdown"
    case plainText = "text/plain"
    case png = "image/png"
    case jpeg = "image/jpeg"
    case tiff = "image/tiff"
    case epub = "application/epub+zip"
    case html = "text/html"
    case docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    /// Records, one per row (a header row names the fields).
    case csv = "text/csv"
    /// Records, one JSON object per line.
    case jsonLines = "application/x-ndjson"

    /// Reads a `Content-Type` value: parameters (`; charset=utf-8`) and case do not matter;
    /// `text/x-markdown` and `image/jpg` are read as their standard names.
    public init(_ contentType: String) throws {
        let base = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch base {
        case "text/x-markdown": self = .markdown
        case "image/jpg", "image/pjpeg": self = .jpeg
        case "application/xhtml+xml": self = .html
        case "application/jsonl", "application/jsonlines", "application/x-jsonlines": self = .jsonLines
        default:
            guard let known = MediaType(rawValue: base) else {
                throw KBError(.unsupportedMediaType,
                    "kb does not read \(base.isEmpty ? "bodies without a Content-Type" : base). Send \(Self.allCases.map(\.rawValue).joined(separator: ", ")), or JSON {\"text\": …} for text.")
            }
            self = known
        }
    }

    /// The kind of source these bytes become.
    public var kind: SourceKind {
        switch self {
        case .pdf: .pdf
        case .markdown, .plainText: .note
        case .png, .jpeg, .tiff: .image
        case .epub: .epub
        case .html: .html
        case .docx: .docx
        case .csv, .jsonLines: .record
        }
    }

    /// The record format (`csv`, `jsonl`) of a records type, else nil.
    public var recordFormat: String? {
        switch self {
        case .csv: "csv"
        case .jsonLines: "jsonl"
        default: nil
        }
    }

    /// Whether text is read as Markdown (headings, front matter).
    public var isMarkdown: Bool { self == .markdown }

    /// What the first bytes of a body look like, in words, or nil for text.
    static func binaryFormat(of head: Data) -> String? {
        let bytes = [UInt8](head.prefix(16))
        func starts(_ magic: [UInt8]) -> Bool { bytes.count >= magic.count && Array(bytes.prefix(magic.count)) == magic }
        if starts(Array("%PDF-".utf8)) { return "a PDF" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "a PNG image" }
        if starts([0xFF, 0xD8, 0xFF]) { return "a JPEG image" }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "a TIFF image" }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return "a ZIP archive" }
        if starts([0x1F, 0x8B]) { return "gzip data" }
        if head.prefix(8192).contains(0) { return "binary data" }
        return nil
    }

    /// What the type promises the bytes start like.
    var expected: String {
        switch self {
        case .pdf: "a PDF"
        case .png: "a PNG image"
        case .jpeg: "a JPEG image"
        case .tiff: "a TIFF image"
        case .epub, .docx: "a ZIP archive"
        case .markdown, .plainText, .html, .csv, .jsonLines: "text"
        }
    }

    /// Checks the first bytes of a body (at least its first 8 KiB, or all of a shorter one)
    /// against this type; a mismatch is an `unsupportedMediaType` error that says what they are.
    public func check(head: Data) throws {
        guard !head.isEmpty else { throw KBError(.invalidArgument, "The body is empty: send the file's bytes.") }
        // A PDF may have a few bytes before its header (poppler reads it all the same).
        if self == .pdf, head.prefix(1024).range(of: Data("%PDF-".utf8)) != nil { return }
        let found = Self.binaryFormat(of: head) ?? "text"
        guard found == expected else {
            let better = Self.allCases.first { $0.expected == found }.map { " Send it as \($0.rawValue)." } ?? " kb does not read it."
            throw KBError(.unsupportedMediaType, "The body is \(found), but its Content-Type says \(rawValue).\(better)")
        }
    }
}

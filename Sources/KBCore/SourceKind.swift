/// What a source is: a note (Markdown or plain text), a book (PDF), a scanned image (PNG, JPEG,
/// TIFF; read by OCR), an e-book (EPUB), a web page (HTML), a Word document (DOCX), a file of
/// records (JSON, JSON Lines, CSV; one snippet per record), a conversation (a chat transcript in
/// JSON Lines; one snippet per turn) or a user memory.
public enum SourceKind: String, Sendable, Codable, CaseIterable, Hashable, SchemaEnumeration {
    case note
    case pdf
    case image
    case epub
    case html
    case docx
    case record
    case conversation
    case memory

    /// The kinds of files (every kind but memories): what `kind:` selectors and filters name.
    public static let documents: [SourceKind] = allCases.filter { $0 != .memory }

    /// Whether its sources have pages that can be shown as pictures (PDFs and scans).
    public var hasPages: Bool { self == .pdf || self == .image }

    /// `note|pdf|image|…`, for messages and help.
    public static let documentList = documents.map(\.rawValue).joined(separator: "|")
}

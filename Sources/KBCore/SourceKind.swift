/// What a source is: a note (Markdown or plain text), a book (PDF), a scanned image (PNG, JPEG,
/// TIFF; read by OCR) or a user memory.
public enum SourceKind: String, Sendable, Codable, CaseIterable, Hashable {
    case note
    case pdf
    case image
    case memory
}

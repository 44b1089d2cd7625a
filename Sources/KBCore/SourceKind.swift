/// What a source is: a note (Markdown or plain text), a book (PDF) or a user memory.
public enum SourceKind: String, Sendable, Codable, CaseIterable, Hashable {
    case note
    case pdf
    case memory
}

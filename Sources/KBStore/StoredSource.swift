public import Foundation
public import KBCore

/// A source as listed by `kb sources`: its metadata and how much of it the index holds.
public struct StoredSource: Sendable, Hashable, Codable {
    public var id: Int64
    public var path: String
    public var kind: SourceKind
    public var title: String
    public var contentHash: String
    public var size: Int
    public var modifiedAt: Date?
    public var ingestedAt: Date
    public var snippetCount: Int
    public var tags: [Tag]
    /// How OCR read it (`Source.ocr`); nil when it did not.
    public var ocr: String?
    /// The mean OCR confidence (0–100) of its snippets read by OCR; nil when none was.
    public var ocrConfidence: Double?
    /// The user a private source belongs to (`Source.owner`).
    public var owner: String?

    public init(id: Int64, path: String, kind: SourceKind, title: String, contentHash: String, size: Int, modifiedAt: Date?,
                ingestedAt: Date, snippetCount: Int, tags: [Tag], ocr: String? = nil, ocrConfidence: Double? = nil, owner: String? = nil) {
        self.id = id
        self.path = path
        self.kind = kind
        self.title = title
        self.contentHash = contentHash
        self.size = size
        self.modifiedAt = modifiedAt
        self.ingestedAt = ingestedAt
        self.snippetCount = snippetCount
        self.tags = tags
        self.ocr = ocr
        self.ocrConfidence = ocrConfidence
        self.owner = owner
    }
}

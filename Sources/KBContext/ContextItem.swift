public import KBCore

/// One candidate piece of context: a snippet of a note or book, or a memory.
public struct ContextItem: Sendable, Hashable, Codable {
    public var kind: SourceKind
    public var text: String
    /// Relevance, higher is better (comparable within one request).
    public var score: Double
    public var sourcePath: String
    public var sourceTitle: String
    /// Position of the snippet in its source (adjacent ordinals are neighbours).
    public var ordinal: Int
    /// The snippets this item holds (several after merging neighbours).
    public var snippetIDs: [Int64]
    public var pages: PageRange?
    public var headingPath: [String]
    public var tags: [Tag]
    public var memoryID: String?
    public var scope: String?
    /// Set when (part of) the text was read by OCR: the weakest confidence among its pages.
    public var ocr: OCRMark?
    /// True for a report's curated fallback text, used because its section found nothing.
    public var fallback: Bool?

    public init(
        kind: SourceKind, text: String, score: Double, sourcePath: String, sourceTitle: String, ordinal: Int = 0,
        snippetIDs: [Int64] = [], pages: PageRange? = nil, headingPath: [String] = [], tags: [Tag] = [],
        memoryID: String? = nil, scope: String? = nil, ocr: OCRMark? = nil
    ) {
        self.kind = kind
        self.text = text
        self.score = score
        self.sourcePath = sourcePath
        self.sourceTitle = sourceTitle
        self.ordinal = ordinal
        self.snippetIDs = snippetIDs
        self.pages = pages
        self.headingPath = headingPath
        self.tags = tags
        self.memoryID = memoryID
        self.scope = scope
        self.ocr = ocr
    }

    /// The title a reader sees: the source's, or for an untitled memory the start of its text.
    public var displayTitle: String {
        if !sourceTitle.isEmpty { return sourceTitle }
        // Splitting no further than the ninth word: a long text is not walked to its end.
        let pieces = text.split(maxSplits: 8, whereSeparator: \.isWhitespace)
        let words = pieces.prefix(8).joined(separator: " ")
        return pieces.count > 8 || words.count < text.count ? words + "…" : words
    }
}

/// A piece of a source small enough to embed and to quote, with what a citation needs.
public struct Snippet: Hashable, Sendable, Codable {
    /// Position within its source, from 0.
    public var ordinal: Int
    /// The text, exactly as it stands in the source between `start` and `end`.
    public var text: String
    /// Offset of the first character, in Unicode scalars from the start of the file's text.
    public var start: Int
    /// Offset one past the last character, in Unicode scalars.
    public var end: Int
    /// Headings above the snippet, outermost first (`["Book", "Chapter", "Section"]`).
    public var headingPath: [String]
    /// Pages the snippet spans (books only).
    public var pages: PageRange?
    /// Tags of the snippet, its source's tags included.
    public var tags: [Tag]
    /// Set when (part of) the text was read from page images by OCR, with its confidence.
    public var ocr: OCRMark?
    /// A record's boost (`--record-weight`): every ranking multiplies the snippet's score by it
    /// (`SearchHit.weighted`). nil for the default, 1.
    public var weight: Double?

    public init(
        ordinal: Int, text: String, start: Int, end: Int,
        headingPath: [String] = [], pages: PageRange? = nil, tags: [Tag] = [], ocr: OCRMark? = nil, weight: Double? = nil
    ) {
        self.ordinal = ordinal
        self.text = text
        self.start = start
        self.end = end
        self.headingPath = headingPath
        self.pages = pages
        self.tags = tags
        self.ocr = ocr
        self.weight = weight == 1 ? nil : weight
    }

    /// The separator used when a heading path is shown or stored as one string.
    public static let headingSeparator = " › "

    /// `Book › Chapter › Section`.
    public var headingPathString: String { headingPath.joined(separator: Snippet.headingSeparator) }
}

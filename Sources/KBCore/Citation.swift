/// Where one numbered item of an assembled context came from: enough to show a reader the source.
public struct Citation: Sendable, Hashable, Codable {
    /// The item's number in the prompt block, from 1.
    public var number: Int
    public var kind: SourceKind
    /// The source's title (for a memory, its title or the start of its content).
    public var title: String
    /// The source's path (`memory:ID` for memories).
    public var path: String
    /// Physical pages and printed labels, for books.
    public var pages: PageRange?
    /// `p. 15` / `pp. 15–16` with printed labels, for books.
    public var pageLabel: String?
    /// Headings above the text, outermost first, for notes and books.
    public var headingPath: [String]
    /// The memory's id, for memories.
    public var memoryID: String?
    /// The memory's scope, for memories.
    public var scope: String?
    /// The report section the item belongs to, for reports.
    public var section: String?
    /// Set when the text was read from page images by OCR, with the weakest page confidence.
    public var ocr: OCRMark?
    /// True when the item is a report's curated fallback text (its section found nothing).
    public var fallback: Bool?
    /// The source's id, as the sources API lists it (`GET /v1/sources/{id}/pages/{n}` opens its
    /// pages); nil for memories and a report's fallback text.
    public var sourceID: String?
    /// The ordinals of the snippets the item holds, in order (`…/pages/{n}/words?snippet=`); nil
    /// for memories and a report's fallback text.
    public var snippets: [Int]?

    public init(
        number: Int, kind: SourceKind, title: String, path: String, pages: PageRange? = nil, headingPath: [String] = [],
        memoryID: String? = nil, scope: String? = nil, section: String? = nil, ocr: OCRMark? = nil
    ) {
        self.number = number
        self.kind = kind
        self.title = title
        self.path = path
        self.pages = pages
        self.pageLabel = pages?.citation
        self.headingPath = headingPath
        self.memoryID = memoryID
        self.scope = scope
        self.section = section
        self.ocr = ocr
    }
}

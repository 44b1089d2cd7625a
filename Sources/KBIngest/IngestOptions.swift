public import KBCore

/// How files become snippets.
public struct IngestOptions: Sendable {
    /// Where snippets are cut. The default is 500 characters with 50 of overlap.
    public var chunker: Chunker
    /// Tags added to every source (`--tag`). The default is none.
    public var tags: [Tag] = []
    /// Rules that tag snippets by their words (`--tags-from`). The default is none.
    public var vocabulary: TagVocabulary?
    /// Opens encrypted PDFs (`--password`). The default is none.
    public var password: String?
    /// How pages without a text layer, and images, are read (`--ocr`, `--ocr-lang`, `--ocr-dpi`).
    public var ocr = OCRSettings()
    /// Which fields of records (`.json`, `.jsonl`, `.csv`) are text, title, tags, weight and id.
    /// The default reads the fields `text`, `title`, `weight` and `id` where records have them.
    public var records = RecordMapping()
    /// How snippets get their `lang:` tag (`--text-language`). The default detects each
    /// snippet's language (`LanguageDetector`); a source's own `lang:` tag wins.
    public var textLanguage = TextLanguage.detect

    public init(chunker: Chunker? = nil, tags: [Tag] = [], vocabulary: TagVocabulary? = nil) {
        self.chunker = chunker ?? (try! Chunker())
        self.tags = tags
        self.vocabulary = vocabulary
    }
}

/// The file types kb reads, by extension.
public enum FileTypes {
    public static let markdown: Set<String> = ["md", "markdown"]
    public static let text: Set<String> = ["txt"]
    public static let pdf: Set<String> = ["pdf"]
    /// Scans, read by OCR.
    public static let image: Set<String> = ["png", "jpg", "jpeg", "tif", "tiff"]
    public static let epub: Set<String> = ["epub"]
    public static let html: Set<String> = ["html", "htm", "xhtml"]
    public static let docx: Set<String> = ["docx"]
    /// Files of records, one snippet per record.
    public static let record: Set<String> = ["json", "jsonl", "ndjson", "csv"]

    /// The kind of source a file with this extension becomes, or nil if kb does not read it.
    public static func kind(forExtension ext: String) -> SourceKind? {
        let e = ext.lowercased()
        if markdown.contains(e) || text.contains(e) { return .note }
        if pdf.contains(e) { return .pdf }
        if image.contains(e) { return .image }
        if epub.contains(e) { return .epub }
        if html.contains(e) { return .html }
        if docx.contains(e) { return .docx }
        if record.contains(e) { return .record }
        return nil
    }

    public static var supportedList: String {
        ".md, .markdown, .txt, .pdf, .png, .jpg, .jpeg, .tif, .tiff, .epub, .html, .htm, .xhtml, .docx, .json, .jsonl, .ndjson, .csv"
    }
}

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

/// The file types kb reads, by extension: the loaders' own (`FileLoaders`), in their order.
public enum FileTypes {
    /// Text read as Markdown (the others of `NoteLoader` are plain text).
    public static let markdown: Set<String> = ["md", "markdown"]

    /// The kind of source a file with this extension becomes, or nil if kb does not read it.
    public static func kind(forExtension ext: String) -> SourceKind? {
        let e = ext.lowercased()
        return FileLoaders.all.first { $0.extensions.contains(e) }?.kind
    }

    /// `.md, .markdown, .txt, .pdf, …`: every extension kb reads, for messages.
    public static var supportedList: String {
        FileLoaders.all.flatMap { $0.extensions.map { "." + $0 } }.joined(separator: ", ")
    }
}

public import Foundation
public import KBCore

/// Turns a scanned image (PNG, JPEG, or TIFF — a multi-page TIFF is a book) into a source and
/// its snippets through OCR, page by page, with the same chunking and page ranges as a PDF.
/// The title is the file name; every snippet carries an `OCRMark`.
public struct ImageLoader: Sendable {
    /// The largest page image read, in pixels along a side and in all (a 1,200 dpi A3 scan fits).
    public static let maximumSide = 32_000
    public static let maximumPixels = 300_000_000

    public var options: IngestOptions
    /// Reads the pages; nil (or `--ocr never`) fails, since an image has no text layer.
    public var ocr: OCRSession?

    public init(options: IngestOptions, ocr: OCRSession?) {
        self.options = options
        self.ocr = ocr
    }

    /// Reads the image at `path` from disk and loads it (for tools and tests; ingest reads each
    /// file once and calls `load(_:path:…)` with its bytes).
    public func load(path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil) throws -> SourceDocument {
        try load(try FileBytes.read(path, name: displayName), path: path, displayName: displayName, contentHash: contentHash, modifiedAt: modifiedAt)
    }

    /// Loads the image whose bytes are `data` (the file at `path`, read once by the caller).
    public func load(_ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil) throws -> SourceDocument {
        let name = displayName ?? path
        guard !data.isEmpty else { throw KBError(.invalidText, "\(name) is empty (0 bytes), not an image.") }
        if let unavailable = Tesseract.unavailable {
            throw KBError(.unsupportedMode, "\(name) is an image, which only OCR can read, and \(unavailable).")
        }
        return try data.withUnsafeBytes { raw in
            // The bytes stay valid, unchanged, for the whole of this closure; every page is decoded
            // before it returns.
            let bytes = ImageBytes(base: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: raw.count)
            return try load(bytes, path: path, name: name, contentHash: contentHash, size: data.count, modifiedAt: modifiedAt)
        }
    }

    func load(_ bytes: ImageBytes, path: String, name: String, contentHash: String, size: Int, modifiedAt: Date?) throws -> SourceDocument {
        let count = Tesseract.imageCount(bytes)
        guard count > 0 else {
            throw KBError(.invalidText, "\(name) cannot be read as a PNG, JPEG or TIFF image (damaged, truncated, or another format).")
        }
        guard let ocr, ocr.settings.mode != .never else {
            throw KBError(.invalidText, "\(name) is an image, which only OCR can read, and OCR is off (--ocr never). Run with --ocr auto to read it.")
        }
        try ocr.checkUsable(file: name, pages: count)
        let recognised = OCRPages.recognise(
            Array(1...count), file: name, contentHash: contentHash, session: ocr,
            open: { () -> ImageBytes? in bytes }, close: { _ in },
            image: { bytes, page in
                // The size is read from the header first: a small file can claim a huge image
                // (a decompression bomb), and decoding it would take the memory.
                guard let (width, height) = Tesseract.declaredSize(bytes, index: page - 1) else {
                    throw KBError(.invalidText, "the image cannot be decoded")
                }
                guard max(width, height) <= Self.maximumSide, width * height <= Self.maximumPixels else {
                    throw KBError(.invalidText, "the image is \(width) × \(height) px, larger than OCR reads (\(Self.maximumSide) px a side, \(Self.maximumPixels / 1_000_000) megapixels)")
                }
                guard let image = Tesseract.readImage(bytes, index: page - 1) else { throw KBError(.invalidText, "the image cannot be decoded") }
                return image
            })
        var pages = Array(repeating: "", count: count)
        let marks = recognised.apply(to: &pages)
        let warnings = recognised.warnings(file: name, floor: ocr.settings.confidenceFloor)
        let labels = (1...count).map(String.init)
        let document = PDFText.assemble(pages: pages, labels: labels)
        if document.emptyPages.count == count {
            throw KBError(.invalidText, "\(name): OCR found no text on \(count == 1 ? "the image" : "any of its \(count) pages")"
                + " (\(ocr.settings.languageList)); a blank page, or a picture without words?" + warnings.map { " " + $0 }.joined())
        }
        let scalars = Array(document.text.unicodeScalars)
        let sections = PDFLoader.sections(scalars, outline: [])
        let spans = options.chunker.chunk(scalars, sections: sections, lineBreaksEndSentences: false)
        let title = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let source = Source(path: path, kind: .image, title: title, contentHash: contentHash, size: size,
                            modifiedAt: modifiedAt, tags: options.tags, ocr: ocr.settings.record)
        let snippets = PDFLoader.snippets(spans, scalars: scalars, document: document, labels: labels, marks: marks,
                                          title: title, sourceTags: options.tags, options: options)
        return SourceDocument(source: source, snippets: snippets, warnings: warnings,
                              pageStarts: PDFLoader.pageStarts(document, labels: labels))
    }
}

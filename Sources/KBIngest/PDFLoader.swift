import CPoppler
public import Foundation
public import KBCore

/// Turns a PDF into a source and its snippets, with the pages (and printed page labels) each
/// snippet spans. Text comes from poppler in reading order and is cleaned by `PDFText`; the
/// chunker works on the whole document, so a paragraph may continue across a page break.
///
/// - Title: the metadata title, else the words in the largest font on the first three pages
///   (the first large heading) when they are 8–150 characters of left-to-right text, else the
///   first line of text, else the file name. Metadata keywords become tags.
/// - Heading paths come from the outline (bookmarks): poppler's C++ API gives no destination
///   pages for outline entries, so each title is placed where its text first occurs after the
///   previous entry's place; entries whose title cannot be found are skipped.
/// - Pages without a usable text layer (no letter or digit in it) are rendered and read by OCR
///   when `ocr` allows it (`--ocr auto`, the default; `--ocr force` reads every page), in page
///   order with the text-layer pages; snippets from OCR pages carry an `OCRMark`. Without OCR, a
///   PDF without any text layer fails (`no text layer on N of M pages`) and pages without text
///   are named in a warning.
public struct PDFLoader: Sendable {
    public var options: IngestOptions
    /// Opens encrypted PDFs. The default is none.
    public var password: String?
    /// Reads pages without a text layer; nil leaves them empty (as `--ocr never`).
    public var ocr: OCRSession?

    public init(options: IngestOptions, password: String? = nil, ocr: OCRSession? = nil) {
        self.options = options
        self.password = password
        self.ocr = ocr
    }

    /// Reads the PDF at `path` from disk and loads it (for tools and tests; ingest reads each file
    /// once and calls `load(_:path:…)` with its bytes).
    public func load(path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil) throws -> SourceDocument {
        try load(try FileBytes.read(path, name: displayName), path: path, displayName: displayName, contentHash: contentHash, modifiedAt: modifiedAt)
    }

    /// Loads the PDF whose bytes are `data` (the file at `path`, read once by the caller, which
    /// hashed them): the signature check and poppler read these bytes, not the file again.
    public func load(_ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil) throws -> SourceDocument {
        let name = displayName ?? path
        try Self.checkSignature(data, name: name)
        guard data.count <= Int(Int32.max) else {
            throw KBError(.invalidText, "\(name) is larger than 2 GB, more than poppler reads from memory. Split the PDF.")
        }
        return try data.withUnsafeBytes { raw in
            // The bytes stay valid, unchanged, for the whole of this closure; every document opened
            // from them (one per worker) is closed before it returns.
            let bytes = PDFBytes(base: raw.baseAddress!.assumingMemoryBound(to: CChar.self), count: Int32(data.count))
            let password = self.password
            return try load(name: name, path: path, contentHash: contentHash, size: data.count, modifiedAt: modifiedAt) { status in
                kb_pdf_open_data(bytes.base, bytes.count, password, &status)
            }
        }
    }

    /// Each page's printed label and text layer, in order (empty for a page without one, such as
    /// a scan): what the console's chunk inspector shows beside a page's snippets.
    public static func pageTexts(_ data: Data, name: String, password: String? = nil) throws -> [(label: String, text: String)] {
        try checkSignature(data, name: name)
        return try data.withUnsafeBytes { raw in
            let bytes = PDFBytes(base: raw.baseAddress!.assumingMemoryBound(to: CChar.self), count: Int32(data.count))
            let open: @Sendable (inout kb_pdf_status) -> OpaquePointer? = { status in kb_pdf_open_data(bytes.base, bytes.count, password, &status) }
            var status = KB_PDF_OK
            guard let pdf = open(&status) else { throw KBError(.invalidText, "\(name) cannot be opened: poppler cannot read it.") }
            defer { kb_pdf_close(pdf) }
            let (pages, labels) = extractPages(pdf, count: Int(kb_pdf_page_count(pdf)), open: open)
            return pages.indices.map { (labels.indices.contains($0) && !labels[$0].isEmpty ? labels[$0] : String($0 + 1), pages[$0]) }
        }
    }

    /// Loads a PDF that `open` opens (once for the document, and once more for each worker that
    /// reads pages on another thread: a poppler document must not be shared between threads).
    func load(name: String, path: String, contentHash: String, size: Int, modifiedAt: Date?,
              open: @escaping @Sendable (inout kb_pdf_status) -> OpaquePointer?) throws -> SourceDocument {
        var status = KB_PDF_OK
        guard let pdf = open(&status) else {
            switch status {
            case KB_PDF_LOCKED where password == nil:
                throw KBError(.invalidText, "\(name) is encrypted. Pass its password with --password.")
            case KB_PDF_LOCKED:
                throw KBError(.invalidText, "\(name) is encrypted and the password given with --password does not open it.")
            default:
                throw KBError(.invalidText, "\(name) is damaged or truncated: poppler cannot read it. Re-download or re-export the PDF.")
            }
        }
        defer { kb_pdf_close(pdf) }

        let count = Int(kb_pdf_page_count(pdf))
        guard count > 0 else { throw KBError(.invalidText, "\(name) has no pages.") }
        guard count <= Self.maximumPages else {
            throw KBError(.invalidText, "\(name) has \(count) pages, more than kb reads in one PDF (\(Self.maximumPages)). Split it.")
        }
        var (pages, labels) = Self.extractPages(pdf, count: count, open: open)
        var warnings: [String] = []
        if PDFText.looksLikeCP1251AsLatin1(pages) {
            pages = pages.map(PDFText.repairCP1251)
            warnings.append("\(name): its fonts map Cyrillic to Latin-1 code points; the text was re-read as CP1251.")
        }

        // Pages without a usable text layer (or every page, forced) go through OCR.
        // The text layer, assembled once: it decides which pages need OCR, and it is the document
        // itself when none get any text from OCR.
        var document = PDFText.assemble(pages: pages, labels: labels)
        let mode = ocr?.settings.mode ?? .never
        let wanted = mode == .force ? Array(1...count) : mode == .auto ? Self.pagesWithoutUsableText(document, pageCount: count) : []
        var marks: [Int: OCRMark] = [:]
        var ocrRecord: String?
        if let ocr, !wanted.isEmpty {
            try ocr.checkUsable(file: name, pages: wanted.count)
            let dpi = ocr.settings.dpi
            let recognised = OCRPages.recognise(
                wanted, file: name, contentHash: contentHash, session: ocr,
                open: { () -> SendablePDF? in
                    var status = KB_PDF_OK
                    return open(&status).map(SendablePDF.init)
                },
                close: { kb_pdf_close($0.pointer) },
                image: { pdf, page in try Self.render(pdf.pointer, page: page, dpi: dpi) })
            marks = recognised.apply(to: &pages)
            if !marks.isEmpty { document = PDFText.assemble(pages: pages, labels: labels) }
            warnings += recognised.warnings(file: name, floor: ocr.settings.confidenceFloor)
            ocrRecord = ocr.settings.record
        }
        if document.emptyPages.count == count {
            if !wanted.isEmpty {
                throw KBError(.invalidText, "\(name): no text found on any of its \(count) pages, neither in a text layer nor by OCR"
                    + " (\(ocr!.settings.languageList)); blank pages, or pictures without words?"
                    + warnings.map { " " + $0 }.joined())
            }
            let hint = ocr == nil ? "OCR is not enabled" : "OCR is off (--ocr never); run with --ocr auto to read the pages"
            throw KBError(.invalidText, "\(name): no text layer on \(count) of \(count) pages (scanned? \(hint)).")
        }
        let unread = document.emptyPages.filter { !wanted.contains($0) }
        if !unread.isEmpty {
            let list = unread.prefix(20).map(String.init).joined(separator: ", ") + (unread.count > 20 ? ", …" : "")
            warnings.append("\(name): no text on \(unread.count) of \(count) pages (\(list)); images only?"
                + (mode == .never && ocr != nil ? " OCR is off (--ocr never)." : ""))
            if mode == .never && ocr != nil { ocrRecord = OCRMode.never.rawValue }
        }

        let scalars = Array(document.text.unicodeScalars)
        var outline: [(level: Int, title: String)] = []
        for i in 0..<Int(kb_pdf_outline_count(pdf)) {
            if let title = Self.take(kb_pdf_outline_title(pdf, Int32(i)))?.trimmingCharacters(in: .whitespacesAndNewlines), !title.isEmpty {
                outline.append((Int(kb_pdf_outline_level(pdf, Int32(i))), title))
            }
        }
        let sections = Self.sections(scalars, outline: outline)
        let spans = options.chunker.chunk(scalars, sections: sections, lineBreaksEndSentences: false)

        let metadataTitle = (Self.take(kb_pdf_info(pdf, "Title")) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        var largest = (Self.take(kb_pdf_largest_text(pdf, 3)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if warnings.contains(where: { $0.contains("CP1251") }) { largest = PDFText.repairCP1251(largest) }
        let firstLine = document.text.split(separator: "\n").first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
        let title = !metadataTitle.isEmpty ? metadataTitle
            : Self.usableHeading(largest) ? largest
            : (4...120).contains(firstLine.count) ? firstLine
            : URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let keywords = (Self.take(kb_pdf_info(pdf, "Keywords")) ?? "")
            .split(whereSeparator: { $0 == "," || $0 == ";" }).map { Tag(String($0)) }.filter { !$0.isEmpty }
        let sourceTags = unique(keywords + options.tags)
        var created: Date?
        let stamp = kb_pdf_creation_date(pdf)
        if stamp > 0 { created = Date(timeIntervalSince1970: TimeInterval(stamp)) }
        var descriptions: [String] = []
        for key in ["Subject", "Author"] {
            if let value = Self.take(kb_pdf_info(pdf, key)), !value.isEmpty { descriptions.append(value) }
        }
        let source = Source(path: path, kind: .pdf, title: title, contentHash: contentHash, size: size,
                            modifiedAt: modifiedAt ?? created, tags: sourceTags, keywords: descriptions, ocr: ocrRecord)
        let snippets = Self.snippets(spans, scalars: scalars, document: document, labels: labels, marks: marks,
                                     title: title, sourceTags: sourceTags, options: options)
        return SourceDocument(source: source, snippets: snippets, warnings: warnings, pageStarts: Self.pageStarts(document, labels: labels))
    }

    /// Where each page starts in the document's text, with its label.
    static func pageStarts(_ document: PDFText.Document, labels: [String]) -> [PageStart] {
        document.pageStarts.enumerated().map { index, offset in
            PageStart(page: index + 1, offset: offset, label: labels.indices.contains(index) ? labels[index] : nil)
        }
    }

    /// Snippets of a paged document (a PDF or a scanned image): each with the pages it spans,
    /// their printed labels, and the weakest OCR mark among its pages.
    static func snippets(
        _ spans: [Chunker.Span], scalars: [Unicode.Scalar], document: PDFText.Document, labels: [String], marks: [Int: OCRMark],
        title: String, sourceTags: [Tag], options: IngestOptions
    ) -> [Snippet] {
        // On every core for a long document (6,000 snippets of a book took 0.16 s on one).
        Array(spans.enumerated()).concurrentMap(minimumCount: 256) { ordinal, span -> Snippet in
            let text = String(String.UnicodeScalarView(scalars[span.range]))
            let first = document.page(at: span.range.lowerBound), last = document.page(at: max(span.range.lowerBound, span.range.upperBound - 1))
            var tags = sourceTags
            if let vocabulary = options.vocabulary {
                tags = unique(tags + vocabulary.tags(for: ([title] + span.headingPath + [text]).joined(separator: "\n")))
            }
            return Snippet(ordinal: ordinal, text: text, start: span.range.lowerBound, end: span.range.upperBound,
                           headingPath: span.headingPath,
                           pages: PageRange(start: first, end: last, startLabel: labels[first - 1], endLabel: labels[last - 1]),
                           tags: tags, ocr: (first...last).reduce(nil) { OCRMark.weakest($0, marks[$1]) })
        }
    }

    /// Pages (1-based) whose text layer, once running headers, footers and page numbers are
    /// removed, holds fewer than 10 letters: scans (perhaps with a scanner's page number or
    /// stamp) and pages that are one picture.
    static func pagesWithoutUsableText(_ document: PDFText.Document, pageCount: Int) -> [Int] {
        let scalars = Array(document.text.unicodeScalars)
        return (1...pageCount).filter { page in
            let start = document.pageStarts[page - 1], end = page < pageCount ? document.pageStarts[page] : scalars.count
            return scalars[start..<max(start, end)].lazy.filter(\.properties.isAlphabetic).prefix(10).count < 10
        }
    }

    /// The most pages one PDF may have: a real book has a few thousand; a file that claims more is
    /// refused before any page is read.
    public static let maximumPages = 50_000

    /// Pages are rendered at most this many pixels along their longer side (posters and maps
    /// are rendered at a lower resolution); a page that would fall under 70 dpi fails alone.
    static let maximumRenderSide = 12_000

    /// The resolution a page is first rendered at to see whether it holds any ink: any mark, even
    /// a hairline or a speck a hundredth of an inch wide, leaves a pixel short of white at it.
    static let previewDPI = 24

    /// Renders a page (1-based) as a grey image for OCR, at `dpi` or less for oversized pages;
    /// a page without any ink as its small white preview.
    static func render(_ pdf: OpaquePointer, page: Int, dpi: Int) throws -> OpaquePointer {
        var width = 0.0, height = 0.0
        guard kb_pdf_page_size(pdf, Int32(page - 1), &width, &height) != 0, width > 0, height > 0 else {
            throw KBError(.invalidText, "poppler cannot read the page's size")
        }
        let longest = max(width, height) / 72
        let fitted = min(dpi, Int(Double(maximumRenderSide) / longest))
        guard fitted >= 70 else {
            throw KBError(.invalidText, String(format: "the page is %.0f × %.0f in, too large to render for OCR", width / 72, height / 72))
        }
        var w: Int32 = 0, h: Int32 = 0, stride: Int32 = 0
        // A page without any ink (a book's blank verso) is seen at a glance: rendered at
        // `previewDPI`, every pixel white. That image is handed on (OCR finds it blank) instead of
        // one at full resolution, which took 10–15 ms a page of Octave's manual (24 blank pages).
        if let preview = kb_pdf_render_gray(pdf, Int32(page - 1), Int32(previewDPI), &w, &h, &stride) {
            defer { kb_pdf_free(preview) }
            let white = (0..<Int(h)).allSatisfy { row in
                UnsafeBufferPointer(start: preview + row * Int(stride), count: Int(w)).allSatisfy { $0 == 255 }
            }
            if white, let image = Tesseract.image(gray: preview, width: w, height: h, stride: stride, dpi: Int32(previewDPI)) {
                return image
            }
        }
        guard let pixels = kb_pdf_render_gray(pdf, Int32(page - 1), Int32(fitted), &w, &h, &stride) else {
            throw KBError(.invalidText, "poppler cannot render it")
        }
        defer { kb_pdf_free(pixels) }
        guard let image = Tesseract.image(gray: pixels, width: w, height: h, stride: stride, dpi: Int32(fitted)) else {
            throw KBError(.invalidText, "its image (\(w) × \(h) px) could not be made")
        }
        return image
    }

    /// Page texts and labels. Long documents are split between the cores, a run of
    /// `extractionRun` pages at a time to whichever worker is free (halves were uneven: the
    /// Octave manual's took 1.15 and 1.36 s); each worker opens its own copy of the document,
    /// because a poppler document must not be shared between threads.
    static let extractionRun = 16

    static func extractPages(_ pdf: OpaquePointer, count: Int, open: @Sendable (inout kb_pdf_status) -> OpaquePointer?) -> ([String], [String]) {
        let workers = count >= 64 ? max(1, ProcessInfo.processInfo.activeProcessorCount) : 1
        let pages = ConcurrentSlots<(text: String, label: String)>(count: count)
        let next = LockedValue(0)
        let shared = SendablePDF(pdf)
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            var status = KB_PDF_OK
            let own = w == 0 ? nil : open(&status)
            defer { if let own { kb_pdf_close(own) } }
            let document = own ?? shared.pointer
            // A worker whose copy cannot be opened leaves the pages to the others.
            guard w == 0 || own != nil else { return }
            func extract(_ index: Int) {
                var text = take(kb_pdf_page_text(document, Int32(index))) ?? ""
                // Right-to-left pages: lines rebuilt from the words' positions (PDFLines).
                if PDFLines.holdsRightToLeft(text), let rebuilt = PDFLines.text(of: words(document, page: index)) { text = rebuilt }
                let label = take(kb_pdf_page_label(document, Int32(index))) ?? ""
                pages.set(index, (text, label.isEmpty ? String(index + 1) : label))
            }
            while true {
                let start = next.withLock { start in
                    defer { start = min(count, start + extractionRun) }
                    return start
                }
                guard start < count else { break }
                for index in start..<min(count, start + extractionRun) { extract(index) }
            }
        }
        let values = pages.values
        return (values.map { $0?.text ?? "" }, values.indices.map { values[$0]?.label ?? String($0 + 1) })
    }

    /// The words poppler found on a page (0-based), with their boxes; none when it cannot say.
    static func words(_ pdf: OpaquePointer, page: Int) -> [PDFLines.Word] {
        guard let list = kb_pdf_page_words(pdf, Int32(page)) else { return [] }
        defer { kb_pdf_words_free(list) }
        let found = list.pointee
        var words: [PDFLines.Word] = []
        words.reserveCapacity(Int(found.word_count))
        for w in 0..<Int(found.word_count) {
            let word = found.words[w]
            // Rotated text is left to poppler: its order is not left to right.
            guard word.rotation == 0 else { return [] }
            let range = Int(word.first_char)..<Int(word.first_char + word.char_count)
            words.append(PDFLines.Word(
                x0: word.x0, y0: word.y0, x1: word.x1, y1: word.y1,
                scalars: range.map { Unicode.Scalar(found.chars[$0]) ?? "\u{FFFD}" },
                left: range.map { found.char_x0[$0] }, right: range.map { found.char_x1[$0] }))
        }
        return words
    }

    /// Large-font text makes a title when it is a few words long and left-to-right: poppler lists
    /// words by position, so right-to-left text would come out in visual order.
    static func usableHeading(_ text: String) -> Bool {
        guard (8...150).contains(text.count) else { return false }
        return !text.unicodeScalars.contains { (0x0590...0x08FF).contains($0.value) || (0xFB1D...0xFEFC).contains($0.value) }
    }

    /// Checks, before poppler sees them, that the bytes are not empty and start like a PDF.
    static func checkSignature(_ data: Data, name: String) throws {
        guard !data.isEmpty else { throw KBError(.invalidText, "\(name) is empty (0 bytes), not a PDF.") }
        let head = data.prefix(1024)
        guard head.range(of: Data("%PDF-".utf8)) != nil else {
            let start = String(decoding: head.prefix(16), as: UTF8.self).unicodeScalars
                .map { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0xFFFD ? "·" : String($0) }.joined()
            throw KBError(.invalidText, "\(name) is not a PDF: it does not start with %PDF- (it starts with \"\(start)\").")
        }
    }

    /// Sections of the document text at the outline's headings (placed by finding each title).
    static func sections(_ scalars: [Unicode.Scalar], outline: [(level: Int, title: String)]) -> [TextSection] {
        let folded = foldedForSearch(scalars)
        let lines = LineCandidates(folded: folded, original: scalars)
        var marks: [(offset: Int, level: Int, title: String)] = []
        var from = 0
        for item in outline {
            let needle = Array(foldedForSearch(Array(item.title.unicodeScalars)))
            guard !needle.isEmpty, let found = find(needle, in: folded, from: from, wholeLineOf: scalars, lines: lines) else { continue }
            marks.append((found, item.level, item.title))
            from = found + needle.count
        }
        var sections: [TextSection] = []
        var stack: [(level: Int, title: String)] = []
        var start = 0
        func close(_ end: Int) {
            guard start < end else { return }
            let blocks = paragraphBlocks(scalars, start..<end)
            if !blocks.isEmpty { sections.append(TextSection(headingPath: stack.map(\.title), blocks: blocks)) }
        }
        for mark in marks {
            close(mark.offset)
            while let last = stack.last, last.level >= mark.level { stack.removeLast() }
            stack.append((mark.level, mark.title))
            start = mark.offset
        }
        close(scalars.count)
        return sections
    }

    /// Lower-cased scalars with every whitespace run as one space (same length as the input:
    /// extra whitespace becomes U+0000 so offsets still match).
    static func foldedForSearch(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(scalars.count)
        var previousSpace = false
        for s in scalars {
            // ASCII without Unicode's tables (a book is mostly ASCII): 0.1 s of the Octave manual's reading.
            if s.value < 0x80 {
                let space = s == " " || (0x09...0x0D).contains(s.value)
                out.append(space ? (previousSpace ? "\u{0}" : " ") : (0x41...0x5A).contains(s.value) ? Unicode.Scalar(s.value + 0x20)! : s)
                previousSpace = space
            } else if s.properties.isWhitespace {
                out.append(previousSpace ? "\u{0}" : " ")
                previousSpace = true
            } else {
                let lower = s.properties.lowercaseMapping.unicodeScalars
                out.append(lower.count == 1 ? lower.first! : s)
                previousSpace = false
            }
        }
        return out
    }

    /// The first line start from `from` where `needle` stands alone on a line of `original`,
    /// optionally after a section number (`2.1 `, `A.3 `), reading every line: the reference
    /// that the search over `LineCandidates` (what `sections` uses) is tested against.
    static func find(_ needle: [Unicode.Scalar], in haystack: [Unicode.Scalar], from: Int, wholeLineOf original: [Unicode.Scalar]) -> Int? {
        let compact = needle.filter { $0 != "\u{0}" }
        guard !compact.isEmpty, haystack.count >= compact.count else { return nil }
        var lineStart = from
        if lineStart > 0 && original[lineStart - 1] != "\n" {
            while lineStart < original.count && original[lineStart - 1] != "\n" { lineStart += 1 }
        }
        while lineStart < haystack.count {
            if matchesLine(compact, at: lineStart, haystack, original) || matchesLine(compact, at: afterNumber(lineStart, original), haystack, original) {
                return lineStart
            }
            while lineStart < original.count && original[lineStart] != "\n" { lineStart += 1 }
            lineStart += 1
        }
        return nil
    }

    /// The lines of a document grouped by the first scalar a title matched there would be compared
    /// with — at the line's start and after its section number (`matchesLine` skips U+0000 and
    /// fails on any other first scalar) — so that `find` tries only the lines that can match:
    /// a book's outline has thousands of titles, and each title not found used to read every
    /// line after it.
    struct LineCandidates {
        /// Every line start, ascending: 0 and each offset after a newline, within the text.
        let starts: [Int]
        /// Indices into `starts`, ascending, by first compared scalar.
        let byFirst: [Unicode.Scalar: [Int]]

        init(folded: [Unicode.Scalar], original: [Unicode.Scalar]) {
            var starts: [Int] = folded.isEmpty ? [] : [0]
            for index in original.indices where original[index] == "\n" && index + 1 < folded.count { starts.append(index + 1) }
            func firstCompared(_ position: Int) -> Unicode.Scalar? {
                var k = position
                while k < folded.count && folded[k] == "\u{0}" { k += 1 }
                return k < folded.count ? folded[k] : nil
            }
            var byFirst: [Unicode.Scalar: [Int]] = [:]
            for (line, start) in starts.enumerated() {
                let first = firstCompared(start)
                let afterNumber = firstCompared(PDFLoader.afterNumber(start, original))
                if let first { byFirst[first, default: []].append(line) }
                if let afterNumber, afterNumber != first { byFirst[afterNumber, default: []].append(line) }
            }
            self.starts = starts
            self.byFirst = byFirst
        }
    }

    /// `find`, trying only the lines `lines` says can match: the same answer, without reading
    /// the lines that cannot.
    static func find(_ needle: [Unicode.Scalar], in haystack: [Unicode.Scalar], from: Int, wholeLineOf original: [Unicode.Scalar],
                     lines: LineCandidates) -> Int? {
        let compact = needle.filter { $0 != "\u{0}" }
        guard let first = compact.first, haystack.count >= compact.count, let candidates = lines.byFirst[first] else { return nil }
        // The first line starting at or after `from`, then the first candidate line from there.
        var low = 0, high = lines.starts.count
        while low < high { let mid = (low + high) / 2; if lines.starts[mid] < from { low = mid + 1 } else { high = mid } }
        let firstLine = low
        low = 0
        high = candidates.count
        while low < high { let mid = (low + high) / 2; if candidates[mid] < firstLine { low = mid + 1 } else { high = mid } }
        for line in candidates[low...] {
            let start = lines.starts[line]
            if matchesLine(compact, at: start, haystack, original) || matchesLine(compact, at: afterNumber(start, original), haystack, original) {
                return start
            }
        }
        return nil
    }

    /// Where a line's text starts after a section number such as `2.1 ` or `A.3 ` (or the line start).
    static func afterNumber(_ start: Int, _ original: [Unicode.Scalar]) -> Int {
        var i = start
        var sawNumber = false
        while i < original.count, original[i].properties.numericType != nil || original[i] == "." || (i == start && original[i].properties.isUppercase) {
            if original[i] != "." { sawNumber = true }
            i += 1
        }
        guard sawNumber, i < original.count, original[i] == " ", i - start <= 12 else { return start }
        return i + 1
    }

    static func matchesLine(_ needle: [Unicode.Scalar], at start: Int, _ haystack: [Unicode.Scalar], _ original: [Unicode.Scalar]) -> Bool {
        var j = 0, k = start
        while j < needle.count && k < haystack.count {
            if haystack[k] == "\u{0}" { k += 1; continue }
            if haystack[k] != needle[j] || original[k] == "\n" { return false }
            j += 1
            k += 1
        }
        guard j == needle.count else { return false }
        while k < original.count && original[k] == " " { k += 1 }
        return k == original.count || original[k] == "\n"
    }

    /// Blocks separated by blank lines within a range, trimmed.
    static func paragraphBlocks(_ scalars: [Unicode.Scalar], _ range: Range<Int>) -> [Range<Int>] {
        var blocks: [Range<Int>] = []
        var start = range.lowerBound
        var i = range.lowerBound
        while i < range.upperBound {
            if scalars[i] == "\n", i + 1 < range.upperBound, scalars[i + 1] == "\n" {
                if let t = MarkdownStructure.trim(start..<i, scalars) { blocks.append(t) }
                while i < range.upperBound && scalars[i] == "\n" { i += 1 }
                start = i
                continue
            }
            i += 1
        }
        if let t = MarkdownStructure.trim(start..<range.upperBound, scalars) { blocks.append(t) }
        return blocks
    }

    /// Takes ownership of a C string from the shim.
    static func take(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { kb_pdf_free(pointer) }
        return String(cString: pointer)
    }
}

/// The first worker's document handle, used only by that worker.
/// @unchecked Sendable: no two threads use the pointer at once.
/// A PDF's bytes in memory, handed to the threads that open documents from them.
/// @unchecked Sendable: the bytes are only read, and outlive every thread that reads them
/// (`PDFLoader.load(_:path:…)` keeps them for the whole load).
struct PDFBytes: @unchecked Sendable {
    let base: UnsafePointer<CChar>
    let count: Int32
}

struct SendablePDF: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

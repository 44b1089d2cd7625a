import CPoppler
import Foundation
import KBCore
import KBTestSupport
import Testing

@testable import KBIngest

/// OCR on scans the tests make themselves: pages of the committed text PDFs (English with a
/// Ukrainian paragraph, Arabic) rendered to images at 150–200 dpi and written as image-only
/// PDFs, PNG and TIFF files. The text layer of the originals is the truth.
@Suite struct OCRTests {
    /// Word accuracy every clean generated scan must reach. Measured: 0.93–1.00 per page at
    /// 150–300 dpi (scripts/bench/bench-ocr.sh; the misses are page numbers and running headers).
    static let accuracyFloor = 0.9

    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-ocr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    static func fixture(_ name: String) -> String {
        Bundle.module.url(forResource: name, withExtension: "pdf", subdirectory: "Fixtures/pdf")!.path
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static func session(_ languages: [String] = ["eng"], mode: OCRMode = .auto, dpi: Int = 200, cache: MemoryCache? = nil)
        -> OCRSession {
        let settings = OCRSettings(mode: mode, languages: languages, dpi: dpi)
        return OCRSession(settings: settings, recognised: { page, hash in cache?.store(page, contentHash: hash, key: settings.cacheKey) })
    }

    static func options(chunk: Int = 500) throws -> IngestOptions {
        IngestOptions(chunker: try Chunker(targetCharacters: chunk, overlapCharacters: 0))
    }

    func load(_ file: String, session: OCRSession?, chunk: Int = 500) throws -> SourceDocument {
        if file.hasSuffix(".pdf") {
            return try PDFLoader(options: try Self.options(chunk: chunk), ocr: session)
                .load(path: file, displayName: URL(fileURLWithPath: file).lastPathComponent, contentHash: "hash-\(file)")
        }
        return try ImageLoader(options: try Self.options(chunk: chunk), ocr: session)
            .load(path: file, displayName: URL(fileURLWithPath: file).lastPathComponent, contentHash: "hash-\(file)")
    }

    func error(_ body: () throws -> SourceDocument) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as KBError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    // MARK: - Recognition

    @Test func anImageOnlyBookIsReadWithItsPagesInOrder() throws {
        let book = Self.fixture("book")
        let scan = path("book-scan.pdf")
        try ScanMaker.writePDF(try ScanMaker.render(pdf: book, dpi: 200), to: scan, jpeg: true)
        let document = try load(scan, session: Self.session(["eng", "ukr"]), chunk: 200)
        #expect(document.source.ocr == "auto eng+ukr 200")
        #expect(document.snippets.allSatisfy { $0.ocr != nil && $0.ocr!.confidence > 80 })
        // The phrase printed on the fourth physical page is found there.
        let zebra = try #require(document.snippets.first { $0.text.contains("zebra quartz") })
        #expect(zebra.pages!.start <= 4 && 4 <= zebra.pages!.end)
        let chapterTwo = try #require(document.snippets.first { $0.text.contains("nebula catalogue") })
        #expect(chapterTwo.pages!.end == 6)
        // Word accuracy against the text layer of the original, English and Ukrainian together.
        let truth = try ScanMaker.text(pdf: book).joined(separator: "\n")
        let text = document.snippets.map(\.text).joined(separator: "\n")
        #expect(ScanMaker.wordAccuracy(recognised: text, truth: truth) >= Self.accuracyFloor)
        #expect(text.contains("Київ") && text.contains("українською"))
    }

    @Test func arabicIsReadInLogicalOrder() throws {
        let image = path("arabic.png")
        try ScanMaker.render(pdf: Self.fixture("arabic"), pages: [1], dpi: 200)[0].write(to: image, format: .png)
        let document = try load(image, session: Self.session(["ara"]))
        #expect(document.source.kind == .image)
        #expect(document.source.title == "arabic")
        let text = document.snippets.map(\.text).joined(separator: "\n")
        #expect(text.contains("مرحبا بالعالم"))
        let truth = try ScanMaker.text(pdf: Self.fixture("arabic"))[0]
        #expect(ScanMaker.wordAccuracy(recognised: text, truth: truth) >= Self.accuracyFloor)
    }

    @Test func aMixedPDFKeepsItsTextLayerAndReadsOnlyTheScannedPage() throws {
        let document = try load(Self.fixture("mixed-scan"), session: Self.session(), chunk: 100)
        let walrus = try #require(document.snippets.first { $0.text.contains("walrus ledger") })
        #expect(walrus.pages?.end == 2 && walrus.pages?.endLabel == "1")
        #expect(walrus.ocr != nil)
        // Text-layer pages stay as they were, before and after the scan, without an OCR mark.
        let first = try #require(document.snippets.first { $0.text.contains("lighthouses") })
        #expect(first.pages == PageRange(start: 1, end: 1, startLabel: "i", endLabel: "i") && first.ocr == nil)
        let last = try #require(document.snippets.last)
        #expect(last.text.contains("closes the records") && last.pages?.start == 3 && last.ocr == nil)
        #expect(document.snippets.map(\.start) == document.snippets.map(\.start).sorted())
        #expect(document.warnings.isEmpty, "\(document.warnings)")
    }

    @Test func forceReadsEveryPageAndNeverReadsNone() throws {
        let mixed = Self.fixture("mixed-scan")
        let forced = try load(mixed, session: Self.session(mode: .force), chunk: 100)
        #expect(forced.snippets.allSatisfy { $0.ocr != nil })
        #expect(forced.source.ocr == "force eng 200")
        #expect(forced.snippets.contains { $0.text.contains("lighthouses") })

        let never = try load(mixed, session: Self.session(mode: .never), chunk: 100)
        #expect(!never.snippets.contains { $0.text.contains("walrus") })
        #expect(never.source.ocr == "never")
        #expect(never.warnings == ["mixed-scan.pdf: no text on 1 of 3 pages (2); images only? OCR is off (--ocr never)."])

        let scan = path("scan.pdf")
        try ScanMaker.writePDF(try ScanMaker.render(pdf: mixed, pages: [2], dpi: 150), to: scan)
        #expect(error { try load(scan, session: Self.session(mode: .never)) }
            == "scan.pdf: no text layer on 1 of 1 pages (scanned? OCR is off (--ocr never); run with --ocr auto to read the pages).")
        let image = path("scan.png")
        try ScanMaker.render(pdf: mixed, pages: [2], dpi: 150)[0].write(to: image, format: .png)
        #expect(error { try load(image, session: Self.session(mode: .never)) }?.contains("OCR is off (--ocr never)") == true)
    }

    // MARK: - Pages that go wrong

    @Test func aBlankPageIsNamedAndABlankImageFails() throws {
        let pages = try ScanMaker.render(pdf: Self.fixture("mixed-scan"), pages: [2], dpi: 150)
        let scan = path("with-blank.pdf")
        try ScanMaker.writePDF([pages[0], ScanMaker.blank(dpi: 150)], to: scan)
        let session = Self.session()
        let document = try load(scan, session: session)
        #expect(document.warnings == ["with-blank.pdf: OCR found no text on page 2 (blank?)."])
        #expect(session.blankPagesSkipped == 1)   // found blank by its pixels; Tesseract never saw it
        #expect(document.snippets.allSatisfy { $0.pages?.end == 1 })

        let blank = path("blank.png")
        try ScanMaker.blank(dpi: 150).write(to: blank, format: .png)
        #expect(error { try load(blank, session: Self.session()) }?.hasPrefix("blank.png: OCR found no text on the image (eng)") == true)
    }

    @Test func onlyPagesWithoutInkCountAsBlank() throws {
        let blank = ScanMaker.blank(dpi: 300)
        #expect(Tesseract.isBlank(blank.pointer))
        for page in try ScanMaker.render(pdf: Self.fixture("mixed-scan"), dpi: 150) { #expect(!Tesseract.isBlank(page.pointer)) }
    }

    @Test func aPageWithoutInkIsSeenAtAGlanceAndAnyMarkIsRenderedInFull() throws {
        // Three letter-size pages: nothing on the first; a black square 1/100 inch wide (a quarter
        // of a pixel at the preview's 24 dpi) on the second; a grey picture over the third.
        let speck = "0 0 0 rg 300 400 0.72 0.72 re f", paint = "q 612 0 0 792 0 0 cm /Im Do Q"
        let pdf = Self.handMadePDF([
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R 4 0 R 6 0 R] /Count 3 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R >>",
            "<< /Length \(speck.utf8.count) >>\nstream\n\(speck)\nendstream",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im 7 0 R >> >> /Contents 8 0 R >>",
            "<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 64 >>\nstream\n"
                + String(repeating: "@", count: 64) + "\nendstream",
            "<< /Length \(paint.utf8.count) >>\nstream\n\(paint)\nendstream",
        ])
        let file = path("speck.pdf")
        try Data(pdf.utf8).write(to: URL(fileURLWithPath: file))
        var status = KB_PDF_OK
        let document = try #require(kb_pdf_open(file, nil, &status))
        defer { kb_pdf_close(document) }
        let pages = try (1...3).map { try PDFLoader.render(document, page: $0, dpi: 300) }
        defer { pages.forEach(Tesseract.free) }
        #expect(Tesseract.size(pages[0]).width == 204)    // 8.5 in at 24 dpi: the white preview
        #expect(Tesseract.isBlank(pages[0]))
        #expect(Tesseract.size(pages[1]).width == 2550)   // at 300 dpi, as asked: any mark is judged there
        #expect(Tesseract.size(pages[2]).width == 2550)   // a grey picture: in full
    }

    @Test func anUpsideDownPageIsTurnedUpright() throws {
        let page = try ScanMaker.render(pdf: Self.fixture("mixed-scan"), pages: [2], dpi: 200)[0]
        let scan = path("upside-down.pdf")
        try ScanMaker.writePDF([page.rotated(2)], to: scan)
        let document = try load(scan, session: Self.session())
        #expect(document.snippets.contains { $0.text.contains("walrus ledger") })
        #expect(document.warnings == ["upside-down.pdf: page 1 was scanned sideways or upside down and was turned upright for OCR."])
    }

    @Test func aPageThatCannotBeReadFailsAlone() throws {
        let page = try ScanMaker.render(pdf: Self.fixture("mixed-scan"), pages: [2], dpi: 150)[0]
        // A 300-pixel image at 1 dpi makes a page 300 inches wide: too large to render for OCR.
        let scan = path("poster.pdf")
        try ScanMaker.writePDF([page, ScanMaker.blank(dpi: 150).withResolution(1), page], to: scan)
        let document = try load(scan, session: Self.session())
        #expect(document.warnings.count == 1)
        #expect(document.warnings[0].hasPrefix("poster.pdf: page 2 could not be read by OCR (the page is "))
        #expect(document.warnings[0].hasSuffix("in, too large to render for OCR); it was left out."))
        #expect(document.snippets.contains { $0.pages?.start == 1 } && document.snippets.contains { $0.pages?.end == 3 })
    }

    @Test func lowConfidencePagesAreNamed() throws {
        // Arabic read with the English model comes out as guesses with low confidence.
        let image = path("arabic.png")
        try ScanMaker.render(pdf: Self.fixture("arabic"), pages: [1], dpi: 200)[0].write(to: image, format: .png)
        let document = try load(image, session: Self.session(["eng"]))
        let warning = try #require(document.warnings.first { $0.contains("OCR confidence below 70 on page 1 (") })
        #expect(warning.hasSuffix("check the scan, or the languages (--ocr-lang)."))
        #expect(document.snippets.allSatisfy { $0.ocr!.confidence < OCRSettings.defaultConfidenceFloor })
    }

    @Test func aMissingLanguageIsNamedWithItsPackage() throws {
        #expect(throws: KBError.self) { try OCRSettings.languages("eng+ukr!") }
        #expect(try OCRSettings.languages("eng+ukr,eng") == ["eng", "ukr"])
        let session = Self.session(["xyz"])
        #expect(session.problem?.contains("apt-get install tesseract-ocr-xyz") == true)
        let scan = path("scan.pdf")
        try ScanMaker.writePDF(try ScanMaker.render(pdf: Self.fixture("mixed-scan"), pages: [2], dpi: 150), to: scan)
        #expect(error { try load(scan, session: session) }?.hasPrefix("scan.pdf: 1 page needs OCR, but: OCR language \"xyz\" is not installed") == true)
        // A PDF with a text layer does not need the language.
        #expect(try load(Self.fixture("book"), session: session).snippets.count > 0)
    }

    // MARK: - Images and the cache

    @Test func aMultiPageTIFFIsABook() throws {
        let pages = try ScanMaker.render(pdf: Self.fixture("book"), pages: [3, 6], dpi: 150)
        let tiff = path("two.tif")
        try ScanMaker.writeTIFF(pages, to: tiff)
        let document = try load(tiff, session: Self.session(), chunk: 100)
        #expect(document.source.kind == .image)
        let chapterTwo = try #require(document.snippets.first { $0.text.contains("nebula catalogue") })
        #expect(chapterTwo.pages == PageRange(start: 2, end: 2))
        #expect(document.snippets.first?.pages?.start == 1)

        let jpeg = path("page.jpg")
        try pages[1].write(to: jpeg, format: .jpeg)
        #expect(try load(jpeg, session: Self.session()).snippets.contains { $0.text.contains("nebula catalogue") })
        let broken = path("broken.png")
        try Data("\u{89}PNG\r\n\u{1A}\nnot an image".utf8).write(to: URL(fileURLWithPath: broken))
        #expect(error { try load(broken, session: Self.session()) }
            == "broken.png cannot be read as a PNG, JPEG or TIFF image (damaged, truncated, or another format).")
    }

    /// An index's page cache, as a writer keeps it: pages handed to the session before a file is
    /// parsed, and each page recognised; counts the pages kept.
    final class MemoryCache: @unchecked Sendable {
        let lock = NSLock()
        var stored: [String: [Int: OCRPage]] = [:]
        var writes = 0

        func pages(contentHash: String, key: String) -> [Int: OCRPage] {
            lock.withLock { stored[contentHash + " " + key] ?? [:] }
        }

        func store(_ page: OCRPage, contentHash: String, key: String) {
            lock.withLock {
                stored[contentHash + " " + key, default: [:]][page.page] = page
                writes += 1
            }
        }
    }

    /// The pages a writer found for the file, handed to the session before the file is parsed.
    func remembered(_ session: OCRSession, _ cache: MemoryCache, file: String) throws -> OCRSession {
        let hash = "hash-\(file)"   // what `load` gives the loader
        session.rememberPages(Array(cache.pages(contentHash: hash, key: session.settings.cacheKey).values), contentHash: hash)
        return session
    }

    @Test func pagesRecognisedBeforeAreNotRecognisedAgainAndNewOnesAreHandedOn() throws {
        let scan = path("cached.pdf")
        try ScanMaker.writePDF(try ScanMaker.render(pdf: Self.fixture("book"), pages: [1, 3, 6], dpi: 150), to: scan)
        let cache = MemoryCache()
        let first = try remembered(Self.session(cache: cache), cache, file: scan)
        let read = try load(scan, session: first)
        #expect(cache.writes == 3 && first.cachedPagesUsed == 0)

        let second = try remembered(Self.session(cache: cache), cache, file: scan)
        let again = try load(scan, session: second)
        #expect(cache.writes == 3 && second.cachedPagesUsed == 3)
        #expect(again.snippets == read.snippets)
        // Other languages are other text: not taken from the cache.
        let other = try remembered(Self.session(["eng", "ukr"], cache: cache), cache, file: scan)
        _ = try load(scan, session: other)
        #expect(cache.writes == 6 && other.cachedPagesUsed == 0)
    }

    @Test func anImageThatClaimsAHugeSizeIsRefusedBeforeItIsDecoded() throws {
        // A 79-byte PNG whose header says 100,000 × 100,000 pixels: decoding it would take 10 GB.
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + body
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in typed {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            return be(UInt32(body.count)) + typed + be(~crc)
        }
        let side: [UInt8] = [0x00, 0x01, 0x86, 0xA0]   // 100,000
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", side + side + [8, 0, 0, 0, 0]) + chunk("IEND", [])
        let error = #expect(throws: KBError.self) {
            try ImageLoader(options: IngestOptions(), ocr: Self.session()).load(Data(png), path: "/bomb.png", contentHash: "h")
        }
        #expect(error?.message.contains("100000 × 100000 px, larger than OCR reads") == true, "\(error?.message ?? "")")
    }

    @Test func aPDFThatClaimsTooManyPagesIsRefusedBeforeItsPagesAreRead() throws {
        let pages = PDFLoader.maximumPages + 1
        let pdf = Self.handMadePDF([
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [" + (0..<pages).map { "\($0 + 3) 0 R" }.joined(separator: " ") + "] /Count \(pages) >>",
        ] + Array(repeating: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>", count: pages))
        let error = #expect(throws: KBError.self) { try PDFLoader(options: IngestOptions()).load(Data(pdf.utf8), path: "/pages.pdf", contentHash: "h") }
        #expect(error?.message.contains("\(pages) pages, more than kb reads") == true, "\(error?.message ?? "")")
    }

    /// A PDF of `objects` (numbered from 1, the first the catalog) with its cross-reference table.
    static func handMadePDF(_ objects: [String]) -> String {
        var pdf = "%PDF-1.4\n"
        var offsets: [Int] = []
        for body in objects {
            offsets.append(pdf.utf8.count)
            pdf += "\(offsets.count) 0 obj\n\(body)\nendobj\n"
        }
        let xref = pdf.utf8.count
        pdf += "xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n" + offsets.map { String(format: "%010d 00000 n \n", $0) }.joined()
        pdf += "trailer\n<< /Size \(offsets.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return pdf
    }

    @Test func sourcesAreReadAgainOnlyWhenTheirOCRWouldChange() {
        let auto = OCRSettings(mode: .auto, languages: ["eng"])
        #expect(!auto.needsRereading(recorded: nil))   // every page had a text layer
        #expect(!auto.needsRereading(recorded: "auto eng 300"))
        #expect(auto.needsRereading(recorded: "never"))
        #expect(auto.needsRereading(recorded: "auto eng+ukr 300"))
        #expect(auto.needsRereading(recorded: "force eng 300"))
        #expect(OCRSettings(mode: .force).needsRereading(recorded: nil))
        #expect(!OCRSettings(mode: .never).needsRereading(recorded: "auto eng 300"))
    }
}

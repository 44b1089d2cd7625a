public import Foundation
import KBCore

/// The pages of a scan (a PNG, JPEG or TIFF source; a multi-page TIFF is a book) as pictures, and
/// the words OCR finds on a scanned page with their boxes: what a citation of a scan opens onto.
public enum ScanPages {
    /// Writes page `number` (1-based) of the image file in `data` to `path` as a PNG `width`
    /// pixels wide (narrower when it would pass `PDFPages.maximumHeight`), colour kept. Returns
    /// the picture's size and the file's page count.
    public static func renderPNG(_ data: Data, name: String, page number: Int, width: Int, to path: String) throws
        -> (width: Int, height: Int, pages: Int) {
        try withPage(data, name: name, page: number) { bytes, pages in
            guard let size = Tesseract.renderPNG(bytes, index: number - 1, width: width, maximumHeight: PDFPages.maximumHeight, to: path) else {
                try? FileManager.default.removeItem(atPath: path)
                throw KBError(.unprocessable, "Page \(number) of \(name) cannot be decoded: the image is damaged or truncated.")
            }
            return (size.width, size.height, pages)
        }
    }

    /// The words OCR finds on page `number` (1-based) of the image file in `data`, read with
    /// `settings`' languages, with their boxes as fractions of the page as the file shows it; and
    /// the file's page count. `quarterTurns` is how the page was turned to be read at ingest
    /// (`OCRPage.quarterTurns`): it is read turned so, and its boxes are turned back.
    public static func words(_ data: Data, name: String, page number: Int, settings: OCRSettings, quarterTurns: Int) throws
        -> (words: [PageWord], pages: Int) {
        try withPage(data, name: name, page: number) { bytes, pages in
            guard let image = Tesseract.readImage(bytes, index: number - 1) else {
                throw KBError(.unprocessable, "Page \(number) of \(name) cannot be decoded: the image is damaged or truncated.")
            }
            defer { Tesseract.free(image) }
            return (try OCRWords.words(image, name: name, page: number, settings: settings, quarterTurns: quarterTurns), pages)
        }
    }

    /// Runs `body` with the file's bytes and page count once page `number` is known to exist and
    /// to be small enough to decode (its size read from its header: a small file can claim a huge
    /// image).
    static func withPage<T>(_ data: Data, name: String, page number: Int, _ body: (ImageBytes, Int) throws -> T) throws -> T {
        if let unavailable = Tesseract.unavailable {
            throw KBError(.unsupportedMode, "\(name) is an image, and \(unavailable): its pages cannot be shown.")
        }
        return try data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else {
                throw KBError(.unprocessable, "\(name) is empty (0 bytes): its pages cannot be shown.")
            }
            // The bytes stay valid, unchanged, for the whole of this closure.
            let bytes = ImageBytes(base: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
            let pages = Tesseract.imageCount(bytes)
            guard pages > 0 else {
                throw KBError(.unprocessable, "\(name) cannot be read as a PNG, JPEG or TIFF image (damaged, truncated, or another format): its pages cannot be shown.")
            }
            guard (1...pages).contains(number) else {
                throw KBError(.notFound, "\(name) has \(pages) page\(pages == 1 ? "" : "s"); there is no page \(number).")
            }
            guard let (width, height) = Tesseract.declaredSize(bytes, index: number - 1) else {
                throw KBError(.unprocessable, "Page \(number) of \(name) cannot be decoded: the image is damaged or truncated.")
            }
            guard max(width, height) <= ImageLoader.maximumSide, width * height <= ImageLoader.maximumPixels else {
                throw KBError(.unprocessable, "Page \(number) of \(name) is \(width) × \(height) px, larger than kb decodes (\(ImageLoader.maximumSide) px a side, \(ImageLoader.maximumPixels / 1_000_000) megapixels).")
            }
            return try body(bytes, pages)
        }
    }
}

extension PDFPages {
    /// The words OCR finds on page `number` (1-based) of a PDF whose page has no text layer,
    /// rendered at `settings.dpi` and read with its languages, boxes as fractions of the page; and
    /// the page count. `quarterTurns` as in `ScanPages.words`.
    public static func ocrWords(_ data: Data, name: String, page number: Int, settings: OCRSettings, quarterTurns: Int) throws
        -> (words: [PageWord], pages: Int) {
        try withDocument(data, name: name) { pdf, pages in
            _ = try size(pdf, page: number, pages: pages, name: name)
            let image: OpaquePointer
            do {
                image = try PDFLoader.render(pdf, page: number, dpi: settings.dpi)
            } catch let error as KBError {
                throw KBError(.unprocessable, "Page \(number) of \(name) cannot be rendered for OCR: \(error.message).")
            }
            defer { Tesseract.free(image) }
            return (try OCRWords.words(image, name: name, page: number, settings: settings, quarterTurns: quarterTurns), pages)
        }
    }
}

/// Words and their boxes from Tesseract, for pages that have no text layer.
enum OCRWords {
    /// The words on `image`, read turned clockwise by `quarterTurns` × 90° when it was scanned
    /// sideways, with boxes as fractions of the image as it is (turned back).
    static func words(_ image: OpaquePointer, name: String, page: Int, settings: OCRSettings, quarterTurns: Int) throws -> [PageWord] {
        if let unavailable = Tesseract.unavailable {
            throw KBError(.unsupportedMode, "Page \(page) of \(name) has no text layer, and \(unavailable): its words cannot be placed.")
        }
        do {
            try settings.checkLanguages()
        } catch let error as KBError {
            throw KBError(.unsupportedMode, "Page \(page) of \(name) was read by OCR, but its words cannot be placed now: \(error.message)")
        }
        guard let engine = Tesseract.engine(dataPath: settings.resolvedDataPath, languages: settings.languageList) else {
            throw KBError(.unsupportedMode, "Tesseract could not start with languages \(settings.languageList) from \(settings.resolvedDataPath), so the words of page \(page) of \(name) cannot be placed.")
        }
        defer { Tesseract.delete(engine: engine) }
        let quarters = ((quarterTurns % 4) + 4) % 4
        let turned = quarters == 0 ? nil : Tesseract.rotated(image, quarters: quarters)
        defer { if let turned { Tesseract.free(turned) } }
        let read = turned ?? image
        let (width, height) = Tesseract.size(read)
        guard width > 0, height > 0 else { return [] }
        let found: [(text: String, x0: Int, y0: Int, x1: Int, y1: Int)]
        do {
            found = try Tesseract.words(engine, read, timeout: settings.pageTimeout)
        } catch let error as KBError {
            throw KBError(.unprocessable, "OCR could not read page \(page) of \(name): \(error.message).")
        }
        return found.map { word in
            let (x0, y0) = turnedBack(Double(word.x0) / Double(width), Double(word.y0) / Double(height), quarters: quarters)
            let (x1, y1) = turnedBack(Double(word.x1) / Double(width), Double(word.y1) / Double(height), quarters: quarters)
            return PageWord(text: word.text, x0: min(x0, x1), y0: min(y0, y1), x1: max(x0, x1), y1: max(y0, y1))
        }
    }

    /// Where a point (fractions of the picture turned clockwise by `quarters` × 90°) stands on the
    /// picture before it was turned.
    static func turnedBack(_ x: Double, _ y: Double, quarters: Int) -> (Double, Double) {
        switch quarters {
        case 1: (y, 1 - x)
        case 2: (1 - x, 1 - y)
        case 3: (1 - y, x)
        default: (x, y)
        }
    }
}

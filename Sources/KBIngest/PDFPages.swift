import CPoppler
public import Foundation
import KBCore

/// A word on a page and where it stands, as fractions of the page (0…1 from the top-left
/// corner, the page as displayed): what the console draws over a page's picture.
public struct PageWord: Sendable, Hashable, Codable {
    public var text: String
    public var x0: Double
    public var y0: Double
    public var x1: Double
    public var y1: Double

    public init(text: String, x0: Double, y0: Double, x1: Double, y1: Double) {
        self.text = text
        self.x0 = x0
        self.y0 = y0
        self.x1 = x1
        self.y1 = y1
    }
}

/// The pages of a PDF as pictures (PNG, by poppler's page renderer) and their words with their
/// boxes (poppler's text layer): what a citation opens onto.
public enum PDFPages {
    /// Pictures are at most this many pixels tall (a very long page gets a narrower picture).
    public static let maximumHeight = 4_000

    /// Renders page `number` (1-based) `width` pixels wide (less for a page so long that the
    /// picture would pass `maximumHeight`) and writes it to `path` as PNG. Returns the picture's
    /// size and the document's page count.
    public static func renderPNG(_ data: Data, name: String, page number: Int, width: Int, to path: String) throws
        -> (width: Int, height: Int, pages: Int) {
        try withDocument(data, name: name) { pdf, pages in
            let (pageWidth, pageHeight) = try size(pdf, page: number, pages: pages, name: name)
            let fitted = min(Double(width), Double(maximumHeight) * pageWidth / pageHeight)
            let dpi = fitted * 72 / pageWidth
            var w: Int32 = 0, h: Int32 = 0
            guard kb_pdf_render_png(pdf, Int32(number - 1), dpi, path, &w, &h) != 0 else {
                try? FileManager.default.removeItem(atPath: path)
                throw KBError(.unprocessable, "poppler cannot render page \(number) of \(name).")
            }
            return (Int(w), Int(h), pages)
        }
    }

    /// How many pages the PDF has.
    public static func pageCount(_ data: Data, name: String) throws -> Int {
        try withDocument(data, name: name) { _, pages in pages }
    }

    /// The words on page `number` (1-based) in poppler's reading order, with their boxes, and the
    /// document's page count.
    public static func words(_ data: Data, name: String, page number: Int) throws -> (words: [PageWord], pages: Int) {
        try withDocument(data, name: name) { pdf, pages in
            let (pageWidth, pageHeight) = try size(pdf, page: number, pages: pages, name: name)
            guard let list = kb_pdf_page_words(pdf, Int32(number - 1)) else { return ([], pages) }
            defer { kb_pdf_words_free(list) }
            let found = list.pointee
            let words = (0..<Int(found.word_count)).map { index in
                let word = found.words[index]
                let range = Int(word.first_char)..<Int(word.first_char + word.char_count)
                var text = String.UnicodeScalarView()
                text.append(contentsOf: range.map { Unicode.Scalar(found.chars[$0]) ?? "\u{FFFD}" })
                return PageWord(text: String(text), x0: word.x0 / pageWidth, y0: word.y0 / pageHeight,
                                x1: word.x1 / pageWidth, y1: word.y1 / pageHeight)
            }
            return (words, pages)
        }
    }

    /// Opens the PDF in `data` for `body`, with its page count. A document poppler cannot open is
    /// `unprocessable`, named, with the reason (damaged, or encrypted: kb keeps no password).
    static func withDocument<T>(_ data: Data, name: String, _ body: (OpaquePointer, Int) throws -> T) throws -> T {
        guard data.starts(with: Data("%PDF".utf8)) || data.prefix(1024).range(of: Data("%PDF-".utf8)) != nil else {
            throw KBError(.unprocessable, "\(name) is not a PDF (its bytes do not start as one): its pages cannot be shown.")
        }
        return try data.withUnsafeBytes { raw in
            var status = KB_PDF_OK
            guard let pdf = kb_pdf_open_data(raw.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(data.count), nil, &status) else {
                throw KBError(.unprocessable, status == KB_PDF_LOCKED
                    ? "\(name) is encrypted, and kb keeps no password: its pages cannot be shown (its text, read with the password at ingest, can)."
                    : "\(name) is damaged or truncated: poppler cannot read it, so its pages cannot be shown. Ingest a good copy again.")
            }
            defer { kb_pdf_close(pdf) }
            return try body(pdf, Int(kb_pdf_page_count(pdf)))
        }
    }

    /// A page's size in points, its number checked against the page count.
    static func size(_ pdf: OpaquePointer, page number: Int, pages: Int, name: String) throws -> (Double, Double) {
        guard (1...max(1, pages)).contains(number), pages > 0 else {
            throw KBError(.notFound, "\(name) has \(pages) page\(pages == 1 ? "" : "s"); there is no page \(number).")
        }
        var width = 0.0, height = 0.0
        guard kb_pdf_page_size(pdf, Int32(number - 1), &width, &height) != 0, width > 0, height > 0 else {
            throw KBError(.unprocessable, "poppler cannot read the size of page \(number) of \(name).")
        }
        return (width, height)
    }
}

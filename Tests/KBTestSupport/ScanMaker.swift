import CPoppler
import CTesseract
import Foundation

/// Makes scans with known text for the OCR tests and scripts/bench/bench-ocr.sh: pages of a PDF that
/// has a text layer are rendered to grey images (poppler), which are then written as PNG, JPEG,
/// TIFF or an image-only PDF (Leptonica). The text layer is the ground truth.
public enum ScanMaker {
    /// One page image. Freed with the object.
    /// @unchecked Sendable: the image is never changed after it is made.
    public final class Page: @unchecked Sendable {
        public let pointer: OpaquePointer

        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { kb_image_free(pointer) }

        public var width: Int { Int(kb_image_width(pointer)) }
        public var height: Int { Int(kb_image_height(pointer)) }

        /// The page turned clockwise by `quarters` × 90°.
        public func rotated(_ quarters: Int) -> Page { Page(kb_image_rotated(pointer, Int32(quarters))!) }

        /// The page with another recorded resolution (its pixels unchanged): a 100-pixel page
        /// at 1 dpi is a 100-inch page in a PDF.
        public func withResolution(_ dpi: Int) -> Page {
            let copy = kb_image_rotated(pointer, 0)!
            kb_image_set_dpi(copy, Int32(dpi))
            return Page(copy)
        }

        public enum Format { case png, jpeg, tiff }

        public func write(to path: String, format: Format, append: Bool = false) throws {
            let code = switch format {
            case .png: KB_IMAGE_PNG
            case .jpeg: KB_IMAGE_JPEG
            case .tiff: KB_IMAGE_TIFF
            }
            guard kb_image_write(pointer, path, code, append ? 1 : 0) == 0 else { throw ScanError("cannot write \(path)") }
        }
    }

    public struct ScanError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Renders pages (1-based; all when nil) of a PDF at `dpi`.
    public static func render(pdf path: String, pages: [Int]? = nil, dpi: Int) throws -> [Page] {
        var status = KB_PDF_OK
        guard let pdf = kb_pdf_open(path, nil, &status) else { throw ScanError("cannot open \(path)") }
        defer { kb_pdf_close(pdf) }
        let numbers = pages ?? Array(1...Int(kb_pdf_page_count(pdf)))
        return try numbers.map { number in
            var width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
            guard let pixels = kb_pdf_render_gray(pdf, Int32(number - 1), Int32(dpi), &width, &height, &stride) else {
                throw ScanError("cannot render page \(number) of \(path)")
            }
            defer { kb_pdf_free(pixels) }
            return Page(kb_image_from_gray(pixels, width, height, stride, Int32(dpi))!)
        }
    }

    /// The text layer of each page (1-based; all when nil): what the scans of those pages say.
    public static func text(pdf path: String, pages: [Int]? = nil) throws -> [String] {
        var status = KB_PDF_OK
        guard let pdf = kb_pdf_open(path, nil, &status) else { throw ScanError("cannot open \(path)") }
        defer { kb_pdf_close(pdf) }
        let numbers = pages ?? Array(1...Int(kb_pdf_page_count(pdf)))
        return numbers.map { number in
            guard let text = kb_pdf_page_text(pdf, Int32(number - 1)) else { return "" }
            defer { kb_pdf_free(text) }
            return String(cString: text)
        }
    }

    /// A white page (A4 at `dpi`).
    public static func blank(dpi: Int) -> Page {
        let width = dpi * 827 / 100, height = dpi * 1169 / 100
        let pixels = [UInt8](repeating: 255, count: width * height)
        return Page(kb_image_from_gray(pixels, Int32(width), Int32(height), Int32(width), Int32(dpi))!)
    }

    /// An image-only PDF, one page per image (JPEG-compressed when `jpeg`, as most scanners do).
    public static func writePDF(_ pages: [Page], to path: String, jpeg: Bool = false) throws {
        let pointers: [OpaquePointer?] = pages.map(\.pointer)
        let status = pointers.withUnsafeBufferPointer { buffer in
            kb_images_write_pdf(buffer.baseAddress, Int32(buffer.count), path, jpeg ? 1 : 0)
        }
        guard status == 0 else { throw ScanError("cannot write \(path)") }
    }

    /// A multi-page TIFF.
    public static func writeTIFF(_ pages: [Page], to path: String) throws {
        for (index, page) in pages.enumerated() { try page.write(to: path, format: .tiff, append: index > 0) }
    }

    /// Word accuracy of recognised text against the truth: the share of the truth's words
    /// (lower-cased, punctuation stripped) found in the recognised text, counted with multiplicity.
    public static func wordAccuracy(recognised: String, truth: String) -> Double {
        func words(_ text: String) -> [String] {
            text.lowercased().split(whereSeparator: { $0.isWhitespace }).map { word in
                String(word.unicodeScalars.filter { $0.properties.isAlphabetic || $0.properties.numericType != nil }.map(Character.init))
            }.filter { !$0.isEmpty }
        }
        let expected = words(truth)
        guard !expected.isEmpty else { return 1 }
        var found = Dictionary(words(recognised).map { ($0, 1) }, uniquingKeysWith: +)
        var hits = 0
        for word in expected where (found[word] ?? 0) > 0 {
            found[word]! -= 1
            hits += 1
        }
        return Double(hits) / Double(expected.count)
    }
}

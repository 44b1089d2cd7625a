#if OCR
import CTesseract
#endif
import Foundation
import KBCore

/// The one door from kb to Tesseract and Leptonica (the CTesseract shim): OCR engines and page
/// images (Leptonica Pix handles, owned by whoever made them: `free` them). It is built with the
/// `OCR` package trait (on by default); without it, `unavailable` says why, OCR sessions refuse to
/// run with that reason, and no image can be read.
enum Tesseract {
    /// Why OCR cannot run in this build, or nil when it can.
    static var unavailable: String? {
        #if OCR
        nil
        #else
        "this kb was built without OCR (the OCR package trait, which needs libtesseract-dev and libleptonica-dev)"
        #endif
    }

    /// Where the language data is: `$TESSDATA_PREFIX`, else Debian's folder ("" without OCR).
    static var defaultDataPath: String {
        #if OCR
        String(cString: kb_ocr_default_datapath())
        #else
        ""
        #endif
    }

    // MARK: - Engines

    /// A Tesseract instance for `languages` (`eng+ukr`); nil when its data cannot be loaded. Not
    /// thread-safe: one per thread.
    static func engine(dataPath: String, languages: String) -> OpaquePointer? {
        #if OCR
        kb_ocr_new(dataPath, languages)
        #else
        nil
        #endif
    }

    static func delete(engine: OpaquePointer) {
        #if OCR
        kb_ocr_delete(engine)
        #endif
    }

    /// How many quarter turns clockwise put the page upright, when Tesseract can tell (it needs
    /// osd.traineddata and enough text); nil when it cannot or the page is upright.
    static func orientation(_ engine: OpaquePointer, _ image: OpaquePointer) -> Int? {
        #if OCR
        var quarters: Int32 = 0
        var confidence: Float = 0
        guard kb_ocr_detect_orientation(engine, image, &quarters, &confidence) != 0, quarters != 0 else { return nil }
        return Int(quarters)
        #else
        nil
        #endif
    }

    /// The page's text, its words' mean confidence (0–100) and how many words there were.
    static func recognise(_ engine: OpaquePointer, _ image: OpaquePointer, timeout: TimeInterval) throws -> (text: String, confidence: Double, words: Int) {
        #if OCR
        var result = kb_ocr_result()
        let status = kb_ocr_recognize(engine, image, Int32(min(timeout * 1000, Double(Int32.max))), &result)
        defer { kb_ocr_free_text(result.text) }
        try check(status, timeout: timeout)
        return (result.text.map { String(cString: $0) } ?? "", Double(result.confidence), Int(result.words))
        #else
        throw KBError(.unsupportedMode, "The page cannot be recognised: \(unavailable ?? "").")
        #endif
    }

    /// The page's words in reading order with their boxes, in pixels from the image's top-left
    /// corner.
    static func words(_ engine: OpaquePointer, _ image: OpaquePointer, timeout: TimeInterval) throws
        -> [(text: String, x0: Int, y0: Int, x1: Int, y1: Int)] {
        #if OCR
        var list: UnsafeMutablePointer<kb_ocr_word>?
        var count: Int32 = 0
        let status = kb_ocr_recognize_words(engine, image, Int32(min(timeout * 1000, Double(Int32.max))), &list, &count)
        defer { kb_ocr_free_words(list, count) }
        try check(status, timeout: timeout)
        return (0..<Int(count)).compactMap { index in
            guard let word = list?[index], let text = word.text else { return nil }
            return (String(cString: text), Int(word.x0), Int(word.y0), Int(word.x1), Int(word.y1))
        }
        #else
        throw KBError(.unsupportedMode, "The page cannot be recognised: \(unavailable ?? "").")
        #endif
    }

    #if OCR
    /// Throws, saying why, unless recognition succeeded.
    private static func check(_ status: kb_ocr_status, timeout: TimeInterval) throws {
        switch status {
        case KB_OCR_OK: return
        case KB_OCR_TIMEOUT: throw KBError(.invalidText, "recognition took longer than \(Int(timeout)) s")
        default: throw KBError(.invalidText, "Tesseract could not recognise it")
        }
    }
    #endif

    // MARK: - Images

    /// Writes image `index` of a file's bytes to `path` as a PNG `width` pixels wide (narrower
    /// when it would be taller than `maximumHeight`), colour kept; its size, or nil when the image
    /// cannot be read or written.
    static func renderPNG(_ bytes: ImageBytes, index: Int, width: Int, maximumHeight: Int, to path: String) -> (width: Int, height: Int)? {
        #if OCR
        var w: Int32 = 0, h: Int32 = 0
        guard kb_image_render_png(bytes.base, bytes.count, Int32(index), Int32(width), Int32(maximumHeight), path, &w, &h) != 0 else { return nil }
        return (Int(w), Int(h))
        #else
        nil
        #endif
    }

    /// How many images a file's bytes hold (the pages of a TIFF, 1 for PNG and JPEG); 0 when
    /// they cannot be read, and without OCR.
    static func imageCount(_ bytes: ImageBytes) -> Int {
        #if OCR
        Int(kb_image_count_data(bytes.base, bytes.count))
        #else
        0
        #endif
    }

    /// The size image `index` says it has, read from its header without decoding it; nil when
    /// the header cannot be read.
    static func declaredSize(_ bytes: ImageBytes, index: Int) -> (width: Int, height: Int)? {
        #if OCR
        var width: Int32 = 0, height: Int32 = 0
        guard kb_image_size_data(bytes.base, bytes.count, Int32(index), &width, &height) != 0 else { return nil }
        return (Int(width), Int(height))
        #else
        nil
        #endif
    }

    /// Image `index` (0-based) of a PNG, JPEG or TIFF file's bytes, as grey; nil when it cannot
    /// be read.
    static func readImage(_ bytes: ImageBytes, index: Int) -> OpaquePointer? {
        #if OCR
        kb_image_read_data(bytes.base, bytes.count, Int32(index))
        #else
        nil
        #endif
    }

    static func size(_ image: OpaquePointer) -> (width: Int, height: Int) {
        #if OCR
        (Int(kb_image_width(image)), Int(kb_image_height(image)))
        #else
        (0, 0)
        #endif
    }

    /// A copy turned clockwise by `quarters` × 90°.
    static func rotated(_ image: OpaquePointer, quarters: Int) -> OpaquePointer? {
        #if OCR
        kb_image_rotated(image, Int32(quarters))
        #else
        nil
        #endif
    }

    /// An image from rows of 8-bit grey pixels, `stride` bytes apart, at `dpi`.
    static func image(gray pixels: UnsafePointer<UInt8>, width: Int32, height: Int32, stride: Int32, dpi: Int32) -> OpaquePointer? {
        #if OCR
        kb_image_from_gray(pixels, width, height, stride, dpi)
        #else
        nil
        #endif
    }

    /// Whether a page image holds no ink worth reading: fewer than one pixel in 100,000 darker
    /// than mid-grey (at 300 dpi a letter page has 8.4 million pixels; a lone page number has a
    /// few hundred dark ones, a blank scan's specks a few dozen). Such a page is not given to
    /// Tesseract, which would spend a read and an orientation check on it.
    static func isBlank(_ image: OpaquePointer) -> Bool {
        #if OCR
        let pixels = Int(kb_image_width(image)) * Int(kb_image_height(image))
        let enough = max(16, pixels / 100_000)
        let dark = kb_image_dark_pixels(image, 128, enough)
        return dark >= 0 && dark < enough
        #else
        false
        #endif
    }

    static func free(_ image: OpaquePointer) {
        #if OCR
        kb_image_free(image)
        #endif
    }
}

/// An image file's bytes in memory, handed to the OCR workers that decode its pages.
/// @unchecked Sendable: the bytes are only read, and outlive every worker that reads them
/// (`ImageLoader.load(_:path:…)` keeps them for the whole load).
struct ImageBytes: @unchecked Sendable {
    let base: UnsafePointer<UInt8>
    let count: Int
}

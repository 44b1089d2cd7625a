/// Marks text that was read from page images by OCR rather than from a text layer, with how sure
/// the recogniser was, so that a reader (or a prompt) can weigh it.
public struct OCRMark: Sendable, Hashable, Codable {
    /// Tesseract's mean word confidence, 0–100; for text spanning several OCR pages, the lowest.
    public var confidence: Double

    public init(confidence: Double) {
        self.confidence = confidence
    }

    /// The weaker of two marks (text joined from both is only as sure as its least sure part).
    public static func weakest(_ a: OCRMark?, _ b: OCRMark?) -> OCRMark? {
        switch (a, b) {
        case let (a?, b?): return a.confidence <= b.confidence ? a : b
        case let (a?, nil): return a
        case let (nil, b): return b
        }
    }

    /// `OCR, 91% confidence`.
    public var label: String { "OCR, \(Int(confidence.rounded()))% confidence" }
}

/// The text Tesseract read on one page image, as the OCR page cache keeps it.
public struct OCRPage: Sendable, Hashable, Codable {
    /// 1-based page number in the file.
    public var page: Int
    public var text: String
    /// Mean word confidence, 0–100 (0 when no word was found).
    public var confidence: Double
    public var words: Int
    /// Quarter turns clockwise applied before recognition (the page was scanned sideways or upside down).
    public var quarterTurns: Int

    public init(page: Int, text: String, confidence: Double, words: Int, quarterTurns: Int = 0) {
        self.page = page
        self.text = text
        self.confidence = confidence
        self.words = words
        self.quarterTurns = quarterTurns
    }
}

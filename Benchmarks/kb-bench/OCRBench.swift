import Foundation
import KBCore
import KBIngest
import KBTestSupport

/// Makes a scan with known text: pages `first ..< first + count` of a PDF with a text layer,
/// rendered at `dpi` into an image-only PDF (JPEG, as scanners write). Writes the truth (each
/// page's text layer) beside it as JSON, with a phrase printed on one page only, for the search check.
func makeOCRScan(book: String, first: Int, count: Int, dpi: Int, output: String) throws -> [String: Any] {
    let numbers = Array(first..<(first + count))
    try ScanMaker.writePDF(try ScanMaker.render(pdf: book, pages: numbers, dpi: dpi), to: output, jpeg: true)
    let truth = try ScanMaker.text(pdf: book, pages: numbers)
    // A phrase from a page past the middle: four consecutive plain words found on no other page.
    var phrase: [String: Any] = [:]
    let normalised = truth.map { $0.lowercased() }
    search: for page in Array(count / 2..<count) + Array(0..<count / 2) {
        let words = truth[page].split(whereSeparator: \.isWhitespace).map(String.init)
        guard words.count >= 4 else { continue }
        for start in 0...(words.count - 4) {
            let candidate = Array(words[start..<start + 4])
            guard candidate.allSatisfy({ word in word.count >= 4 && word.allSatisfy { $0.isLetter } }) else { continue }
            let text = candidate.joined(separator: " ")
            if normalised.enumerated().allSatisfy({ $0.offset == page || !$0.element.contains(text.lowercased()) }) {
                phrase = ["page": page + 1, "text": text]
                break search
            }
        }
    }
    let description: [String: Any] = ["book": book, "first": first, "count": count, "dpi": dpi, "pages": truth, "phrase": phrase]
    try JSONSerialization.data(withJSONObject: description, options: [.sortedKeys]).write(to: URL(fileURLWithPath: output + ".json"))
    return ["scan": output, "pages": count, "dpi": dpi, "phrase": phrase, "bytes": (try? FileManager.default.attributesOfItem(atPath: output)[.size]) ?? 0]
}

/// Reads a scan made by `makeOCRScan` with OCR (`workers` Tesseract instances, languages,
/// rendering at the scan's resolution) and compares the text with the truth.
func benchOCR(scan: String, workers: Int, languages: [String]) throws -> [String: Any] {
    let description = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scan + ".json"))) as! [String: Any]
    let truth = description["pages"] as! [String]
    let dpi = description["dpi"] as! Int
    let settings = OCRSettings(mode: .auto, languages: languages, dpi: dpi, workers: workers)
    var options = IngestOptions()
    options.ocr = settings
    let start = now()
    let document = try PDFLoader(options: options, ocr: OCRSession(settings: settings))
        .load(path: scan, contentHash: "bench")
    let seconds = now() - start
    let text = document.snippets.map(\.text).joined(separator: "\n")
    let confidences = document.snippets.compactMap { $0.ocr?.confidence }
    return [
        "dpi": dpi, "workers": workers, "languages": languages.joined(separator: "+"), "pages": truth.count,
        "seconds": seconds, "pages_per_second": Double(truth.count) / seconds,
        "word_accuracy": ScanMaker.wordAccuracy(recognised: text, truth: truth.joined(separator: "\n")),
        "lowest_snippet_confidence": confidences.min() ?? 0,
        "warnings": document.warnings, "peak_rss_mb": peakResidentMB(),
    ]
}

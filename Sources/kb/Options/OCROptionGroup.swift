public import ArgumentParser
import Foundation
import KBCore
public import KBIngest

/// How page images are read with OCR: shared by `ingest`, `inspect` and `sources reread`.
struct OCROptionGroup: ParsableArguments {
    @Option(help: ArgumentHelp(
        "When to read page images with OCR (Tesseract): auto (pages without a text layer, and images), never, or force (every page).",
        valueName: "mode"))
    var ocr: OCRMode = .auto

    @Option(name: .customLong("ocr-lang"), help: ArgumentHelp(
        "OCR languages, joined with + (eng, ukr, rus, ara, …). Default: eng plus the languages this index was given before.",
        valueName: "languages"))
    var ocrLanguages: String?

    @Option(name: .customLong("ocr-dpi"), help: "The resolution PDF pages are rendered at for OCR.")
    var ocrDPI = OCRSettings.defaultDPI

    @Option(name: .customLong("ocr-workers"), help: "Pages recognised at once (default: one per core).")
    var ocrWorkers: Int?

    func validate() throws {
        guard (70...1200).contains(ocrDPI) else { throw ValidationError("--ocr-dpi must be between 70 and 1200 (300 suits most scans).") }
        if let ocrWorkers, !(1...256).contains(ocrWorkers) { throw ValidationError("--ocr-workers must be between 1 and 256.") }
    }

    /// The languages given with --ocr-lang, checked against the installed language data.
    func givenOCRLanguages() throws -> [String]? {
        guard let ocrLanguages else { return nil }
        let languages = try OCRSettings.languages(ocrLanguages)
        if ocr != .never { try OCRSettings(languages: languages).checkLanguages() }
        return languages
    }

    /// The settings given, with the languages of --ocr-lang or the default ones: with an index,
    /// replace them with its own (`KnowledgeBase.ocrLanguages`).
    func settings() throws -> OCRSettings {
        OCRSettings(mode: ocr, languages: OCRSettings.languages(given: try givenOCRLanguages(), recorded: nil), dpi: ocrDPI,
                    workers: ocrWorkers ?? ProcessInfo.processInfo.activeProcessorCount)
    }
}

extension OCRMode: ExpressibleByArgument {}

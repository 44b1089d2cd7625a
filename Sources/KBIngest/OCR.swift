import CPoppler
public import Foundation
public import KBCore

/// When page images are read by OCR.
public enum OCRMode: String, Sendable, CaseIterable, Hashable {
    /// Only pages with no usable text layer (no letter or digit in it), and image files.
    case auto
    /// Never: pages without a text layer stay empty and an image-only file fails.
    case never
    /// Every page of every PDF, text layer or not.
    case force
}

/// How OCR reads page images: `--ocr`, `--ocr-lang`, `--ocr-dpi`.
public struct OCRSettings: Sendable, Hashable {
    public var mode: OCRMode
    /// Tesseract language codes (`eng`, `ukr`, `rus`, `ara`), tried together.
    public var languages: [String]
    /// Resolution PDF pages are rendered at. Image files keep their own resolution.
    public var dpi: Int
    /// Pages recognised at once (one Tesseract instance each), shared by every file of an ingest.
    public var workers: Int
    /// Pages whose mean word confidence is below this are named in the ingest warnings.
    public var confidenceFloor: Double
    /// A page that takes longer than this fails alone.
    public var pageTimeout: TimeInterval
    /// Where Tesseract's `*.traineddata` files are; nil for `$TESSDATA_PREFIX` or Debian's folder.
    public var dataPath: String?

    public static let defaultDPI = 300
    /// Measured on kb's generated scans (scripts/bench/bench-ocr.sh): clean pages score 88–96, pages
    /// whose words come out wrong score below 70.
    public static let defaultConfidenceFloor = 70.0

    public init(mode: OCRMode = .auto, languages: [String] = ["eng"], dpi: Int = OCRSettings.defaultDPI,
                workers: Int = ProcessInfo.processInfo.activeProcessorCount,
                confidenceFloor: Double = OCRSettings.defaultConfidenceFloor, pageTimeout: TimeInterval = 300,
                dataPath: String? = nil) {
        self.mode = mode
        self.languages = languages
        self.dpi = dpi
        self.workers = max(1, workers)
        self.confidenceFloor = confidenceFloor
        self.pageTimeout = pageTimeout
        self.dataPath = dataPath
    }

    /// `eng+ukr`, as Tesseract takes it.
    public var languageList: String { languages.joined(separator: "+") }

    /// What a page recognised with these settings is cached under: same languages, same resolution.
    public var cacheKey: String { "\(languageList)@\(dpi)" }

    /// What a source records when OCR read some of its pages (`Source.ocr`).
    public var record: String { "\(mode.rawValue) \(languageList) \(dpi)" }

    /// The settings a source was read with, from its OCR record (`record`, `Source.ocr`); nil for
    /// none or a record that is not one.
    public init?(record: String?) {
        let parts = (record ?? "").split(separator: " ").map(String.init)
        guard parts.count == 3, let mode = OCRMode(rawValue: parts[0]), let dpi = Int(parts[2]),
              let languages = try? Self.languages(parts[1]) else { return nil }
        self.init(mode: mode, languages: languages, dpi: dpi, workers: 1)
    }

    /// Whether a source ingested with OCR record `recorded` must be read again under these
    /// settings although its bytes did not change: OCR was off then and is on now, another mode,
    /// other languages or another resolution. `never` never re-reads.
    public func needsRereading(recorded: String?) -> Bool {
        switch mode {
        case .never: return false
        case .auto: return recorded != nil && recorded != record
        case .force: return recorded != record
        }
    }

    /// The OCR languages of an ingest, decided here and nowhere else: the `given` ones
    /// (`--ocr-lang`), else English plus the languages the index recorded before (`recorded`,
    /// joined with `+`; nil for none or for no index).
    public static func languages(given: [String]?, recorded: String?) -> [String] {
        if let given { return given }
        let before = (recorded ?? "").split(separator: "+").map(String.init)
        return (["eng"] + before).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    }

    /// Parses `eng+ukr` (also `eng,ukr`): lower-case Tesseract codes, each once, in order.
    public static func languages(_ text: String) throws -> [String] {
        var result: [String] = []
        for part in text.split(whereSeparator: { $0 == "+" || $0 == "," || $0 == " " }) {
            let code = part.lowercased()
            guard code.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else {
                throw KBError(.invalidArgument, "\"\(part)\" is not a Tesseract language code. Use codes such as eng, ukr, rus, ara, joined with +.")
            }
            if !result.contains(code) { result.append(code) }
        }
        guard !result.isEmpty else { throw KBError(.invalidArgument, "No OCR language given. Use codes such as eng, ukr, rus, ara, joined with +.") }
        return result
    }

    /// The folder Tesseract reads language data from.
    public var resolvedDataPath: String { dataPath ?? Tesseract.defaultDataPath }

    /// Language codes with data installed.
    public func installedLanguages() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: resolvedDataPath)) ?? []
        return files.filter { $0.hasSuffix(".traineddata") }.map { String($0.dropLast(12)) }.filter { $0 != "osd" }.sorted()
    }

    /// Fails, naming the package to install, when a language has no data.
    public func checkLanguages() throws {
        let installed = Set(installedLanguages())
        for code in languages where !installed.contains(code) {
            let have = installed.isEmpty ? "none is installed" : "installed: \(installed.sorted().joined(separator: ", "))"
            throw KBError(.invalidArgument, "OCR language \"\(code)\" is not installed (no \(code).traineddata in \(resolvedDataPath); \(have)). "
                + "Install it with `apt-get install tesseract-ocr-\(code.replacingOccurrences(of: "_", with: "-"))`, or choose another with --ocr-lang.")
        }
    }
}

/// What OCR is doing, for a progress display.
public enum OCREvent: Sendable {
    /// A file has this many pages to recognise (pages found in the cache not counted).
    case queued(file: String, pages: Int)
    /// One page was recognised (or failed).
    case finished(file: String)
}

/// One ingest's OCR: the settings, a pool of Tesseract instances (at most `workers`, shared
/// by every file loaded at once, started on first use and kept for the next file), the pages
/// recognised before, a progress callback and a sink for new pages. Loaders never wait on an
/// index: whoever reads files finds the pages an index cached for them before they are parsed
/// (`rememberPages`) and keeps each page as it is recognised (`recognised`, called on the
/// recognising thread, which must not block on it). Its calls block: use it off Swift's
/// cooperative pool.
public final class OCRSession: @unchecked Sendable {
    public let settings: OCRSettings
    let events: @Sendable (OCREvent) -> Void
    let recognised: @Sendable (_ page: OCRPage, _ contentHash: String) -> Void
    /// Pages recognised before, by the hash of the file they are of (under `settings.cacheKey`).
    private let known = LockedValue<[String: [Int: OCRPage]]>([:])
    private let condition = NSCondition()
    private var idle: [OpaquePointer] = []
    private var started = 0
    private var startFailure: String?
    let cachedPages = LockedValue(0)
    /// Why OCR cannot run with these settings (a language without data), or nil.
    public let problem: String?

    public init(settings: OCRSettings, events: @escaping @Sendable (OCREvent) -> Void = { _ in },
                recognised: @escaping @Sendable (_ page: OCRPage, _ contentHash: String) -> Void = { _, _ in }) {
        self.settings = settings
        self.events = events
        self.recognised = recognised
        if let unavailable = Tesseract.unavailable {
            problem = unavailable
            return
        }
        do {
            try settings.checkLanguages()
            problem = nil
        } catch {
            problem = (error as? KBError)?.message ?? "\(error)"
        }
    }

    /// Pages whose text came from the cache instead of Tesseract.
    public var cachedPagesUsed: Int { cachedPages.withLock { $0 } }

    /// Gives the pages recognised before in the file with this hash (under these settings'
    /// `cacheKey`): they are not recognised again.
    public func rememberPages(_ pages: [OCRPage], contentHash: String) {
        guard !pages.isEmpty else { return }
        known.withLock { known in for page in pages { known[contentHash, default: [:]][page.page] = page } }
    }

    /// The pages known for a file, and forgets them (a file is parsed once per session).
    func takeKnownPages(contentHash: String) -> [Int: OCRPage] {
        known.withLock { $0.removeValue(forKey: contentHash) ?? [:] }
    }

    /// Pages found blank by their pixels, which Tesseract was not asked to read.
    public var blankPagesSkipped: Int { blankPages.withLock { $0 } }
    let blankPages = LockedValue(0)

    /// Fails with `problem` when pages need OCR that cannot run.
    func checkUsable(file: String, pages: Int) throws {
        guard let problem else { return }
        throw KBError(.invalidArgument, "\(file): \(pages == 1 ? "1 page needs" : "\(pages) pages need") OCR, but: \(problem)")
    }

    deinit {
        for engine in idle { Tesseract.delete(engine: engine) }
    }

    /// Runs `body` with a Tesseract instance of its own, waiting while all are busy.
    func withEngine<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        condition.lock()
        var engine: OpaquePointer?
        while engine == nil {
            if let failure = startFailure {
                condition.unlock()
                throw KBError(.invalidArgument, failure)
            }
            if let free = idle.popLast() {
                engine = free
            } else if started < settings.workers {
                started += 1
                condition.unlock()
                let made = Tesseract.engine(dataPath: settings.resolvedDataPath, languages: settings.languageList)
                condition.lock()
                if made == nil {
                    started -= 1
                    startFailure = "Tesseract could not start with languages \(settings.languageList) from \(settings.resolvedDataPath). "
                        + "Check that the tesseract-ocr-* language packages are installed."
                    condition.broadcast()
                }
                engine = made
            } else {
                condition.wait()
            }
        }
        condition.unlock()
        defer {
            condition.lock()
            idle.append(engine!)
            condition.signal()
            condition.unlock()
        }
        return try body(engine!)
    }

    /// Recognises one page image. When the page reads poorly, asks Tesseract's orientation
    /// detection whether it is sideways or upside down and, if turning it reads better, keeps that.
    func recognise(_ image: OpaquePointer, page: Int) throws -> OCRPage {
        if Tesseract.isBlank(image) {
            blankPages.withLock { $0 += 1 }
            return OCRPage(page: page, text: "", confidence: 0, words: 0)
        }
        return try withEngine { ocr in
            var best = try Self.read(ocr, image, page: page, turns: 0, timeout: settings.pageTimeout)
            if best.words < 3 || best.confidence < settings.confidenceFloor,
               let quarters = Tesseract.orientation(ocr, image), let turned = Tesseract.rotated(image, quarters: quarters) {
                defer { Tesseract.free(turned) }
                let again = try Self.read(ocr, turned, page: page, turns: quarters, timeout: settings.pageTimeout)
                if again.words > 0 && again.confidence > best.confidence { best = again }
            }
            return best
        }
    }

    static func read(_ ocr: OpaquePointer, _ image: OpaquePointer, page: Int, turns: Int, timeout: TimeInterval) throws -> OCRPage {
        let result = try Tesseract.recognise(ocr, image, timeout: timeout)
        return OCRPage(page: page, text: result.text, confidence: result.confidence, words: result.words, quarterTurns: turns)
    }
}

/// The outcome of reading a file's pages through OCR: pages recognised (known before, or now)
/// and pages that failed, with why.
struct OCRPages {
    var pages: [Int: OCRPage] = [:]
    var failures: [(page: Int, reason: String)] = []

    /// Recognises `pages` (1-based) on up to `settings.workers` threads, taking the pages known
    /// before and handing each new one to the session's `recognised`. `image(page)` renders or
    /// reads one page; each worker calls `open` once for a handle of its own (a poppler document
    /// must not be shared between threads).
    static func recognise<Handle>(
        _ wanted: [Int], file: String, contentHash: String, session: OCRSession,
        open: @escaping @Sendable () -> Handle?, close: @escaping @Sendable (Handle) -> Void,
        image: @escaping @Sendable (Handle, Int) throws -> OpaquePointer
    ) -> OCRPages {
        var outcome = OCRPages()
        let cached = session.takeKnownPages(contentHash: contentHash)
        let todo = wanted.filter { cached[$0] == nil }
        for page in wanted { if let hit = cached[page] { outcome.pages[page] = hit } }
        session.cachedPages.withLock { $0 += outcome.pages.count }
        guard !todo.isEmpty else { return outcome }
        session.events(.queued(file: file, pages: todo.count))
        let results = ConcurrentSlots<Result<OCRPage, any Error>>(count: todo.count)
        let next = LockedValue(0)
        /// The next page index no worker has taken yet.
        let claim: @Sendable () -> Int? = {
            next.withLock { n in
                guard n < todo.count else { return nil }
                n += 1
                return n - 1
            }
        }
        let workers = min(session.settings.workers, todo.count)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            guard let handle = open() else {
                while let i = claim() {
                    results.set(i, .failure(KBError(.invalidText, "the file could not be opened again")))
                    session.events(.finished(file: file))
                }
                return
            }
            defer { close(handle) }
            while let i = claim() {
                let page = todo[i]
                results.set(i, Result {
                    let picture = try image(handle, page)
                    defer { Tesseract.free(picture) }
                    let recognised = try session.recognise(picture, page: page)
                    session.recognised(recognised, contentHash)
                    return recognised
                })
                session.events(.finished(file: file))
            }
        }
        for (i, result) in results.values.enumerated() {
            switch result {
            case .success(let page)?: outcome.pages[page.page] = page
            case .failure(let error)?: outcome.failures.append((todo[i], (error as? KBError)?.message ?? "\(error)"))
            case nil: outcome.failures.append((todo[i], "not recognised"))
            }
        }
        outcome.failures.sort { $0.page < $1.page }
        return outcome
    }

    /// Puts the text of every page where OCR found words into `pages` (1-based numbers, 0-based
    /// array) and returns those pages' marks.
    func apply(to pages: inout [String]) -> [Int: OCRMark] {
        var marks: [Int: OCRMark] = [:]
        for (number, page) in self.pages where page.hasText {
            pages[number - 1] = page.text
            marks[number] = OCRMark(confidence: page.confidence)
        }
        return marks
    }

    /// Warnings about what OCR found: pages that failed, pages with no words, pages read with
    /// low confidence, pages turned upright.
    func warnings(file: String, floor: Double) -> [String] {
        var out: [String] = []
        for failure in failures {
            out.append("\(file): page \(failure.page) could not be read by OCR (\(failure.reason)); it was left out.")
        }
        let ordered = pages.values.sorted { $0.page < $1.page }
        let blank = ordered.filter { !$0.hasText }.map(\.page)
        if !blank.isEmpty { out.append("\(file): OCR found no text on \(Self.list(blank)) (blank?).") }
        let weak = ordered.filter { $0.hasText && $0.confidence < floor }
        if !weak.isEmpty {
            let detail = weak.prefix(20).map { "\($0.page) (\(Int($0.confidence.rounded())))" }.joined(separator: ", ") + (weak.count > 20 ? ", …" : "")
            out.append("\(file): OCR confidence below \(Int(floor)) on \(weak.count == 1 ? "page" : "pages") \(detail); "
                + "check the scan, or the languages (--ocr-lang).")
        }
        let turned = ordered.filter { $0.quarterTurns != 0 }
        if !turned.isEmpty {
            out.append("\(file): \(Self.list(turned.map(\.page))) \(turned.count == 1 ? "was" : "were") scanned sideways or upside down "
                + "and \(turned.count == 1 ? "was" : "were") turned upright for OCR.")
        }
        return out
    }

    static func list(_ pages: [Int]) -> String {
        (pages.count == 1 ? "page " : "pages ") + pages.prefix(20).map(String.init).joined(separator: ", ")
            + (pages.count > 20 ? ", … (\(pages.count) pages)" : "")
    }
}

extension OCRPage {
    /// Whether Tesseract found words with letters (a page number or specks alone are not text).
    var hasText: Bool { words > 0 && text.unicodeScalars.contains { $0.properties.isAlphabetic } }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBRequests
import KBStore

struct Ingest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add or update notes (.md, .txt), books (.pdf, .epub), scans (.png, .jpg, .tif), web pages (.html), Word documents (.docx) and records (.json, .jsonl, .csv) from files and folders.",
        discussion: """
            Folders are read recursively; hidden files are skipped. Unchanged files (same content hash) \
            are not read again. Each file is stored in its own transaction: a bad file fails alone and \
            leaves the index as it was. Exits 1 if any file failed.

            PDF pages without a text layer, and images, are read by OCR (Tesseract), which is slow: \
            seconds per page on each core. Recognised pages are kept in the index, so an interrupted \
            run does not recognise them again. --ocr never turns OCR off.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var ingest: IngestOptionGroup
    @OptionGroup var embedderOption: EmbedderOption

    @Flag(help: "Remove indexed sources under the given folders whose files are gone.")
    var prune = false

    @Flag(help: "Keep running: ingest the folders, then read files again as they appear or change and remove those deleted (implies --prune; Ctrl-C stops).")
    var watch = false

    @Option(help: ArgumentHelp(
        "Tune keyword search for one language instead of each word by its script's rules (auto, a new index's default): english (Porter stemming), ukrainian, russian, arabic (folding and light stemming), or simple. Recorded with the index; changing it rebuilds the keyword index.",
        valueName: "language"))
    var language: String?

    @Option(help: ArgumentHelp("With `-`: the text's title (else its front matter's or first heading's).", valueName: "title"))
    var title: String?

    @Option(help: ArgumentHelp("With `-`: the source's id; ingesting the same id again replaces it (default: a new one).", valueName: "id"))
    var id: String?

    @Option(help: ArgumentHelp("With `-`: the user the source belongs to (only requests for that user see it).", valueName: "user"))
    var user: String?

    @Option(name: .customLong("bot"), help: ArgumentHelp("With `-`: a bot that sees the source from now on (repeatable).", valueName: "name"))
    var bots: [String] = []

    @Argument(help: ArgumentHelp("Files and folders to ingest, or - for a text on standard input.", valueName: "path"))
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Name at least one file or folder to ingest, or - for standard input.") }
        if paths.contains("-") && paths.count > 1 { throw ValidationError("Ingest standard input (-) on its own, without other paths.") }
        if watch && paths.contains("-") { throw ValidationError("--watch follows folders; it does not go with - (standard input).") }
        if !paths.contains("-") && (title != nil || id != nil || user != nil || !bots.isEmpty) {
            throw ValidationError("--title, --id, --user and --bot go with - (a text on standard input).")
        }
    }

    func run() async throws {
        if paths == ["-"] { return try await ingestStandardInput() }
        try await reportingErrors {
            var options = try ingest.makeOptions()
            let choice = try embedderOption.choice()
            let (kb, embedder, record) = try await KnowledgeBase.openForIngest(at: global.databasePath, embedder: choice,
                                                                               embedderURL: embedderOption.endpoint)
            options.ocr.languages = try await kb.ocrLanguages(given: try ingest.ocrOptions.givenOCRLanguages(), as: .admin)
            if let language {
                let held = try await kb.status(as: .admin).snippets
                // A new or empty index has nothing to rebuild: nothing to say.
                if try await kb.setKeywordLanguage(try KeywordLanguage(language), as: .admin), held > 0, !global.json {
                    FileHandle.standardError.write(Data("Keyword search is now tuned for \(try KeywordLanguage(language).rawValue); the keyword index was rebuilt.\n".utf8))
                }
            }
            if watch { try await follow(kb: kb, settings: WatchSettings(folders: paths, ingest: options), embedder: embedder, record: record) }
            let bar = ProgressBar(label: "ingest", enabled: Terminal.stderrIsTerminal && !global.json)
            let shown = LockedValue(IngestProgressLine())
            let report = try await kb.ingest(paths, options: options, embedder: embedder, record: record, prune: prune, as: .admin) { progress in
                let line = shown.withLock { $0.update(progress) }
                bar.update(done: line.done, total: line.total, item: line.item, unit: line.unit)
            }
            bar.finish()
            if global.json {
                try Terminal.printJSON(report)
            } else {
                printHuman(report)
            }
            if !report.failed.isEmpty { throw ExitCode.failure }
        }
    }

    /// `--watch`: the folders are ingested (with pruning), then followed until the process is
    /// stopped; each round is a line (a JSON object with --json).
    private func follow(kb: KnowledgeBase, settings: WatchSettings, embedder: (any Embedder)?, record: EmbedderRecord) async throws -> Never {
        let json = global.json
        _ = try kb.watch(settings, embedder: embedder, record: record, as: .admin) { report in
            // Written at once (not buffered), so a pipe sees each round as it ends.
            let line = json ? (try? KBJSON.text(report)) ?? "" : "watch: " + report.summary
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        if !json { FileHandle.standardError.write(Data("kb ingest: watching \(paths.joined(separator: ", ")) (Ctrl-C stops)\n".utf8)) }
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    private func printHuman(_ report: IngestReport) {
        let total = report.added + report.updated + report.unchanged + report.failed.count
        print(String(format: "Ingested %d file%@ in %.2f s: %d added, %d updated, %d unchanged, %d removed, %d failed (%d snippets written%@).",
                     total, total == 1 ? "" : "s", report.seconds, report.added, report.updated, report.unchanged,
                     report.removed, report.failed.count, report.snippets,
                     report.snippets > 0 && report.seconds > 0 ? String(format: ", %.0f a second", Double(report.snippets) / report.seconds) : ""))
        if report.ocrPages + report.ocrCachedPages > 0 {
            print("OCR: \(report.ocrPages) page\(report.ocrPages == 1 ? "" : "s") recognised"
                  + (report.ocrCachedPages > 0 ? ", \(report.ocrCachedPages) taken from the index's OCR cache." : "."))
        }
        for warning in report.warnings { Terminal.warning(warning) }
        if !report.missing.isEmpty {
            Terminal.warning("\(report.missing.count) indexed file(s) are gone from disk; run again with --prune to remove them from the index.")
        }
        for failure in report.failed { Terminal.error("failed: \(failure.message)") }
    }

    /// `kb ingest -`: the text on standard input becomes a source, as `POST /v1/sources` makes one.
    private func ingestStandardInput() async throws {
        try await reportingErrors(json: global.json) {
            let text = String(decoding: try DescriptorIO.standardInput(), as: UTF8.self)
            var request = SourceRequest(text: text)
            request.title = title
            request.id = id
            request.user = user
            request.tags = ingest.tags.isEmpty ? nil : ingest.tags
            request.bots = bots.isEmpty ? nil : bots
            let checkedRequest = try checked(request)
            let choice = try embedderOption.choice()
            let (kb, _, _) = try await KnowledgeBase.openForIngest(at: global.databasePath, embedder: choice, embedderURL: embedderOption.endpoint)
            let added = try await kb.addSource(checkedRequest, waiting: true, embedder: choice, as: .commandLine)
            if global.json {
                try Terminal.printJSON(added)
            } else {
                let job = added.job
                print("Added the source \(added.source.id) (\(job.progress.snippetsTotal) snippet\(job.progress.snippetsTotal == 1 ? "" : "s")).")
                for warning in job.warnings { Terminal.warning(warning) }
            }
        }
    }
}

/// One progress line for an ingest whose reading, OCR and embedding overlap: the bar follows
/// embedding once it has begun (snippets a second), with reading and OCR counts beside it
/// while they go on; before that, reading or OCR.
struct IngestProgressLine {
    private var latest: [IngestProgress.Phase: IngestProgress] = [:]

    mutating func update(_ progress: IngestProgress) -> (done: Int, total: Int, item: String, unit: String) {
        latest[progress.phase] = progress
        guard let embedding = latest[.embedding] else {
            return progress.phase == .recognising
                ? (progress.done, progress.total, "OCR pages · " + progress.current, "pages")
                : (progress.done, progress.total, "reading " + progress.current, "files")
        }
        var beside: [String] = []
        if let reading = latest[.reading], reading.done < reading.total { beside.append("read \(reading.done)/\(reading.total) files") }
        if let ocr = latest[.recognising], ocr.done < ocr.total { beside.append("OCR \(ocr.done)/\(ocr.total) pages") }
        let item = "embedding " + (beside.isEmpty ? "" : "(" + beside.joined(separator: ", ") + ") ") + embedding.current
        return (embedding.done, embedding.total, item, "snippets")
    }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit

struct Ingest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add or update notes (.md, .markdown, .txt) and books (.pdf) from files and folders.",
        discussion: """
            Folders are read recursively; hidden files are skipped. Unchanged files (same content hash) \
            are not read again. Each file is stored in its own transaction: a bad file fails alone and \
            leaves the index as it was. Exits 1 if any file failed.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var ingest: IngestOptionGroup
    @OptionGroup var embedderOption: EmbedderOption

    @Flag(help: "Remove indexed sources under the given folders whose files are gone.")
    var prune = false

    @Argument(help: ArgumentHelp("Files and folders to ingest.", valueName: "path"))
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Name at least one file or folder to ingest.") }
    }

    func run() async throws {
        try await reportingErrors {
            let options = try ingest.makeOptions()
            let choice = try embedderOption.choice()
            let (kb, embedder, record) = try await KnowledgeBase.openForIngest(at: global.databasePath, embedder: choice,
                                                                               embedderURL: embedderOption.endpoint)
            let bar = ProgressBar(label: "ingest", enabled: Terminal.stderrIsTerminal && !global.json)
            let report = await kb.ingest(paths, options: options, embedder: embedder, record: record, prune: prune) { progress in
                bar.update(done: progress.done, total: progress.total,
                           item: (progress.phase == .reading ? "reading " : "embedding ") + progress.current)
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

    private func printHuman(_ report: IngestReport) {
        let total = report.added + report.updated + report.unchanged + report.failed.count
        print(String(format: "Ingested %d file%@ in %.2f s: %d added, %d updated, %d unchanged, %d removed, %d failed (%d snippets written).",
                     total, total == 1 ? "" : "s", report.seconds, report.added, report.updated, report.unchanged,
                     report.removed, report.failed.count, report.snippets))
        for warning in report.warnings { Terminal.warning(warning) }
        if !report.missing.isEmpty {
            Terminal.warning("\(report.missing.count) indexed file(s) are gone from disk; run again with --prune to remove them from the index.")
        }
        for failure in report.failed { Terminal.error("failed: \(failure.message)") }
    }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBRequests
import KBStore

struct Sources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, read and grep the indexed sources; remove or re-read those added over the API; sync an app's collection.",
        subcommands: [ListSources.self, ReadSource.self, GrepSources.self, RemoveSource.self, RereadSources.self, SyncSources.self],
        defaultSubcommand: ListSources.self)
}

struct RereadSources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reread",
        abstract: "Read sources added over the API again from the originals kept with the index (after new OCR settings, say).",
        discussion: """
            Each source is read in a job of its own; one that fails keeps the version it had, and the \
            run exits 1. Files ingested by `kb ingest` are re-read by running `kb ingest` again.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var ocrOptions: OCROptionGroup

    @Argument(help: ArgumentHelp("The ids of the sources to read again, as `kb sources` lists them (default: every uploaded source).", valueName: "id"))
    var ids: [String] = []

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            var settings = try ocrOptions.settings()
            settings.languages = try await kb.ocrLanguages(given: try ocrOptions.givenOCRLanguages(), as: .admin)
            let bar = ProgressBar(label: "reread", enabled: !global.json && Terminal.stderrIsTerminal)
            let reread = try await kb.rereadSources(ids, ocr: settings, as: .admin) { done, total, id in bar.update(done: done, total: total, item: id) }
            bar.finish()
            if global.json {
                try Terminal.printJSON(reread)
            } else {
                for outcome in reread.sources {
                    if let error = outcome.job.error {
                        Terminal.error("\(outcome.id): \(error) (the source keeps the version it had)")
                    } else {
                        let snippets = outcome.job.progress.snippetsTotal
                        print("\(outcome.id): read again, \(snippets) snippet\(snippets == 1 ? "" : "s").")
                        for warning in outcome.job.warnings { Terminal.warning(warning) }
                    }
                }
                if reread.sources.isEmpty { print("No source was added over the API: nothing to read again.") }
            }
            if reread.failed > 0 { throw ExitCode(1) }
        }
    }
}

struct RemoveSource: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a source added over the API (POST /v1/sources, kb ingest -) by its id, with its snippets and original.",
        discussion: "A source ingested from a file belongs to the file: remove it with `kb remove PATH`.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The source's id, as `kb sources` lists it.", valueName: "id"))
    var id: String

    func run() async throws {
        try await answerFromIndex(SourceRemoveRequest(id: id), global, text: { "Removed the source \($0.deleted)." }) { try await $0.removeSource($1, as: .commandLine) }
    }
}

struct ListSources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the indexed sources with their snippet counts and ids (file:… for a file, its own id for a source added over the API), the ids read, grep and the API take.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            if global.json {
                // The same objects as GET /v1/sources: one public id a source (`file:…` or an upload's).
                try Terminal.printJSON(try await kb.sourceInfos(as: .admin))
                return
            }
            let sources = try await kb.sources(as: .admin)
            if sources.isEmpty {
                print("The index is empty. Add files with `kb ingest PATH…`.")
                return
            }
            for source in sources {
                let count = String(source.snippetCount).leftPadded(to: 5)
                print("\(source.kind.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(count)  \(source.title) — \(Terminal.display(source.path))  [\(SourceInfo.id(of: source.path))]")
            }
            let snippets = sources.reduce(0) { $0 + $1.snippetCount }
            print("\(sources.count) source(s), \(snippets) snippet(s).")
        }
    }
}

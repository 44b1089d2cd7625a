import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBStore

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the whole index into another one: an SQLite file or a PostgreSQL database.",
        discussion: """
            Copies sources, snippets, tags, every embedder's vectors, memories with their history, bots, \
            the embedding cache and token usage. The destination must be empty (a new file, or a database \
            without a kb index; a missing database is created). Examples:
              kb export --to postgres://kb@db.internal:5432/kb
              kb export --db postgres://kb@db.internal/kb --to backup.sqlite
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Where to copy the index: FILE.sqlite or postgres://USER@HOST:PORT/DATABASE.", valueName: "index"))
    var to: String

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            if Terminal.stderrIsTerminal, let note = Terminal.debugBuildNote(for: [kb.path, to]) { Terminal.note(note) }
            let bar = ProgressBar(label: "Copying", enabled: !global.json && Terminal.stderrIsTerminal)
            let started = Date()
            let report = try await kb.export(to: to, as: .admin) { done, total, item in bar.update(done: done, total: total, item: item) }
            bar.finish()
            if global.json {
                try Terminal.printJSON(report)
            } else {
                let vectors = report.vectors.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                print("Copied \(report.sources) source(s), \(report.snippets) snippet(s), \(report.memories) memories "
                      + "(\(report.memoryVersions) earlier versions), \(report.bots) bot(s)"
                      + (vectors.isEmpty ? "" : ", vectors: \(vectors)")
                      + (report.cachedVectors > 0 ? ", \(report.cachedVectors) cached vectors" : "")
                      + " to \(report.destination) in \(String(format: "%.2f", Date().timeIntervalSince(started))) s.")
                Terminal.report(report.checkpoint)
            }
        }
    }
}

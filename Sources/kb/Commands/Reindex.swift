import ArgumentParser
import Foundation
import KBCore
import KBKit

struct Reindex: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-embed everything with another embedder, or the index's own anew, then switch atomically.",
        discussion: """
            Searches keep using the current vectors until every snippet and memory has a vector from the new \
            embedder; then the index switches in one transaction. An interrupted run resumes where it stopped \
            (remote vectors are cached in the index, so nothing is paid for twice). Old vectors stay unless --drop-old.

            Without --embedder (or naming the index's own), the index's embedder embeds everything again when it \
            would now embed differently — in another --precision, or with each snippet's title where the index was \
            made before kb embedded titles — and the new vectors replace the old ones. `kb status` shows the precision.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var embedder: EmbedderOption

    @Flag(name: .customLong("drop-old"), help: "Delete the other embedders' vectors after switching.")
    var dropOld = false

    func run() async throws {
        try await reportingErrors {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let bar = ProgressBar(label: "Embedding", enabled: !global.json && Terminal.stderrIsTerminal)
            let report = try await kb.reindex(to: try embedder.choice(), dropOld: dropOld, as: .admin) { progress in
                bar.update(done: progress.done, total: progress.total, item: progress.current)
            }
            bar.finish()
            if global.json {
                try Terminal.printJSON(report)
            } else {
                print("Re-embedded \(report.embedded) snippet(s) in \(String(format: "%.2f", report.seconds)) s; "
                      + "searches now use \(report.to)\(report.from.map { " (was \($0))" } ?? "").")
            }
        }
    }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBMemory
import KBRequests

extension MemoryCommand {
    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a scope: every memory with all its versions, and for user:ID the user's private sources; no trace stays in the index files.",
            discussion: """
                Hand the user their data first: `kb memory export --scope user:ID -o FILE`. On SQLite, deleted text is \
                overwritten with zeros, the keyword index is merged and the write-ahead log truncated; on PostgreSQL the rows \
                are deleted (see the README for what VACUUM does and does not guarantee).
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The scope to erase: user:ID, bot:NAME or global.", valueName: "scope"))
        var scope: String

        func run() async throws {
            try await answerFromIndex(EraseRequest(scope: scope), global, text: { (erased: Erasure) in
                "Erased \(erased.scope): \(erased.memories) memories (\(erased.versions) versions), \(erased.sources) sources, "
                    + "\(erased.jobs) pending jobs, \(erased.cachedVectors) cached embeddings."
            }) { try await $0.erase($1, as: .commandLine) }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write memories as JSON Lines (with history and superseded ones), oldest first.",
            discussion: "`kb memory import` reads the file back with the same ids, times and history.")

        @OptionGroup var global: GlobalOptions

        @Option(name: .customLong("scope"), help: ArgumentHelp("Only this scope (repeatable).", valueName: "scope"))
        var scopes: [String] = []

        @Option(name: [.short, .long], help: ArgumentHelp("Write to this file instead of stdout.", valueName: "file"))
        var output: String?

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let text = try await kb.exportMemories(scopes: try scopes.map { try MemoryScope($0) }, as: .admin)
                guard let output else {
                    FileHandle.standardOutput.write(Data(text.utf8))
                    return
                }
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: SourcePaths.absolute(output)), options: .atomic)
                } catch {
                    throw KBError(.unreadableFile, "Cannot write \(output): \(error.localizedDescription). Check the folder exists and is writable.")
                }
                let count = text.split(separator: "\n").count
                if global.json {
                    try Terminal.printJSON(["exported": count])
                } else {
                    print("Exported \(count) memor\(count == 1 ? "y" : "ies") to \(output).")
                }
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read memories from JSON Lines written by `kb memory export`.",
            discussion: """
                Each memory keeps its id, times and history, and is written in its own transaction. A memory \
                already stored unchanged is skipped, so importing a file twice changes nothing. Bad lines are \
                reported by number (exit 1) and the rest still import. A stored memory with the same id but \
                other data is a conflict unless --replace.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var embedder: EmbedderOption
        @OptionGroup var size: SizeLimit

        @Flag(help: "Overwrite stored memories that have the same id but other data.")
        var replace = false

        @Argument(help: ArgumentHelp("The JSON Lines file ('-' reads stdin).", valueName: "file"))
        var file: String

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let text: String
                if file == "-" {
                    text = try MemoryCommand.text(["-"])
                } else {
                    let path = SourcePaths.absolute(file)
                    guard FileManager.default.fileExists(atPath: path) else {
                        throw KBError(.noSuchFile, "No such file: \(file). Check the path.")
                    }
                    guard let data = FileManager.default.contents(atPath: path), let decoded = String(data: data, encoding: .utf8) else {
                        throw KBError(.unreadableFile, "Cannot read \(file) as UTF-8 text. Give a file written by `kb memory export`.")
                    }
                    text = decoded
                }
                let kb = try KnowledgeBase.open(at: global.databasePath, embedderURL: embedder.endpoint)
                var options = MemoryOptions()
                options.maxContentBytes = size.maxSize
                let report = try await kb.importMemories(text, options: options, replacing: replace, embedder: try embedder.choice(), as: .admin)
                if global.json {
                    try Terminal.printJSON(report)
                } else {
                    for failure in report.failed { Terminal.error("\(file):\(failure.line): \(failure.message)") }
                    print("Imported \(report.added) new, \(report.replaced) replaced, \(report.unchanged) unchanged, \(report.failed.count) failed.")
                }
                if !report.failed.isEmpty { throw ExitCode.failure }
            }
        }
    }
}

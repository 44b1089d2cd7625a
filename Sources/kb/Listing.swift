import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBStore

struct Sources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the indexed sources with their snippet counts, or remove one added over the API.",
        subcommands: [ListSources.self, RemoveSource.self, RereadSources.self], defaultSubcommand: ListSources.self)
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
            settings.languages = try await kb.ocrLanguages(given: try ocrOptions.givenOCRLanguages())
            let bar = ProgressBar(label: "reread", enabled: !global.json && Terminal.stderrIsTerminal)
            let reread = try await kb.rereadSources(ids, ocr: settings) { done, total, id in bar.update(done: done, total: total, item: id) }
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
        try await answerFromIndex(SourceRemoveRequest(id: id), global, text: { "Removed the source \($0.deleted)." }) { try await $0.removeSource($1) }
    }
}

struct ListSources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the indexed sources (files, and sources added over the API as upload:ID) with their snippet counts.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let sources = try await kb.sources()
            if global.json {
                try Terminal.printJSON(sources)
                return
            }
            if sources.isEmpty {
                print("The index is empty. Add files with `kb ingest PATH…`.")
                return
            }
            for source in sources {
                let count = String(source.snippetCount).leftPadded(to: 5)
                print("\(source.kind.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(count)  \(source.title) — \(Terminal.display(source.path))")
            }
            let snippets = sources.reduce(0) { $0 + $1.snippetCount }
            print("\(sources.count) source(s), \(snippets) snippet(s).")
        }
    }
}

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove sources from the index by file path, or everything under a folder path.",
        discussion: "Nothing is removed if any path matches no indexed source.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("Files or folders to remove from the index.", valueName: "path"))
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Name at least one path to remove.") }
    }

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let removed = try await kb.remove(paths)
            if global.json {
                try Terminal.printJSON(["removed": removed])
            } else {
                for path in removed { print("removed \(Terminal.display(path))") }
                print("\(removed.count) source(s) removed.")
            }
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show where the index is and what it holds.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let status = try await kb.status()
            if global.json {
                try Terminal.printJSON(status)
                return
            }
            let kinds = status.sourcesByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("Index:    \(status.path)")
            print("Size:     \(ByteCountFormatter.string(fromByteCount: status.sizeOnDisk, countStyle: .file))")
            print("Schema:   \(status.schemaVersion)")
            print("Sources:  \(status.sources)\(kinds.isEmpty ? "" : " (\(kinds))")")
            print("Snippets: \(status.snippets)")
            print("Tags:     \(status.tags)")
            print("Keywords: \(status.keywordLanguage)")
            if let embedder = status.embedder {
                let count = status.vectors[embedder.name] ?? 0
                print("Embedder: \(embedder.name)\(embedder.dimension > 0 ? " (\(embedder.dimension)-dim, \(count) vectors)" : " (keyword-only index)")")
                if case .openAI(_, let url)? = (try? EmbedderChoice(embedder.spec))?.base { print("Endpoint: \(url)") }
            }
            // Price per million tokens, for an estimate: $KB_EMBEDDINGS_PRICE (e.g. 0.02).
            let price = ProcessInfo.processInfo.environment["KB_EMBEDDINGS_PRICE"].flatMap(Double.init)
            for (name, tokens) in status.tokensUsed.sorted(by: { $0.key < $1.key }) {
                let cost = price.map { String(format: " (≈ $%.4f at $%g per million tokens)", Double(tokens) / 1e6 * $0, $0) } ?? ""
                print("Tokens:   \(name) \(tokens) used\(cost); \(status.cachedVectors[name] ?? 0) vectors cached")
            }
        }
    }
}

struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the snippets and tags ingest would make of a file, without writing anything.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var ingest: IngestOptionGroup

    @Argument(help: ArgumentHelp("The file to inspect.", valueName: "file"))
    var file: String

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let document = try await KnowledgeBase.inspect(file, options: try ingest.makeOptions())
            if global.json {
                try Terminal.printJSON(document)
                return
            }
            let source = document.source
            print("\(Terminal.bold(source.title))  (\(source.kind.rawValue), \(source.size) bytes, \(document.snippets.count) snippets)")
            if !source.tags.isEmpty { print("tags: " + source.tags.map(\.name).joined(separator: ", ")) }
            if !source.keywords.isEmpty { print("keywords: " + source.keywords.joined(separator: " | ")) }
            if let ocr = source.ocr { print("OCR: " + ocr) }
            for warning in document.warnings { Terminal.warning(warning) }
            for snippet in document.snippets {
                print("")
                var header = "#\(snippet.ordinal) [\(snippet.start)..<\(snippet.end)] \(snippet.text.unicodeScalars.count) chars"
                if !snippet.headingPath.isEmpty { header += " — " + snippet.headingPathString }
                if let pages = snippet.pages { header += " — " + pages.citation }
                if let ocr = snippet.ocr { header += " — " + ocr.label }
                print(Terminal.bold(header))
                let extra = snippet.tags.filter { !source.tags.contains($0) }
                if !extra.isEmpty { print("tags: +" + extra.map(\.name).joined(separator: ", +")) }
                print(snippet.text)
            }
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

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
            let bar = ProgressBar(label: "Copying", enabled: !global.json && Terminal.stderrIsTerminal)
            let started = Date()
            let report = try await kb.export(to: to) { done, total, item in bar.update(done: done, total: total, item: item) }
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
            }
        }
    }
}

struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Build or drop an approximate (HNSW) vector index in a PostgreSQL index.",
        subcommands: [Build.self, Drop.self])

    struct Build: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build an HNSW index over the vectors; unfiltered vector searches then walk it instead of scanning every vector.",
            discussion: "Reports the build time and recall@10 against the exact ranking, measured with stored vectors as queries.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Build an HNSW index (pgvector).")
        var hnsw = false

        @Option(name: .customLong("m"), help: "Links per node.")
        var m = HNSWSettings().m

        @Option(name: .customLong("ef-construction"), help: "Candidates kept while building.")
        var efConstruction = HNSWSettings().efConstruction

        @Option(name: .customLong("ef-search"), help: "Candidates kept while searching (more: slower, closer to exact).")
        var efSearch = HNSWSettings().efSearch

        @Option(help: "Stored vectors used as queries to measure recall.")
        var sample = 100

        func validate() throws {
            if !hnsw { throw ValidationError("Say which index to build: --hnsw (the only kind there is).") }
        }

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let report = try await kb.buildApproximateIndex(HNSWSettings(m: m, efConstruction: efConstruction, efSearch: efSearch), sample: sample)
                if global.json {
                    try Terminal.printJSON(report)
                } else {
                    print("Built an HNSW index over \(report.vectors) vectors of \(report.embedder) (m \(m), ef_construction \(efConstruction)) in "
                          + "\(String(format: "%.2f", report.seconds)) s; recall@10 against exact search \(String(format: "%.3f", report.recallAt10)) "
                          + "over \(report.sampled) queries at ef_search \(efSearch).")
                }
            }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Drop the HNSW index: vector searches are exact again.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let dropped = try await KnowledgeBase.open(at: global.databasePath, create: false).dropApproximateIndex()
                if global.json { try Terminal.printJSON(["dropped": dropped]) } else { print(dropped ? "Dropped the HNSW index." : "There was no HNSW index.") }
            }
        }
    }
}

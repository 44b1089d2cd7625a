import ArgumentParser
import Foundation
import KBCore
import KBEval
import KBIngest
import KBKit
import KBRequests
import KBStore

struct Eval: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure retrieval quality on a labelled query set (BEIR layout).",
        discussion: """
            DATASET is a folder with corpus.jsonl, queries.jsonl and qrels/<split>.tsv; or, in kb's own \
            layout, a corpus.path file naming a folder of notes (document ids are note paths relative to \
            it). The corpus goes into a temporary index, or into --db (else $KB_DB), where a re-run reuses it and only \
            re-runs the queries. Reports nDCG@10, MRR@10, recall@10, recall@100 and MAP@100 as trec_eval \
            defines them (queries without a relevant document are skipped and counted), and latency.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var embedderOption: EmbedderOption
    @OptionGroup(title: "Second stage") var rerank: RerankerOption
    @OptionGroup(title: "Query rewriting") var rewrite: RewriterOption

    @Argument(help: ArgumentHelp("The dataset folder.", valueName: "dataset"))
    var dataset: String

    @Option(help: "Which qrels/<split>.tsv to use.")
    var split = "test"

    @Option(help: ArgumentHelp("Tune the evaluation index's keyword search for this language (see `kb ingest --language`).", valueName: "language"))
    var language: String?

    @Option(help: "hybrid, vector, keyword, or all.")
    var mode = "hybrid"

    @Option(help: ArgumentHelp("How hybrid search fuses its rankings: adaptive (the default), rrf, or all (each reported; rrf as hybrid-rrf).", valueName: "fusion"))
    var fusion = "adaptive"

    @Option(help: ArgumentHelp("For queries with a history: turn, concatenated, fused (kb's way), or all (the default for a set with histories).", valueName: "way"))
    var history: String?

    @Option(name: .short, help: "Documents retrieved per query.")
    var k = 100

    @Option(help: ArgumentHelp("Candidates each ranking contributes before fusion (default: a search's, \(RetrievalProfile.standard.candidates)); hits below them follow in rank order.", valueName: "n"))
    var candidates: Int?

    @Flag(help: "Chunk documents (hits collapse to documents by their best snippet) instead of one snippet per document.")
    var chunk = false

    @Option(name: .customLong("chunk-size"), help: "Most characters in a snippet with --chunk.")
    var chunkSize = Chunker.defaultTarget

    @Option(name: .customLong("run-file"), help: ArgumentHelp("Write the rankings as a TREC run file (with several modes, one file per mode: PATH.MODE).", valueName: "path"))
    var runFile: String?

    @Option(help: ArgumentHelp("Write a Markdown report with the worst queries and an SVG chart into this folder.", valueName: "dir"))
    var report: String?

    @Option(help: ArgumentHelp("An earlier `kb eval --json` output: show the changes against it.", valueName: "file.json"))
    var baseline: String?

    @Option(name: .customLong("fail-below"), help: ArgumentHelp("Exit 1 if a metric is below this (repeatable), e.g. ndcg@10=0.6.", valueName: "metric=value"))
    var failBelow: [String] = []

    func validate() throws {
        let modes = SearchMode.allCases.map(\.rawValue) + ["all"]
        guard modes.contains(mode) else { throw ValidationError("--mode takes \(modes.joined(separator: ", ")).") }
        guard fusion == "all" || FusionMethod(rawValue: fusion) != nil else {
            throw ValidationError("--fusion takes \((FusionMethod.allCases.map(\.rawValue) + ["all"]).joined(separator: ", ")).")
        }
        if let history, history != "all", HistoryUse(rawValue: history) == nil {
            throw ValidationError("--history takes turn, concatenated, fused or all.")
        }
        guard (10...1000).contains(k) else { throw ValidationError("-k must be between 10 and 1000 (nDCG@10 needs 10).") }
        if let candidates, !(1...10_000).contains(candidates) { throw ValidationError("--candidates must be between 1 and 10000.") }
        for threshold in failBelow {
            do { _ = try EvaluationReport.Threshold(parsing: threshold) } catch let error as KBError { throw ValidationError(error.message) }
        }
    }

    func run() async throws {
        try await reportingErrors {
            let thresholds = try failBelow.map(EvaluationReport.Threshold.init(parsing:))
            var baselineReport: EvaluationReport?
            if let baseline {
                guard let data = FileManager.default.contents(atPath: baseline),
                      let decoded = try? JSONDecoder().decode(EvaluationReport.self, from: data) else {
                    throw KBError(.invalidArgument, "Cannot read the baseline \(baseline); it must be the output of `kb eval --json`.")
                }
                baselineReport = decoded
            }
            let folder = SourcePaths.absolute(dataset)
            let notes = KnowledgeBase.notesCorpus(of: folder)
            let data = try BEIRDataset.load(from: folder, split: split, corpus: notes == nil)
            var options = EvaluationOptions()
            options.modes = mode == "all" ? SearchMode.allCases : [SearchMode(rawValue: mode)!]
            options.histories = history.flatMap { $0 == "all" ? HistoryUse.allCases : [HistoryUse(rawValue: $0)!] }
            options.fusions = fusion == "all" ? FusionMethod.allCases : [FusionMethod(rawValue: fusion)!]
            options.depth = k
            options.candidates = candidates
            options.chunk = chunk
            options.chunker = try Chunker(targetCharacters: chunkSize)

            var temporary: URL?
            let dbPath: String
            if let db = global.db ?? ProcessInfo.processInfo.environment["KB_DB"].flatMap({ $0.isEmpty ? nil : $0 }) {
                dbPath = db
            } else {
                let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kb-eval-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                temporary = dir
                dbPath = dir.appendingPathComponent("eval.sqlite").path
            }
            defer { if let temporary { try? FileManager.default.removeItem(at: temporary) } }

            let (kb, embedder, record) = try await KnowledgeBase.openForIngest(at: dbPath, embedder: try embedderOption.choice(),
                                                                               embedderURL: embedderOption.endpoint)
            if let language { try await kb.setKeywordLanguage(try KeywordLanguage(language), as: .admin) }
            kb.cachesQueryVectors = false   // each mode's latency includes its query's embedding
            try rerank.install(on: kb)
            try rewrite.install(on: kb)
            options.bothStages = true   // first stage and second side by side
            let showProgress = Terminal.stderrIsTerminal && !global.json
            let loadBar = ProgressBar(label: "corpus", enabled: showProgress)
            _ = try await kb.loadCorpus(of: folder, data, options: options, embedder: embedder, record: record, as: .admin) { p in
                loadBar.update(done: p.done, total: p.total, item: p.current)
            }
            loadBar.finish()
            let queryBar = ProgressBar(label: "queries", enabled: showProgress)
            let run = try await kb.evaluate(datasetFolder: folder, data, options: options, as: .admin) { done, total in
                queryBar.update(done: done, total: total, item: "")
            }
            queryBar.finish()
            let result = run.report

            if let runFile {
                let folder = URL(fileURLWithPath: runFile).deletingLastPathComponent()
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                } catch {
                    throw KBError(.invalidArgument, "Cannot make the folder \(folder.path) for --run-file: \(error.localizedDescription). Give a path in a writable folder.")
                }
                let labels = result.modes.map(\.mode)
                for label in labels {
                    let path = labels.count > 1 ? runFile + "." + label : runFile
                    let rankings = run.rankings[label] ?? [:]
                    let lines = rankings.keys.sorted().flatMap { q in
                        EvaluationReport.runFileLines(query: q, ranking: rankings[q]!, tag: "kb-\(label)")
                    }
                    try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
                }
            }
            if let report {
                try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true)
                try result.markdown(baseline: baselineReport).write(toFile: report + "/report.md", atomically: true, encoding: .utf8)
                try result.svgChart().write(toFile: report + "/ndcg.svg", atomically: true, encoding: .utf8)
                try JSONEncoder().encode(result).write(to: URL(fileURLWithPath: report + "/report.json"))
            }
            if global.json {
                try Terminal.printJSON(result)
            } else {
                print(result.table(baseline: baselineReport))
            }
            let failures = result.failures(thresholds)
            for failure in failures { Terminal.error("below threshold: \(failure)") }
            if !failures.isEmpty { throw ExitCode.failure }
        }
    }
}

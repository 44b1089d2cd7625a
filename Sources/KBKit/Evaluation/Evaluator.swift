import Foundation
import KBCore
import KBEval
import KBIngest
import KBRetrieval
import KBStore

/// `kb eval`: a dataset's corpus loaded into an index (through the `DocumentWriter`, or an
/// ingest of its notes) and its judged queries searched in each mode and scored. Holds no state
/// of its own.
struct Evaluator: Sendable {
    let store: any IndexStore
    let retriever: Retriever
    let ingestor: Ingestor
    let writer: DocumentWriter

    var profile: RetrievalProfile { retriever.profile }

    static let corpusPrefix = "beir:"

    /// A dataset folder in kb's own layout names a folder of notes in `corpus.path` instead of
    /// holding `corpus.jsonl`; document ids are note paths relative to that folder.
    static func notesCorpus(of datasetFolder: String) -> String? {
        let file = datasetFolder + "/corpus.path"
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        let relative = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return relative.hasPrefix("/") ? relative : ((datasetFolder as NSString).appendingPathComponent(relative) as NSString).standardizingPath
    }

    /// Puts a dataset's corpus into this index, unless it already holds exactly that corpus
    /// (same corpus file or notes, same chunking): re-runs only re-run the queries.
    func loadCorpus(
        of datasetFolder: String, _ dataset: BEIRDataset, options: EvaluationOptions,
        embedder: (any Embedder)?, record: EmbedderRecord, progress: @escaping @Sendable (IngestProgress) -> Void = { _ in }
    ) async throws -> IngestReport {
        if let notes = Self.notesCorpus(of: datasetFolder) {
            var ingestOptions = IngestOptions(chunker: options.chunker)
            let vocabularyFile = notes + "/tags.yaml"
            if FileManager.default.fileExists(atPath: vocabularyFile) {
                let vocabulary: String
                do {
                    vocabulary = try String(contentsOfFile: vocabularyFile, encoding: .utf8)
                } catch {
                    throw KBError(.unreadableFile, "Cannot read the corpus's tag vocabulary \(vocabularyFile): \(error.localizedDescription).")
                }
                ingestOptions.vocabulary = try TagVocabulary(yaml: vocabulary, name: vocabularyFile)
            }
            let report = await ingestor.ingest([notes], options: ingestOptions, embedder: embedder, record: record, prune: true, progress: progress)
            if let failure = report.failed.first { throw KBError(.invalidArgument, "The corpus \(notes) did not ingest cleanly: \(failure.message)") }
            return report
        }
        let corpusFile = datasetFolder + "/corpus.jsonl"
        guard let corpusData = FileManager.default.contents(atPath: corpusFile) else {
            throw KBError(.noSuchFile, "No corpus.jsonl (or corpus.path) in \(datasetFolder). Is this a BEIR-layout folder?")
        }
        // The layout is part of it: transcripts loaded as conversations (2026-11) are not the
        // documents an older kb loaded from the same file.
        let fingerprint = DocumentReader.contentHash(corpusData) + (options.chunk ? "|chunk=\(options.chunker.targetCharacters)" : "|whole")
            + (dataset.isTranscripts ? "|conversations" : "")
        let (status, loaded) = try await store.snapshot { (try $0.status(), try $0.meta("eval_corpus")) }
        let transcripts = Self.transcripts(of: dataset)
        let turns = Set(transcripts.flatMap { $0.turns.map(\.id) })
        let singles = dataset.documents.filter { !turns.contains($0.id) }
        if loaded == fingerprint, status.sources == singles.count + transcripts.count {
            return IngestReport()   // already loaded
        }
        if status.sources > 0 {
            throw KBError(.invalidArgument,
                "The index \(store.location) already holds \(status.sources) other sources; evaluate into a new index (omit --db and unset KB_DB, or name a new file).")
        }
        var documents = singles.map { document -> (name: String, document: SourceDocument, isNew: Bool) in
            let text = TextHygiene.clean(document.title.isEmpty ? document.text : document.title + "\n\n" + document.text)
            let source = Source(path: Self.corpusPrefix + document.id, kind: .note, title: document.title.isEmpty ? document.id : document.title,
                                contentHash: "", size: text.utf8.count)
            var snippets: [Snippet]
            if options.chunk {
                let scalars = Array(text.unicodeScalars)
                snippets = options.chunker.chunk(scalars, sections: MarkdownStructure.paragraphs(scalars)).enumerated().map { i, span in
                    Snippet(ordinal: i, text: String(String.UnicodeScalarView(scalars[span.range])), start: span.range.lowerBound, end: span.range.upperBound)
                }
            } else {
                snippets = [Snippet(ordinal: 0, text: text, start: 0, end: text.unicodeScalars.count)]
            }
            if snippets.isEmpty { snippets = [Snippet(ordinal: 0, text: document.id, start: 0, end: 0)] }
            // Languages detected as an ingest detects them: searches weigh their rankings by them.
            var loaded = SourceDocument(source: source, snippets: snippets)
            LanguageDetector.tag(&loaded, .detect)
            return (document.id, loaded, true)
        }
        documents += transcripts.map { transcript in
            var loaded = Self.transcriptDocument(transcript, options: options).document
            LanguageDetector.tag(&loaded, .detect)
            return (transcript.path, loaded, true)
        }
        var report = IngestReport()
        var counted = DocumentWriter.WriteProgress(total: documents.reduce(0) { $0 + $1.document.snippets.count })
        await writer.write(documents, embedder: embedder, record: record, into: &report, counted: &counted, progress: progress)
        if let failure = report.failed.first {
            throw KBError(.embedding, "Loading the corpus failed for \(report.failed.count) documents, first \(failure.path): \(failure.message)")
        }
        try await store.setMeta("eval_corpus", fingerprint)
        return report
    }

    /// A conversation of a transcripts dataset: its source path and its turns in order.
    struct Dialogue {
        var conversation: String
        var path: String
        var turns: [BEIRDataset.Document]
    }

    /// Where a conversation's transcript is kept: one source, its turns as snippets.
    static func transcriptPath(_ conversation: String) -> String { corpusPrefix + conversation + "/transcript" }

    /// The dataset's conversations (documents with `conversation`), turns in `position` order.
    static func transcripts(of dataset: BEIRDataset) -> [Dialogue] {
        var byConversation: [String: [BEIRDataset.Document]] = [:]
        var order: [String] = []
        for document in dataset.documents {
            guard let conversation = document.conversation else { continue }
            if byConversation[conversation] == nil { order.append(conversation) }
            byConversation[conversation, default: []].append(document)
        }
        return order.map { conversation in
            let turns = byConversation[conversation]!.enumerated()
                .sorted { ($0.element.position ?? 0, $0.offset) < ($1.element.position ?? 0, $1.offset) }.map(\.element)
            return Dialogue(conversation: conversation, path: transcriptPath(conversation), turns: turns)
        }
    }

    /// A transcript as one source of kind `conversation` (`Transcript.document`: a snippet per
    /// turn, its speaker and day as tags, the document's title — a session's date — as its
    /// heading), and where each turn starts.
    static func transcriptDocument(_ transcript: Dialogue, options: EvaluationOptions) -> (document: SourceDocument, turnStarts: [Int]) {
        let turns = transcript.turns.map { document -> KBIngest.Transcript.Turn in
            let speaker = document.speaker ?? document.text.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
            return KBIngest.Transcript.Turn(speaker: speaker, text: document.text, time: document.time, id: document.id,
                                            session: document.title.isEmpty ? nil : document.title)
        }
        let size = transcript.turns.reduce(0) { $0 + $1.text.utf8.count + 1 }
        return KBIngest.Transcript.document(turns, path: transcript.path, title: transcript.conversation, contentHash: "", size: size,
                                            options: IngestOptions(chunker: options.chunker))
    }

    /// Runs every judged query of the dataset in each mode and scores the rankings.
    func evaluate(
        datasetFolder: String, _ dataset: BEIRDataset, options: EvaluationOptions,
        progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> EvaluationRun {
        let notesRoot = Self.notesCorpus(of: datasetFolder).map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        // A transcript's snippet is the turn it starts in: (path, start) names the document.
        let turnStarts = Dictionary(uniqueKeysWithValues: Self.transcripts(of: dataset).map { transcript in
            (transcript.path, zip(Self.transcriptDocument(transcript, options: options).turnStarts, transcript.turns.map(\.id)).map { ($0, $1) })
        })
        // Notes are documents by relative path; a PDF's pages are documents of their own
        // (`books/x.pdf#p3`, the physical page where the snippet starts), so questions can be
        // judged by the page that answers them.
        func documentID(_ hit: SearchHit) -> String {
            if let root = notesRoot, hit.sourcePath.hasPrefix(root) {
                let relative = String(hit.sourcePath.dropFirst(root.count))
                if let pages = hit.snippet.pages { return relative + "#p\(pages.start)" }
                return relative
            }
            if let turns = turnStarts[hit.sourcePath] {
                // The last turn that starts at or before the snippet.
                var low = 0, high = turns.count
                while low < high {
                    let middle = (low + high) / 2
                    if turns[middle].0 <= hit.snippet.start { low = middle + 1 } else { high = middle }
                }
                if low > 0 { return turns[low - 1].1 }
            }
            return hit.sourcePath.hasPrefix(Self.corpusPrefix) ? String(hit.sourcePath.dropFirst(Self.corpusPrefix.count)) : hit.sourcePath
        }
        let judged = dataset.queries.filter { Metrics.hasRelevant(dataset.qrels[$0.id] ?? [:]) }
        let skipped = dataset.queries.count - judged.count
        var modeResults: [EvaluationReport.ModeResult] = []
        var rankings: [String: [String: [Metrics.Scored]]] = [:]
        var embedderName: String?
        var done = 0
        let uses = options.histories ?? (dataset.isConversational ? [.turn, .concatenated, .fused] : [.turn])
        let stages = options.bothStages && !retriever.stage.isPassThrough ? [false, true] : [!retriever.stage.isPassThrough]
        let runs = options.modes.flatMap { mode in
            (mode == .hybrid ? options.fusions : [.adaptive]).flatMap { fusion in
                uses.flatMap { use in stages.map { (mode, use, fusion, $0) } }
            }
        }
        for (mode, use, fusion, staged) in runs {
            var perQuery: [(query: BEIRDataset.Query, ndcg: Double, ranking: [String])] = []
            var sums: [String: Double] = [:]
            var latencies: [Double] = []
            var modeRankings: [String: [Metrics.Scored]] = [:]
            for (index, query) in judged.enumerated() {
                var search = SearchQuery(query.text)
                search.mode = mode
                search.fusion = fusion
                search.secondStage = staged
                search.excerpts = false
                // The rankings are fused over the profile's candidates, as a user's search is (unless
                // asked otherwise); the list goes as deep as the metrics read, below them.
                search.candidates = options.candidates ?? profile.candidates
                if notesRoot != nil {
                    // Documents are notes or PDF pages: collapse snippets by document id below.
                    search.limit = min(1000, options.depth * 3)
                } else {
                    search.limit = options.depth
                    search.groupBySource = options.chunk   // one snippet per document needs no grouping
                }
                search.tags = query.tags.map { Tag($0) }
                if let conversation = query.conversation { search.sourcePrefixes = [Self.transcriptPath(conversation)] }
                search.history = query.history
                search.historyUse = use
                try Retriever.check(search)
                if index == 0 { _ = try await retriever.search(search) }   // warm up: load the model and vectors
                let started = DispatchTime.now().uptimeNanoseconds
                let results = try await retriever.search(search)
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
                if results.embedder != nil { embedderName = results.embedder }
                var seen = Set<String>()
                let scored = results.hits.map { Metrics.Scored(documentID($0), $0.score) }
                    .filter { seen.insert($0.id).inserted }.prefix(options.depth).map { $0 }
                modeRankings[query.id] = scored
                let ranking = Metrics.ranked(scored)
                let qrels = dataset.qrels[query.id] ?? [:]
                let metrics = Metrics.all(ranking, qrels)
                for (name, value) in metrics { sums[name, default: 0] += value }
                perQuery.append((query, metrics["ndcg@10"] ?? 0, ranking))
                done += 1
                progress(done, judged.count * runs.count)
            }
            let count = Double(max(1, judged.count))
            let worst = perQuery.sorted { $0.ndcg != $1.ndcg ? $0.ndcg < $1.ndcg : $0.query.id < $1.query.id }.prefix(5).map { item in
                let expected = (dataset.qrels[item.query.id] ?? [:]).filter { $0.value > 0 }
                    .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(3).map(\.key)
                return EvaluationReport.QueryOutcome(id: item.query.id, text: item.query.text, ndcgAt10: item.ndcg,
                                                     expected: Array(expected), got: Array(item.ranking.prefix(3)))
            }
            modeResults.append(EvaluationReport.ModeResult(
                mode: EvaluationOptions.label(mode, use, fusion: fusion, secondStage: staged), metrics: sums.mapValues { $0 / count },
                latencyP50Milliseconds: Metrics.percentile(latencies, 0.5), latencyP95Milliseconds: Metrics.percentile(latencies, 0.95),
                worst: Array(worst)))
            rankings[EvaluationOptions.label(mode, use, fusion: fusion, secondStage: staged)] = modeRankings
        }
        let status = try await store.snapshot { try $0.status() }
        let report = EvaluationReport(
            dataset: dataset.name, split: dataset.split,
            documents: notesRoot == nil ? dataset.documents.count : status.sources,
            queries: judged.count, skippedQueries: skipped, embedder: embedderName,
            chunked: options.chunk || notesRoot != nil, depth: options.depth, modes: modeResults)
        return EvaluationRun(report: report, rankings: rankings)
    }
}

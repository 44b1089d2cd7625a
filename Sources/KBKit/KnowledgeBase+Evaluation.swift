public import KBCore
public import KBEval
public import KBStore

/// `kb eval` (`Evaluator`).
extension KnowledgeBase {
    /// A dataset folder in kb's own layout names a folder of notes in `corpus.path` instead of
    /// holding `corpus.jsonl`; document ids are note paths relative to that folder.
    public static func notesCorpus(of datasetFolder: String) -> String? { Evaluator.notesCorpus(of: datasetFolder) }

    /// Puts a dataset's corpus into this index, unless it already holds exactly that corpus
    /// (same corpus file or notes, same chunking): re-runs only re-run the queries.
    public func loadCorpus(
        of datasetFolder: String, _ dataset: BEIRDataset, options: EvaluationOptions,
        embedder: (any Embedder)?, record: EmbedderRecord, progress: @escaping @Sendable (IngestProgress) -> Void = { _ in }
    ) async throws -> IngestReport {
        try await evaluator.loadCorpus(of: datasetFolder, dataset, options: options, embedder: embedder, record: record, progress: progress)
    }

    /// Runs every judged query of the dataset in each mode and scores the rankings.
    public func evaluate(
        datasetFolder: String, _ dataset: BEIRDataset, options: EvaluationOptions,
        progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> EvaluationRun {
        try await evaluator.evaluate(datasetFolder: datasetFolder, dataset, options: options, progress: progress)
    }
}

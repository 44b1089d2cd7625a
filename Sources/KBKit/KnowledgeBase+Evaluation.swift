public import KBCore
public import KBEval
public import KBRequests
public import KBStore

/// `kb eval` (`Evaluator`).
extension KnowledgeBase {
    /// A dataset folder in kb's own layout names a folder of notes in `corpus.path` instead of
    /// holding `corpus.jsonl`; document ids are note paths relative to that folder.
    public static func notesCorpus(of datasetFolder: String) -> String? { Evaluator.notesCorpus(of: datasetFolder) }

    /// Puts a dataset's corpus into this index, unless it already holds exactly that corpus
    /// (same corpus file or notes, same chunking): re-runs only re-run the queries. The admin's only.
    public func loadCorpus(
        of datasetFolder: String, _ dataset: BEIRDataset, options: EvaluationOptions,
        embedder: (any Embedder)?, record: EmbedderRecord, as caller: Caller, progress: @escaping @Sendable (IngestProgress) -> Void = { _ in }
    ) async throws -> IngestReport {
        try caller.requireAdmin("load an evaluation corpus")
        return try await evaluator.loadCorpus(of: datasetFolder, dataset, options: options, embedder: embedder, record: record, progress: progress)
    }

    /// Runs every judged query of the dataset in each mode and scores the rankings. The admin's only.
    public func evaluate(
        datasetFolder: String, _ dataset: BEIRDataset, options: EvaluationOptions, as caller: Caller,
        progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> EvaluationRun {
        try caller.requireAdmin("run an evaluation")
        return try await evaluator.evaluate(datasetFolder: datasetFolder, dataset, options: options, progress: progress)
    }
}

import KBCore
public import KBRequests
public import KBStore

extension KnowledgeBase {
    /// Copies this whole index — sources (with uploads' originals), snippets, tags, every
    /// embedder's vectors, memories with their history, bots, the embedding cache and token usage — into the empty index at
    /// `destination` (an SQLite file or a `postgres://` database, made when missing). Each source
    /// and memory is written in its own transaction; the copy holds the same data, so searches
    /// give the same results (keyword scores are each backend's own). The admin's only.
    public func export(to destination: String, as caller: Caller,
                       progress: @Sendable (_ done: Int, _ total: Int, _ item: String) -> Void = { _, _, _ in }) async throws -> ExportReport {
        try caller.requireAdmin("export the index")
        let target = try Self.openStore(destination, create: true, options: try StoreOptions(environment: environment), environment: environment)
        // What else the index remembers about itself: the corpus `kb eval` loaded into it, the
        // languages OCR was given.
        return try await IndexCopier(store: store).export(into: target, meta: ["eval_corpus", Ingestor.ocrLanguagesKey], progress: progress)
    }
}

import Foundation
public import KBCore
import KBEmbed
public import KBIngest
public import KBRequests
public import KBStore

/// Files into the index (`Ingestor`, through the `DocumentWriter`), and the embedder choice.
extension KnowledgeBase {
    /// The embedder this index uses: the one it records, else `choice`, else the local model.
    /// Fails, before any work, when `choice` differs from what the index holds.
    public func embedder(_ choice: EmbedderChoice?) async throws -> (embedder: (any Embedder)?, record: EmbedderRecord) {
        try await embedders.choose(choice)
    }

    /// Brings the index up to date with files and folders: new files are added, changed files
    /// replaced, unchanged files left alone. Files are read a batch at a time while the batch
    /// before is embedded; snippets are embedded in groups across files (a changed file reuses
    /// the vectors of paragraphs whose text did not change) and a group's files are written with
    /// their vectors in one transaction. A bad file fails alone and leaves what the index held
    /// for it untouched.
    ///
    /// - Parameters:
    ///   - paths: files and folders (read recursively, hidden files skipped).
    ///   - options: chunking, tags, OCR and PDF settings.
    ///   - embedder: nil for a keyword-only ingest.
    ///   - record: what the index records for `embedder`'s vectors (from `embedder(_:)`).
    ///   - prune: also remove sources under the given folders whose files are gone.
    ///   - caller: who asks (the admin's only: a scoped token adds sources through `addSource`).
    ///   - progress: called as files are read and as snippets are embedded and written.
    public func ingest(
        _ paths: [String], options: IngestOptions, embedder: (any Embedder)? = nil, record: EmbedderRecord = .none,
        prune: Bool = false, as caller: Caller, progress: @escaping @Sendable (IngestProgress) -> Void = { _ in }
    ) async throws -> IngestReport {
        try caller.requireAdmin("ingest files from the server's disk")
        return await ingestor.ingest(paths, options: options, embedder: embedder, record: record, prune: prune, progress: progress)
    }

    /// Ingested files (memories are listed by `memories(_:)`); a scoped token needs the right `sources`.
    public func sources(as caller: Caller) async throws -> [StoredSource] {
        try caller.require(.sources, writing: false, "list sources")
        return try await store.snapshot { try $0.sources() }.filter { $0.kind != .memory }
    }

    /// Every source as the API, MCP and `kb sources` show it: by its public id (`file:…`, an
    /// upload's own), never the index's row number.
    public func sourceInfos(as caller: Caller) async throws -> [SourceInfo] { try await sources(as: caller).map(SourceInfo.init) }

    /// Removes sources by file path, or all sources under a folder path. Throws when a path
    /// matches nothing, naming it, and removes nothing in that case. The admin's only.
    @discardableResult
    public func remove(_ paths: [String], as caller: Caller) async throws -> [String] {
        try caller.requireAdmin("remove sources by path")
        return try await ingestor.remove(paths)
    }

    /// The OCR languages for an ingest into this index (`OCRSettings.languages(given:recorded:)`):
    /// `given` languages are recorded as the index's. The admin's only.
    public func ocrLanguages(given: [String]?, as caller: Caller) async throws -> [String] {
        try caller.requireAdmin("set the index's OCR languages")
        return try await ingestor.ocrLanguages(given: given)
    }

    /// Re-embeds every snippet (and memory) with another embedder into a new vector set, while
    /// searches keep using the current one; when the set is complete the index switches to it in
    /// one transaction. An interrupted run resumes where it stopped. The old vectors stay (vectors
    /// from several embedders may coexist) unless `dropOld`.
    ///
    /// The index's own embedder (`choice` nil, or named again) is embedded again in place when it
    /// would now embed differently: in another precision (`--precision`), or with each snippet's
    /// title where the index was made before kb embedded titles.
    ///
    /// ```swift
    /// let report = try await kb.reindex(to: .hashing, as: .admin)
    /// // or an endpoint: .openAI(model: "nomic-embed-text", url: "http://127.0.0.1:11434/v1")
    /// ```
    public func reindex(to choice: EmbedderChoice?, dropOld: Bool = false, as caller: Caller,
                        progress: @Sendable (IngestProgress) -> Void = { _ in }) async throws -> ReindexReport {
        try caller.requireAdmin("embed the index again")
        return try await ingestor.reindex(to: choice, dropOld: dropOld, progress: progress)
    }

    /// Waits until the local models made so far have finished setting up their layers on their
    /// own threads. A process that simply exits is waited for too (an exit handler does it, before
    /// oneDNN tears its state down); calling this first makes the wait part of the caller's own
    /// work, as kb's command line does.
    public static func finishBackgroundWork() async { await BERTEmbedder.finishBackgroundWork() }


    /// Tunes keyword search for `language` (recorded with the index); rebuilds the keyword index
    /// when it was tuned for another. False when nothing changed. The admin's only.
    @discardableResult
    public func setKeywordLanguage(_ language: KeywordLanguage, as caller: Caller) async throws -> Bool {
        try caller.requireAdmin("change the index's keyword language")
        return try await store.setKeywordLanguage(language)
    }
}

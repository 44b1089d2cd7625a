import Dispatch
import Foundation
import KBCore
import KBIngest
import KBStore

/// The one way a document reaches the index, however it arrives — `kb ingest`, an upload's job,
/// a re-read, an evaluation corpus:
///
/// 1. **read**: each file parsed by the loader its kind calls for (`FileLoaders`), on all cores
///    off the cooperative pool. The OCR pages the index cached for a file are found before it is
///    parsed, and each page recognised is kept in the index as it comes (`OCRPageKeeper`) —
///    loaders never wait on the index;
/// 2. **chunk**: the loaders' (`Chunker`), snippets tagged with their language;
/// 3. **embed in groups**: the stored vectors of text a source already had are reused, the rest
///    embedded through the embedding cache (`CachingEmbedder`);
/// 4. **replace**: a group of documents in one transaction (`write`), or an upload's document
///    with its job (the caller's `completeJob`).
struct DocumentWriter: Sendable {
    let store: any IndexStore
    let embedders: Embedders

    /// Snippets embedded in one call and written in one transaction by `write` (a group ends
    /// after the file that reaches this count).
    static let groupSnippets = 256

    // MARK: - read

    /// An OCR session for a run whose recognised pages go to the index's page cache as they come,
    /// and the keeper that writes them (finish it when the run ends).
    func ocrSession(_ settings: OCRSettings, events: @escaping @Sendable (OCREvent) -> Void) -> (OCRSession, OCRPageKeeper) {
        let keeper = OCRPageKeeper(store: store, key: settings.cacheKey)
        let session = OCRSession(settings: settings, events: events) { page, contentHash in keeper.keep(page, contentHash: contentHash) }
        return (session, keeper)
    }

    /// Parses files whose bytes are read: the OCR pages the index cached for the paged ones
    /// first (one snapshot), then every file on all cores, off the cooperative pool.
    func read(_ files: [(file: SourceFile, contents: DocumentReader.Contents)], options: IngestOptions,
              ocr: OCRSession) async -> [Result<SourceDocument, any Error>] {
        var problem: String?
        let paged = files.filter { $0.file.isPaged }.map(\.contents.hash)
        if !paged.isEmpty, options.ocr.mode != .never {
            let key = ocr.settings.cacheKey
            do {
                let cached = try await store.snapshot { snapshot in try paged.map { try snapshot.ocrPages(contentHash: $0, key: key) } }
                for (hash, pages) in zip(paged, cached) { ocr.rememberPages(pages, contentHash: hash) }
            } catch {
                problem = (error as? KBError)?.message ?? "\(error)"
            }
        }
        let outcomes = await OffPool.run { () -> [Result<SourceDocument, any Error>] in
            let results = ConcurrentSlots<Result<SourceDocument, any Error>>(count: files.count)
            DispatchQueue.concurrentPerform(iterations: files.count) { index in
                let (file, contents) = files[index]
                results.set(index, Result { try DocumentReader.load(file, contents, options: options, ocr: ocr) })
            }
            return results.values.map { $0 ?? .failure(KBError(.unreadableFile, "not read")) }
        }
        guard let problem else { return outcomes }
        return zip(files, outcomes).map { item, outcome in
            guard item.file.isPaged, case .success(var document) = outcome, document.source.ocr != nil else { return outcome }
            document.warnings.append("\(item.file.displayName): the index's OCR page cache could not be read (\(problem)); "
                + "its pages were recognised again.")
            return .success(document)
        }
    }

    // MARK: - embed

    /// Vectors for each document's snippets (nil entries for a keyword-only index), of what the
    /// embedder reads for each (`EmbeddingInput`): the stored vectors of text a source already had are reused, the rest embedded `callSize` texts at a
    /// time through the embedding cache, `progress` told how many of how many are done.
    /// `donors` names, for a document's path, a stored source whose vectors it may reuse too (the
    /// same file under its old name, after a move).
    func vectors(for documents: [SourceDocument], embedder: (any Embedder)?, record: EmbedderRecord, callSize: Int = .max,
                 donors: [String: String] = [:],
                 progress: @Sendable (_ done: Int, _ of: Int) -> Void = { _, _ in }) async -> [Result<[[Float]]?, any Error>] {
        guard embedder != nil else { return documents.map { _ in .success(nil) } }
        let reusable: [[String: [Float]]]
        do {
            let paths = documents.map(\.source.path)
            reusable = try await store.snapshot { snapshot in
                try paths.map { path in
                    let own = try snapshot.vectorsByText(path: path, embedder: record.name, context: record.inputContext)
                    guard let donor = donors[path] else { return own }
                    return own.merging(try snapshot.vectorsByText(path: donor, embedder: record.name, context: record.inputContext)) { mine, _ in mine }
                }
            }
        } catch {
            return documents.map { _ in .failure(error) }
        }
        // What the embedder reads: a snippet's text after its source's title (in an index that
        // records it), a conversation's turn after the one before.
        let inputs = documents.map { EmbeddingInput.texts(of: $0.snippets, source: $0.source, context: record.inputContext) }
        var missing: [String] = []
        var missingIndex: [String: Int] = [:]
        for (texts, stored) in zip(inputs, reusable) {
            for text in texts where stored[text] == nil && missingIndex[text] == nil {
                missingIndex[text] = missing.count
                missing.append(text)
            }
        }
        var fresh: [[Float]] = []
        fresh.reserveCapacity(missing.count)
        do {
            for start in stride(from: 0, to: missing.count, by: max(1, min(callSize, missing.count))) {
                let part = Array(missing[start..<min(start + callSize, missing.count)])
                fresh += try await embedders.passages(part, with: embedder, record: record) ?? []
                progress(fresh.count, missing.count)
            }
        } catch {
            return documents.map { _ in .failure(error) }
        }
        return inputs.enumerated().map { i, texts in
            .success(texts.map { reusable[i][$0] ?? fresh[missingIndex[$0]!] })
        }
    }

    // MARK: - replace

    /// Snippets embedded and written so far in a run, and how many are known to be coming.
    struct WriteProgress {
        var done = 0
        var total = 0
    }

    /// How many of `documents`, from the start, make whole groups of ``groupSnippets``.
    static func wholeGroups(_ documents: [(name: String, document: SourceDocument, isNew: Bool)]) -> Int {
        var total = 0, whole = 0
        for (index, item) in documents.enumerated() {
            total += item.document.snippets.count
            if total >= groupSnippets { whole = index + 1; total = 0 }
        }
        return whole
    }

    /// Embeds (in groups of about ``groupSnippets`` snippets) and stores documents, a group in one
    /// transaction, counting what happened into `report`. When a group's transaction fails, its
    /// files are written again one transaction each, so a failure leaves only that document's
    /// source as it was.
    func write(
        _ documents: [(name: String, document: SourceDocument, isNew: Bool)], embedder: (any Embedder)?, record: EmbedderRecord,
        donors: [String: String] = [:], into report: inout IngestReport, counted: inout WriteProgress, progress: @Sendable (IngestProgress) -> Void
    ) async {
        var start = 0
        while start < documents.count {
            var end = start
            var snippets = 0
            while end < documents.count && (snippets < Self.groupSnippets || end == start) {
                snippets += documents[end].document.snippets.count
                end += 1
            }
            let group = Array(documents[start..<end])
            progress(IngestProgress(phase: .embedding, done: counted.done, total: counted.total, current: group.first!.name))
            let vectors = await self.vectors(for: group.map(\.document), embedder: embedder, record: record, donors: donors)
            var embedded: [(item: (name: String, document: SourceDocument, isNew: Bool), vectors: [[Float]]?)] = []
            for (item, result) in zip(group, vectors) {
                switch result {
                case .success(let documentVectors): embedded.append((item, documentVectors))
                case .failure(let error): report.failed.append(.init(path: item.name, message: "\(error)"))
                }
            }
            let failures = await save(embedded.map { ($0.item.document, $0.vectors) }, embedder: record)
            for ((item, _), failure) in zip(embedded, failures) {
                if let failure {
                    report.failed.append(.init(path: item.name, message: "\(failure)"))
                    continue
                }
                if item.isNew { report.added += 1 } else { report.updated += 1 }
                report.snippets += item.document.snippets.count
                report.warnings += item.document.warnings
            }
            counted.done += snippets
            progress(IngestProgress(phase: .embedding, done: counted.done, total: counted.total, current: group.last!.name))
            start = end
        }
    }

    /// Stores documents with their vectors in one transaction; when that fails, each in its own.
    /// Returns each document's error, nil where it was stored.
    private func save(_ documents: [(document: SourceDocument, vectors: [[Float]]?)], embedder: EmbedderRecord) async -> [(any Error)?] {
        if documents.count > 1, (try? await store.replace(documents, embedder: embedder, ingestedAt: Date())) != nil {
            return documents.map { _ in nil }
        }
        var failures: [(any Error)?] = []
        for (document, vectors) in documents {
            do {
                try await store.replace(document, vectors: vectors, embedder: embedder)
                failures.append(nil)
            } catch {
                failures.append(error)
            }
        }
        return failures
    }
}

/// Keeps the pages OCR recognises in the index's page cache as they come, so that an interrupted
/// run does not recognise them again: recognising threads hand a page over without waiting, and
/// one task writes them, in order. A page that cannot be kept costs only time on a re-run; the
/// run's warnings say so.
final class OCRPageKeeper: Sendable {
    private let pages: AsyncStream<(page: OCRPage, contentHash: String)>.Continuation
    private let writer: Task<String?, Never>

    init(store: any IndexStore, key: String) {
        let (stream, continuation) = AsyncStream.makeStream(of: (page: OCRPage, contentHash: String).self)
        pages = continuation
        writer = Task {
            var problem: String?
            for await (page, hash) in stream {
                do {
                    try await store.cacheOCRPage(page, contentHash: hash, key: key)
                } catch {
                    problem = problem ?? ((error as? KBError)?.message ?? "\(error)")
                }
            }
            return problem
        }
    }

    /// Hands a recognised page over (never blocks).
    func keep(_ page: OCRPage, contentHash: String) { pages.yield((page, contentHash)) }

    /// Writes what is left; a warning if some page could not be kept.
    func finish() async -> String? {
        pages.finish()
        return await writer.value.map {
            "The index's OCR page cache could not keep recognised pages (\($0)); the text is indexed, but an interrupted run would recognise them again."
        }
    }
}

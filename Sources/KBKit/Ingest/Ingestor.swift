import Dispatch
import Foundation
import KBCore
import KBIngest
import KBRequests
import KBRetrieval
import KBStore

/// Files into the index: ingest (folders scanned, changed files read through the
/// `DocumentWriter`, gone files reported or pruned), removal, the index's OCR languages, and
/// reindexing with another embedder. Holds no state of its own.
struct Ingestor: Sendable {
    let store: any IndexStore
    let embedders: Embedders
    let retriever: Retriever
    let writer: DocumentWriter

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
    ///   - progress: called as files are read and as snippets are embedded and written.
    func ingest(
        _ paths: [String], options: IngestOptions, embedder: (any Embedder)? = nil, record: EmbedderRecord = .none,
        prune: Bool = false, progress: @escaping @Sendable (IngestProgress) -> Void = { _ in }
    ) async -> IngestReport {
        let started = Date()
        var report = IngestReport()
        // Under --ocr never, images in folders are left alone (as before OCR existed); named ones fail.
        let skipped: Set<SourceKind> = options.ocr.mode == .never ? [.image] : []
        let scan = await OffPool.run { FileScanner.scan(paths, skippingInFolders: skipped) }
        report.failed = scan.failures

        let known: [String: String], ocrRecords: [String: String], paged: Set<String>
        do {
            (known, ocrRecords, paged) = try await store.snapshot { snapshot in
                try snapshot.checkEmbedder(record)
                return (try snapshot.contentHashes(), try snapshot.ocrRecords(), try snapshot.pagedSources())
            }
        } catch {
            report.failed.append(.init(path: store.location, message: "\(error)"))
            return report
        }
        let pages = LockedValue((queued: 0, done: 0))
        let (ocr, keeper) = writer.ocrSession(options.ocr) { event in
            let (done, total, file) = pages.withLock { counts -> (Int, Int, String) in
                switch event {
                case .queued(let file, let count): counts.queued += count; return (counts.done, counts.queued, file)
                case .finished(let file): counts.done += 1; return (counts.done, counts.queued, file)
                }
            }
            progress(IngestProgress(phase: .recognising, done: done, total: total, current: file))
        }

        // Read, hash and parse a batch of files on all cores (off the cooperative pool) while the
        // changed files of the batches before are embedded and written: a pipeline one batch deep,
        // so at most two batches' documents are held at once.
        let batches = stride(from: 0, to: scan.files.count, by: Self.readBatchSize).map {
            Array(scan.files[$0..<min($0 + Self.readBatchSize, scan.files.count)])
        }
        func read(_ index: Int) -> Task<[LoadOutcome], Never>? {
            guard index < batches.count else {
                progress(IngestProgress(phase: .reading, done: scan.files.count, total: scan.files.count, current: ""))
                return nil
            }
            let batch = batches[index]
            progress(IngestProgress(phase: .reading, done: index * Self.readBatchSize, total: scan.files.count, current: batch[0].displayName))
            return Task { await load(batch, options: options, known: known, ocrRecords: ocrRecords, paged: paged, ocr: ocr) }
        }
        var counted = DocumentWriter.WriteProgress()
        var waiting: [(name: String, document: SourceDocument, isNew: Bool)] = []
        // A new file with the content of a stored one (moved or renamed, or copied) reuses its vectors.
        let byHash = Dictionary(known.map { ($0.value, $0.key) }, uniquingKeysWith: min)
        var donors: [String: String] = [:]
        var reading = read(0)
        var index = 0
        while let current = reading {
            let outcomes = await current.value
            reading = read(index + 1)
            for (file, outcome) in zip(batches[index], outcomes) {
                switch outcome {
                case .unchanged: report.unchanged += 1
                case .failed(let message): report.failed.append(.init(path: file.displayName, message: message))
                case .loaded(let document):
                    waiting.append((file.displayName, document, known[file.path] == nil))
                    if known[file.path] == nil, let donor = byHash[document.source.contentHash] { donors[file.path] = donor }
                    counted.total += document.snippets.count
                }
            }
            index += 1
            // Embed whole groups now; a last, smaller group waits for the next batch's files.
            let ready = reading == nil ? waiting.count : DocumentWriter.wholeGroups(waiting)
            await writer.write(Array(waiting[..<ready]), embedder: embedder, record: record, donors: donors, into: &report, counted: &counted,
                               progress: progress)
            waiting.removeFirst(ready)
        }
        report.ocrPages = pages.withLock { $0.done }
        report.ocrCachedPages = ocr.cachedPagesUsed
        if let problem = await keeper.finish() { report.warnings.append(problem) }

        // Sources the index holds whose files are gone: under scanned folders, or named directly.
        do {
            let (gone, accountedFor) = try await goneSources(scan, known: known)
            if prune {
                report.removed = try await store.removeSources(exactly: gone).count
                // A vanished argument whose sources were just pruned is not a failure.
                report.failed.removeAll { accountedFor.contains(SourcePaths.absolute($0.path)) }
            } else {
                report.missing = gone.sorted()
            }
            // Tags a replaced source no longer carries (removals sweep their own, in their transaction).
            if report.updated > 0 { try await store.deleteUnusedTags() }
        } catch {
            report.failed.append(.init(path: store.location, message: "\(error)"))
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Stored sources whose files are gone — under the scanned folders, or named directly and
    /// missing — and the missing arguments that account for some of them.
    private func goneSources(_ scan: FileScanner.Result, known: [String: String]) async throws -> (gone: [String], accountedFor: Set<String>) {
        let seen = Set(scan.files.map(\.path))
        let (folders, missingArguments) = (scan.folders, scan.missingArguments)
        let (underFolders, underMissing) = try await store.snapshot { snapshot in
            (try folders.map { try snapshot.sourcePaths(under: $0 + "/") }, try missingArguments.map { try snapshot.sourcePaths(under: $0 + "/") })
        }
        // Whether each file is still there is asked of the file system, off the cooperative pool.
        var gone = await OffPool.run {
            underFolders.flatMap { stored in stored.filter { !seen.contains($0) && !FileManager.default.fileExists(atPath: $0) } }
        }
        var accountedFor = Set<String>()
        for (missing, under) in zip(missingArguments, underMissing) {
            let stored = (known[missing] != nil ? [missing] : []) + under
            if !stored.isEmpty {
                gone += stored
                accountedFor.insert(missing)
            }
        }
        return (gone, accountedFor)
    }

    /// Files read in one batch (on all cores) while the batch before is embedded.
    static let readBatchSize = 64

    enum LoadOutcome: Sendable {
        case unchanged
        case loaded(SourceDocument)
        case failed(String)
    }

    /// Reads and hashes a batch of files on all cores, then parses those that changed (or that
    /// new OCR settings would read otherwise) through the writer.
    func load(_ batch: [SourceFile], options: IngestOptions, known: [String: String], ocrRecords: [String: String],
              paged: Set<String>, ocr: OCRSession) async -> [LoadOutcome] {
        let read = await OffPool.run { () -> [Result<DocumentReader.Contents, any Error>] in
            let results = ConcurrentSlots<Result<DocumentReader.Contents, any Error>>(count: batch.count)
            DispatchQueue.concurrentPerform(iterations: batch.count) { index in results.set(index, Result { try DocumentReader.read(batch[index]) }) }
            return results.values.map { $0 ?? .failure(KBError(.unreadableFile, "not read")) }
        }
        var outcomes = [LoadOutcome](repeating: .unchanged, count: batch.count)
        var changed: [(index: Int, file: SourceFile, contents: DocumentReader.Contents)] = []
        for (index, (file, result)) in zip(batch, read).enumerated() {
            switch result {
            case .failure(let error): outcomes[index] = .failed((error as? KBError)?.message ?? "\(error)")
            case .success(let contents):
                // A book read before kb kept its page starts is read once more (for exact pages).
                if known[file.path] == contents.hash
                    && !(file.isPaged && (options.ocr.needsRereading(recorded: ocrRecords[file.path]) || !paged.contains(file.path))) {
                    outcomes[index] = .unchanged
                } else {
                    changed.append((index, file, contents))
                }
            }
        }
        let parsed = await writer.read(changed.map { ($0.file, $0.contents) }, options: options, ocr: ocr)
        for (item, result) in zip(changed, parsed) {
            switch result {
            case .success(let document): outcomes[item.index] = .loaded(document)
            case .failure(let error): outcomes[item.index] = .failed((error as? KBError)?.message ?? "\(error)")
            }
        }
        return outcomes
    }

    /// Removes sources by file path, or all sources under a folder path. Throws when a path
    /// matches nothing, naming it, and removes nothing in that case.
    @discardableResult
    func remove(_ paths: [String]) async throws -> [String] {
        let absolute = paths.map(SourcePaths.absolute)
        let stored = try await store.snapshot { snapshot in try absolute.map { try snapshot.sourcePaths(under: $0) } }
        for (argument, (path, under)) in zip(paths, zip(absolute, stored)) where !under.contains(where: { $0 == path || $0.hasPrefix(path + "/") }) {
            throw KBError(.notFound, "No source in the index matches \(argument). `kb sources` lists what is indexed.")
        }
        let removed = try await store.removeSources(matching: absolute).paths
        try await store.scrub()
        return removed
    }

    /// The OCR languages for an ingest into this index (`OCRSettings.languages(given:recorded:)`):
    /// `given` languages are recorded as the index's.
    func ocrLanguages(given: [String]?) async throws -> [String] {
        let recorded = try await store.snapshot { try $0.meta(Self.ocrLanguagesKey) }
        if let given {
            let list = given.joined(separator: "+")
            if recorded != list { try await store.setMeta(Self.ocrLanguagesKey, list) }
        }
        return OCRSettings.languages(given: given, recorded: recorded)
    }

    static let ocrLanguagesKey = "ocr_languages"

    /// An embedder as `kb reindex` names it: `multilingual-e5-small (int8, with titles)`.
    static func describe(_ record: EmbedderRecord) -> String {
        let parts = [record.passagePrecision?.rawValue, record.inputContext == .title ? "with titles" : nil].compactMap { $0 }
        return parts.isEmpty ? record.name : "\(record.name) (\(parts.joined(separator: ", ")))"
    }


    /// Re-embeds every snippet (and memory) with another embedder into a new vector set, while
    /// searches keep using the current one; when the set is complete the index switches to it in
    /// one transaction. An interrupted run resumes where it stopped. The old vectors stay (vectors
    /// from several embedders may coexist) unless `dropOld`.
    ///
    /// The same embedder in another precision (`--precision`) or with the context a new index
    /// embeds (`EmbeddingInput.newIndexContext`) is embedded again in place: the new vectors are
    /// kept apart (`EmbedderRecord.staging`) until complete, then replace the old ones.
    func reindex(to named: EmbedderChoice?, dropOld: Bool = false,
                        progress: @Sendable (IngestProgress) -> Void = { _ in }) async throws -> ReindexReport {
        let started = Date()
        let current = try await store.snapshot { try $0.embedderRecord() }
        guard let choice = try named ?? current.flatMap({ $0.hasVectors ? try EmbedderChoice($0.spec) : nil }) else {
            throw KBError(.invalidArgument, "The index has no vectors to embed again. Name the embedder to switch to: --embedder local|local:NAME|hashing|openai:MODEL.")
        }
        guard let embedder = try await choice.make(environment: embedders.environment) else {
            throw KBError(.invalidArgument, "kb reindex needs an embedder that makes vectors (local, hashing or openai:MODEL), not none.")
        }
        let record = EmbedderChoice.record(for: embedder, choice: choice)
        var report = ReindexReport(from: current.map(Self.describe), to: Self.describe(record))
        let inPlace = current.map { $0.name == record.name && $0.dimension == record.dimension } ?? false
        if let current, inPlace, current.embedsLike(record), current.spec == record.spec {
            throw KBError(.invalidArgument, "The index already uses \(Self.describe(record)). Name another embedder, "
                          + "or another precision (--precision int8|bf16|fp32), to embed it again.")
        }
        let target = inPlace && !(current?.embedsLike(record) ?? true) ? record.staging : record
        let total = try await store.snapshot { try $0.status() }.snippets
        for _ in 0..<4 {
            while true {
                let batch = try await store.snapshot { try $0.snippetsWithoutVectors(embedder: target, limit: 256) }
                if batch.isEmpty { break }
                progress(IngestProgress(phase: .embedding, done: total - batch.count, total: total, current: record.name))
                let vectors = try await CachingEmbedder(embedder, record: record, store: store).embed(batch.map { $0.embeddingInput(record.inputContext) })
                try await store.addVectors(embedder: target, Array(zip(batch.map(\.id), vectors).map { (id: $0, vector: $1) }))
                report.embedded += batch.count
            }
            // Another process may have added snippets meanwhile: then go round again.
            if try await store.switchEmbedder(to: record, staged: target != record, dropOthers: dropOld) {
                report.switched = true
                break
            }
        }
        guard report.switched else {
            throw KBError(.database, "The index kept changing while it was reindexed; run `kb reindex` again (it resumes).")
        }
        // The next search reads the new record (the store's vectors in memory follow the switch).
        retriever.forgetEmbedderRecord()
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}

import Dispatch
import KBEmbed
import Foundation
public import KBCore
public import KBIngest
public import KBStore

extension KnowledgeBase {
    /// The embedder this index uses: the one it records, else `choice`, else the local model.
    /// Fails, before any work, when `choice` differs from what the index holds.
    public func embedder(_ choice: EmbedderChoice?) async throws -> (embedder: (any Embedder)?, record: EmbedderRecord) {
        let recorded = try await store.snapshot { try $0.embedderRecord() }
        let resolved = try choice ?? recorded.map { try embedders.recordedChoice($0) } ?? .local
        // The index knows the dimension of the embedder it records: no need to ask a remote one.
        let known = recorded.flatMap { record in
            (try? embedders.recordedChoice(record)) == resolved && record.hasVectors ? record.dimension : nil
        }
        let embedder = try await resolved.make(environment: environment, dimension: known)
        let record = EmbedderChoice.record(for: embedder, choice: resolved)
        try await store.snapshot { try $0.checkEmbedder(record) }
        return (embedder, record)
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
    ///   - progress: called as files are read and as snippets are embedded and written.
    public func ingest(
        _ paths: [String], options: IngestOptions, embedder: (any Embedder)? = nil, record: EmbedderRecord = .none,
        prune: Bool = false, progress: @escaping @Sendable (IngestProgress) -> Void = { _ in }
    ) async -> IngestReport {
        let started = Date()
        var report = IngestReport()
        // Under --ocr never, images in folders are left alone (as before OCR existed); named ones fail.
        let skipped: Set<SourceKind> = options.ocr.mode == .never ? [.image] : []
        let scan = await OffPool.run { FileScanner.scan(paths, skippingInFolders: skipped) }
        report.failed = scan.failures

        let known: [String: String], ocrRecords: [String: String]
        do {
            (known, ocrRecords) = try await store.snapshot { snapshot in
                try snapshot.checkEmbedder(record)
                return (try snapshot.contentHashes(), try snapshot.ocrRecords())
            }
        } catch {
            report.failed.append(.init(path: store.location, message: "\(error)"))
            return report
        }
        let pages = LockedValue((queued: 0, done: 0))
        let ocr = OCRSession(settings: options.ocr, cache: StoreOCRCache(store: store)) { event in
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
            return Task { await OffPool.run { Self.load(batch, options: options, known: known, ocrRecords: ocrRecords, ocr: ocr) } }
        }
        var counted = WriteProgress()
        var waiting: [(name: String, document: SourceDocument, isNew: Bool)] = []
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
                    counted.total += document.snippets.count
                }
            }
            index += 1
            // Embed whole groups now; a last, smaller group waits for the next batch's files.
            let ready = reading == nil ? waiting.count : Self.wholeGroups(waiting)
            await write(Array(waiting[..<ready]), embedder: embedder, record: record, into: &report, counted: &counted, progress: progress)
            waiting.removeFirst(ready)
        }
        report.ocrPages = pages.withLock { $0.done }
        report.ocrCachedPages = ocr.cachedPagesUsed

        // Sources the index holds whose files are gone: under scanned folders, or named directly.
        do {
            let (gone, accountedFor) = try await goneSources(scan, known: known)
            if prune {
                report.removed = try await store.removeSources(exactly: gone).count
                // A vanished argument whose sources were just pruned is not a failure.
                report.failed.removeAll { accountedFor.contains(FileScanner.absolute($0.path)) }
            } else {
                report.missing = gone.sorted()
            }
            try await store.deleteUnusedTags()
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
    /// Snippets embedded in one call and written in one transaction (a group ends after the file
    /// that reaches this count).
    static let groupSnippets = 256

    /// How many of `documents`, from the start, make whole groups of ``groupSnippets``.
    static func wholeGroups(_ documents: [(name: String, document: SourceDocument, isNew: Bool)]) -> Int {
        var total = 0, whole = 0
        for (index, item) in documents.enumerated() {
            total += item.document.snippets.count
            if total >= groupSnippets { whole = index + 1; total = 0 }
        }
        return whole
    }

    /// Snippets embedded and written so far in a run, and how many are known to be coming.
    struct WriteProgress {
        var done = 0
        var total = 0
    }

    /// Embeds (in groups of about ``groupSnippets`` snippets) and stores documents, a group in one
    /// transaction, counting what happened into `report`. When a group's transaction fails, its
    /// files are written again one transaction each, so a failure leaves only that document's
    /// source as it was.
    func write(
        _ documents: [(name: String, document: SourceDocument, isNew: Bool)], embedder: (any Embedder)?, record: EmbedderRecord,
        into report: inout IngestReport, counted: inout WriteProgress, progress: @Sendable (IngestProgress) -> Void
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
            let vectors = await embedGroup(group.map(\.document), embedder: embedder, record: record)
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

    /// Vectors for each document of a group (nil entries for a keyword-only index), reusing
    /// stored vectors of unchanged snippet text and embedding the rest in one call.
    private func embedGroup(_ documents: [SourceDocument], embedder: (any Embedder)?, record: EmbedderRecord) async -> [Result<[[Float]]?, any Error>] {
        guard let embedder else { return documents.map { _ in .success(nil) } }
        let reusable: [[String: [Float]]]
        do {
            let paths = documents.map(\.source.path)
            reusable = try await store.snapshot { snapshot in try paths.map { try snapshot.vectorsByText(path: $0, embedder: record.name) } }
        } catch {
            return documents.map { _ in .failure(error) }
        }
        var missing: [String] = []
        var missingIndex: [String: Int] = [:]
        for (document, stored) in zip(documents, reusable) {
            for snippet in document.snippets where stored[snippet.text] == nil && missingIndex[snippet.text] == nil {
                missingIndex[snippet.text] = missing.count
                missing.append(snippet.text)
            }
        }
        let fresh: [[Float]]
        do {
            fresh = try await embedder.isRemote ? embedRemotely(missing, embedder: embedder, record: record)
                                                : embedder.embed(missing, role: .passage)
            guard fresh.count == missing.count else {
                throw KBError(.embedding, "\(embedder.id) returned \(fresh.count) vectors for \(missing.count) texts.")
            }
        } catch {
            return documents.map { _ in .failure(error) }
        }
        return documents.enumerated().map { i, document in
            .success(document.snippets.map { reusable[i][$0.text] ?? fresh[missingIndex[$0.text]!] })
        }
    }

    enum LoadOutcome: Sendable {
        case unchanged
        case loaded(SourceDocument)
        case failed(String)
    }

    /// Reads, hashes and parses a batch of files on all cores.
    static func load(_ batch: [SourceFile], options: IngestOptions, known: [String: String], ocrRecords: [String: String],
                     ocr: OCRSession) -> [LoadOutcome] {
        let results = ConcurrentSlots<LoadOutcome>(count: batch.count)
        DispatchQueue.concurrentPerform(iterations: batch.count) { index in
            let file = batch[index]
            let outcome: LoadOutcome
            do {
                let contents = try DocumentReader.read(file)
                if known[file.path] == contents.hash && !(file.isPaged && options.ocr.needsRereading(recorded: ocrRecords[file.path])) {
                    outcome = .unchanged
                } else {
                    outcome = .loaded(try DocumentReader.load(file, contents, options: options, ocr: ocr))
                }
            } catch {
                outcome = .failed((error as? KBError)?.message ?? "\(error)")
            }
            results.set(index, outcome)
        }
        return results.values.map { $0 ?? .failed("not read") }
    }
}

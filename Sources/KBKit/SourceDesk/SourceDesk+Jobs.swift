import Foundation
import KBCore
import KBIngest
import KBStore

extension SourceDesk {
    /// A job a process claimed is taken over by another when it has not said it is alive for
    /// this long (the process died); a job says so every `heartbeat` seconds while it runs.
    static let staleJobAfter: TimeInterval = 20
    static let jobHeartbeat: TimeInterval = 5

    /// Starts the background runner (see `JobRunner`).
    func startJobRunner(poll: TimeInterval = 2) -> JobRunner {
        JobRunner(task: Task.detached { [self] in
            while !Task.isCancelled {
                if await runQueuedJobs() == 0 { await jobSignal.wait(seconds: poll) }
            }
        })
    }

    /// Runs queued jobs (and jobs whose process died) one after another until none is left;
    /// returns how many ran. Their failures are recorded in the jobs.
    @discardableResult
    func runQueuedJobs() async -> Int {
        var ran = 0
        while !Task.isCancelled {
            let claimed: StoredJob?
            do {
                claimed = try await store.claimJob(staleAfter: Self.staleJobAfter)
            } catch {
                return ran   // the index cannot be used right now; the next round tries again
            }
            guard let job = claimed else { return ran }
            _ = try? await runClaimedJob(job)   // a failure is recorded in the job
            ran += 1
        }
        return ran
    }

    /// Tells the runner that a job was queued.
    func jobsQueued() { jobSignal.fire() }

    /// Marks a queued job as running in this process.
    func claim(_ queued: StoredJob) async throws -> StoredJob {
        try await store.startJob(id: queued.job.id)
    }

    /// Reads a job's source from its stored bytes and stores it, or records why it could not
    /// (and throws that error). Bytes and settings equal to the stored source's change nothing,
    /// unless the job is `rereading` them on purpose (with other OCR settings, say).
    func runClaimedJob(_ stored: StoredJob, embedder choice: EmbedderChoice? = nil, ocr: OCRSettings? = nil,
                       rereading: Bool = false) async throws -> Job {
        let id = stored.job.id
        let reporter = JobProgressReporter(store: store, id: id, heartbeat: Self.jobHeartbeat)
        defer { reporter.stop() }
        do {
            if !rereading, try await isUnchanged(stored) {
                try await store.endJob(id: id, .unchanged)
                return try await job(id)
            }
            var document = try await read(stored, ocr: ocr, reporter: reporter)
            let (embedder, record) = try await embedders.forWrites(choice)
            let pages = document.snippets.compactMap { $0.pages?.end }.max() ?? 0
            reporter.update { progress in
                progress.snippetsTotal = document.snippets.count
                // Read: every page, those OCR counted and those read from the text layer at once.
                let read = max(pages, progress.pagesTotal)
                (progress.pagesDone, progress.pagesTotal) = (read, read)
            }
            // A few at a time, so that queries embedded meanwhile get their turn.
            let total = document.snippets.count
            let vectors = try await writer.vectors(for: [document], embedder: embedder, record: record, callSize: Self.jobEmbedCall) { done, of in
                reporter.update { $0.snippetsDone = of == 0 ? total : total - (of - done) * total / of }
            }[0].get()
            reporter.update { $0.snippetsDone = total }
            document.source.owner = stored.owner
            _ = try await store.completeJob(id: id, document: document, vectors: vectors, embedder: record,
                                            progress: reporter.progress, warnings: document.warnings)
            return try await job(id)
        } catch {
            let message = (error as? KBError)?.message ?? "\(error)"
            do {
                try await store.endJob(id: id, .failed(message))
            } catch {
                // The job stays running; once stale, a runner reads it again.
            }
            throw error
        }
    }

    /// Whether a job's bytes, title, tags and user are those the source already has.
    func isUnchanged(_ stored: StoredJob) async throws -> Bool {
        let (existing, original) = try await store.snapshot { snapshot -> (Source?, StoredJob?) in
            (try snapshot.source(path: stored.sourcePath),
             try snapshot.originalJobID(sourcePath: stored.sourcePath).flatMap { try snapshot.storedJob(id: $0) })
        }
        guard let existing, let original, let hash = stored.contentHash else { return false }
        return existing.contentHash == hash && original.title == stored.title && original.tags == stored.tags
            && original.owner == stored.owner && original.job.contentType == stored.job.contentType
    }

    /// Parses a job's stored bytes with the loader its media type calls for (off the pool; by
    /// default OCR on half the cores, so that searches keep theirs), its title and tags applied.
    func read(_ stored: StoredJob, ocr given: OCRSettings?, reporter: JobProgressReporter) async throws -> SourceDocument {
        let type = try MediaType(stored.job.contentType)
        let chunks = try await store.snapshot { try $0.jobChunks(id: stored.job.id) }
        let data = chunks.reduce(into: Data(capacity: stored.job.size)) { $0.append($1) }
        var options = IngestOptions()
        options.tags = stored.tags
        if let given {
            options.ocr = given
        } else {
            options.ocr = OCRSettings(mode: .auto, languages: try await ingestor.ocrLanguages(given: nil),
                                      workers: max(1, ProcessInfo.processInfo.activeProcessorCount / 2))
        }
        let file = SourceFile(path: stored.sourcePath, displayName: stored.title ?? stored.job.source, kind: type.kind,
                              markdown: type.kind == .note ? type.isMarkdown : nil, recordFormat: type.recordFormat)
        let contents = DocumentReader.Contents(data: data, modifiedAt: stored.job.createdAt,
                                               hash: stored.contentHash ?? DocumentReader.contentHash(data))
        let (ocr, keeper) = writer.ocrSession(options.ocr) { event in
            switch event {
            case .queued(_, let pages): reporter.update { $0.pagesTotal += pages }
            case .finished: reporter.update { $0.pagesDone += 1 }
            }
        }
        let read = await writer.read([(file, contents)], options: options, ocr: ocr)[0]
        let problem = await keeper.finish()
        var document = try read.get()
        if let problem { document.warnings.append(problem) }
        // A title the loader took from the file name is the upload's `upload:ID`: the id reads better.
        let fallback = URL(fileURLWithPath: stored.sourcePath).deletingPathExtension().lastPathComponent
        document.source.title = stored.title ?? (document.source.title == fallback ? stored.job.source : document.source.title)
        return document
    }

    /// Texts a job embeds per call to the embedder.
    static let jobEmbedCall = 16
}

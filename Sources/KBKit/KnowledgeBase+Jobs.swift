import Dispatch
public import Foundation
import KBCore
import KBEmbed
import KBIngest
import KBStore

/// Runs the jobs of sources added over the API, one at a time, in the background of a service
/// (`kb serve`): woken when this process queues one, and every `poll` seconds for jobs other
/// processes queued (replicas of one PostgreSQL index). Stop it before the knowledge base goes.
///
/// ```swift
/// let runner = kb.startJobRunner()
/// // … serve requests; uploads are read as they come …
/// await runner.stop()
/// ```
public final class JobRunner: Sendable {
    let task: Task<Void, Never>

    init(task: Task<Void, Never>) { self.task = task }

    /// Stops taking jobs and waits for the one under way (its job, if interrupted, runs again later).
    public func stop() async {
        task.cancel()
        await task.value
    }
}

extension KnowledgeBase {
    /// A job a process claimed is taken over by another when it has not said it is alive for
    /// this long (the process died); a job says so every `heartbeat` seconds while it runs.
    static let staleJobAfter: TimeInterval = 20
    static let jobHeartbeat: TimeInterval = 5

    /// Starts the background runner (see `JobRunner`).
    public func startJobRunner(poll: TimeInterval = 2) -> JobRunner {
        JobRunner(task: Task.detached { [self] in
            while !Task.isCancelled {
                if await runQueuedJobs() == 0 { await jobSignal.wait(seconds: poll) }
            }
        })
    }

    /// Runs queued jobs (and jobs whose process died) one after another until none is left;
    /// returns how many ran. Their failures are recorded in the jobs.
    @discardableResult
    public func runQueuedJobs() async -> Int {
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
            let (embedder, record) = try await memoryEmbedder(choice)
            let pages = document.snippets.compactMap { $0.pages?.end }.max() ?? 0
            reporter.update { progress in
                progress.snippetsTotal = document.snippets.count
                // Read: every page, those OCR counted and those read from the text layer at once.
                let read = max(pages, progress.pagesTotal)
                (progress.pagesDone, progress.pagesTotal) = (read, read)
            }
            let vectors = try await embedForJob(document.snippets.map(\.text), embedder: embedder, record: record, reporter: reporter)
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
            options.ocr = OCRSettings(mode: .auto, languages: try await ocrLanguages(given: nil),
                                      workers: max(1, ProcessInfo.processInfo.activeProcessorCount / 2))
        }
        let file = SourceFile(path: stored.sourcePath, displayName: stored.title ?? stored.job.source, kind: type.kind,
                              markdown: type.kind == .note ? type.isMarkdown : nil, recordFormat: type.recordFormat)
        let contents = DocumentReader.Contents(data: data, modifiedAt: stored.job.createdAt,
                                               hash: stored.contentHash ?? DocumentReader.contentHash(data))
        let ocr = OCRSession(settings: options.ocr, cache: StoreOCRCache(store: store)) { event in
            switch event {
            case .queued(_, let pages): reporter.update { $0.pagesTotal += pages }
            case .finished: reporter.update { $0.pagesDone += 1 }
            }
        }
        let settings = options
        var document = try await OffPool.run { try DocumentReader.load(file, contents, options: settings, ocr: ocr) }
        // A title the loader took from the file name is the upload's `upload:ID`: the id reads better.
        let fallback = URL(fileURLWithPath: stored.sourcePath).deletingPathExtension().lastPathComponent
        document.source.title = stored.title ?? (document.source.title == fallback ? stored.job.source : document.source.title)
        return document
    }

    /// Vectors for a job's snippets (nil for a keyword-only index), a few at a time so that
    /// queries embedded meanwhile get their turn, with progress.
    func embedForJob(_ texts: [String], embedder: (any Embedder)?, record: EmbedderRecord,
                     reporter: JobProgressReporter) async throws -> [[Float]]? {
        guard let embedder else { return nil }
        var vectors: [[Float]] = []
        vectors.reserveCapacity(texts.count)
        for start in stride(from: 0, to: texts.count, by: 16) {
            let part = Array(texts[start..<min(start + 16, texts.count)])
            let fresh = try await embedder.isRemote ? embedRemotely(part, embedder: embedder, record: record)
                                                    : embedder.embed(part, role: .passage)
            guard fresh.count == part.count else {
                throw KBError(.embedding, "\(embedder.id) returned \(fresh.count) vectors for \(part.count) texts.")
            }
            vectors += fresh
            reporter.update { $0.snippetsDone = vectors.count }
        }
        return vectors
    }
}

/// A running job's progress, recorded in the index at most once a second (and every
/// `heartbeat` seconds, so that other processes know the job is alive).
///
/// @unchecked Sendable: `progress`, `lastWrite` and `stopped` are guarded by `lock`.
final class JobProgressReporter: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Job.Progress()
    private var lastWrite = Date.distantPast
    private var stopped = false
    private let store: any IndexStore
    private let id: String
    private var ticker: Task<Void, Never>?

    init(store: any IndexStore, id: String, heartbeat: TimeInterval) {
        self.store = store
        self.id = id
        ticker = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(heartbeat * 1e9))
                await self?.write(force: true)
            }
        }
    }

    var progress: Job.Progress { lock.withLock { current } }

    func update(_ change: (inout Job.Progress) -> Void) {
        lock.withLock { change(&current) }
        Task { await write(force: false) }
    }

    private func write(force: Bool) async {
        let due: Job.Progress? = lock.withLock {
            guard !stopped, force || Date().timeIntervalSince(lastWrite) >= 1 else { return nil }
            lastWrite = Date()
            return current
        }
        guard let due else { return }
        do {
            try await store.recordProgress(id: id, due)
        } catch {
            // Progress is advisory: the next write, or the job's end, records it.
        }
    }

    func stop() {
        lock.withLock { stopped = true }
        ticker?.cancel()
    }
}

/// Wakes the job runner when this process queues a job; a wake-up with nobody waiting is kept
/// for the next wait.
///
/// @unchecked Sendable: `pending` and `waiter` are guarded by `lock`.
final class JobSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: (id: UUID, continuation: CheckedContinuation<Void, Never>)?

    func fire() {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiter else { pending = true; return nil }
            self.waiter = nil
            return waiter.continuation
        }
        waiting?.resume()
    }

    /// Returns when fired, or after `seconds`, or when the task is cancelled.
    func wait(seconds: TimeInterval) async {
        let id = UUID.random()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow: Bool = lock.withLock {
                    if pending || Task.isCancelled {
                        pending = false
                        return true
                    }
                    waiter = (id, continuation)
                    return false
                }
                if resumeNow { continuation.resume(); return }
                Task.detached { [weak self] in
                    try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                    self?.resume(id)
                }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UUID) {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiter, waiter.id == id else { return nil }
            self.waiter = nil
            return waiter.continuation
        }
        waiting?.resume()
    }
}

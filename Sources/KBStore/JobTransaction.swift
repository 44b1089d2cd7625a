public import Foundation
public import KBCore

/// The rules of upload jobs, over `StoreTransaction`'s steps: the bytes are stored before a job
/// is acknowledged, bots are attached when it is, a job that a dead process was running is run
/// again, and a finished job leaves exactly one original per uploaded source.
extension StoreTransaction {
    /// Records a new job that is receiving its bytes. Every bot it names must exist.
    public func beginJob(_ job: StoredJob) throws {
        for name in job.bots where try findBot(named: name) == nil {
            throw KBError(.notFound, "No bot is named \(name). `GET /v1/bots` (or `kb bot list`) shows the bots; create it first.")
        }
        if try storedJob(id: job.job.id) != nil { throw KBError(.conflict, "A job with the id \(job.job.id) exists already.") }
        try insertJob(job)
    }

    /// Keeps one piece of a receiving job's bytes.
    public func appendJobChunk(id: String, seq: Int, data: Data, now: Date) throws {
        guard var job = try storedJob(id: id), job.job.state == .receiving else {
            throw KBError(.conflict, "The upload \(id) is not receiving bytes (it was finished or discarded).")
        }
        try insertJobChunk(id: id, seq: seq, data: data)
        job.job.size += data.count
        try updateJob(job, now: now)
    }

    /// Acknowledges a job whose bytes are all stored: it is queued, and the bots it names see its
    /// source from now on (an `upload:ID` selector each). A bot deleted meanwhile is a `notFound`
    /// error, and then nothing changes.
    public func queueJob(id: String, contentHash: String, now: Date) throws -> StoredJob {
        guard var job = try storedJob(id: id), job.job.state == .receiving else {
            throw KBError(.conflict, "The upload \(id) is not receiving bytes (it was finished or discarded).")
        }
        for name in job.bots {
            _ = try updateBot(named: name) { bot in
                if !bot.sources.contains(.upload(job.job.source)) { bot.sources.append(.upload(job.job.source)) }
            }
        }
        job.contentHash = contentHash
        job.job.state = .queued
        job.job.updatedAt = now
        try updateJob(job, now: now)
        return job
    }

    /// The next job to run, now marked running: first, jobs that died with their process are put
    /// back (a running job not marked alive for `staleAfter` is queued again; bytes still arriving
    /// after that long are discarded); then the oldest queued job is taken.
    public func claimJob(now: Date, staleAfter: TimeInterval) throws -> StoredJob? {
        let cutoff = now.addingTimeInterval(-staleAfter)
        for id in try staleJobIDs(in: .running, before: cutoff) {
            guard var job = try storedJob(id: id) else { continue }
            job.job.state = .queued
            try updateJob(job, now: now)
        }
        for id in try staleJobIDs(in: .receiving, before: cutoff) { try deleteJob(id: id) }
        guard var job = try oldestJob(in: .queued) else { return nil }
        job.job.state = .running
        job.job.updatedAt = now
        try updateJob(job, now: now)
        return job
    }

    /// Marks one queued job as running (the process that queued it reads it at once).
    public func startJob(id: String, now: Date) throws -> StoredJob {
        guard var job = try storedJob(id: id), job.job.state == .queued else {
            throw KBError(.conflict, "The job \(id) is not queued (another process took it, or it was cancelled).")
        }
        job.job.state = .running
        job.job.updatedAt = now
        try updateJob(job, now: now)
        return job
    }

    /// Records a running job's progress (and that it is alive).
    public func recordProgress(id: String, _ progress: Job.Progress, now: Date) throws {
        guard var job = try storedJob(id: id), job.job.state == .running else { return }
        job.job.progress = progress
        try updateJob(job, now: now)
    }

    /// Stores what a running job read, in the job's transaction: the source (replacing the
    /// version before), its snippets and vectors; the job's bytes become the source's original and
    /// older originals go; the job is done. A job cancelled meanwhile (its source deleted) is a
    /// `conflict` error, and then nothing is stored.
    public func completeJob(id: String, document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord,
                            progress: Job.Progress, warnings: [String], now: Date) throws -> WriteEffect {
        guard var job = try storedJob(id: id), job.job.state == .running else {
            throw KBError(.conflict, "The job \(id) was cancelled while it ran (its source was deleted).")
        }
        let effect = try replace(document, vectors: vectors, embedder: embedder, ingestedAt: now)
        try setOriginal(sourcePath: job.sourcePath, jobID: id)
        for other in try jobIDs(ofSource: job.job.source) where other != id { try deleteJobChunks(id: other) }
        job.job.state = .done
        job.job.progress = progress
        job.job.warnings = warnings
        job.job.updatedAt = now
        try updateJob(job, now: now)
        return effect
    }

    /// Ends a job that stores nothing new: its bytes go (the source keeps the original it had).
    public func endJob(id: String, _ ending: JobEnding, now: Date) throws {
        guard var job = try storedJob(id: id) else { return }
        switch ending {
        case .unchanged: job.job.state = .done
        case .failed(let message):
            job.job.state = .failed
            job.job.error = message
        }
        job.job.updatedAt = now
        try updateJob(job, now: now)
        try deleteJobChunks(id: id)
    }

    /// Starts reading an uploaded source again from its original: a new running job `jobID` with
    /// the original's bytes, title, tags and user. Its bots already see the source.
    public func beginReread(sourcePath: String, jobID: String, now: Date) throws -> StoredJob {
        guard let originalID = try originalJobID(sourcePath: sourcePath), let original = try storedJob(id: originalID) else {
            throw KBError(.notFound, "The source \(sourcePath) has no stored original to read again (only sources added over the API have one).")
        }
        var job = original
        job.job = Job(id: jobID, source: original.job.source, state: .running, contentType: original.job.contentType,
                      size: original.job.size, createdAt: now, updatedAt: now)
        job.bots = []
        try insertJob(job)
        try copyJobChunks(from: originalID, to: jobID)
        return job
    }

    /// Stores an uploaded source's original as a finished job (`kb export`).
    public func importOriginal(_ job: StoredJob, chunks: [Data], now: Date) throws {
        if try storedJob(id: job.job.id) != nil { try deleteJob(id: job.job.id) }
        try insertJob(job)
        for (seq, chunk) in chunks.enumerated() { try insertJobChunk(id: job.job.id, seq: seq, data: chunk) }
        try setOriginal(sourcePath: job.sourcePath, jobID: job.job.id)
    }
}

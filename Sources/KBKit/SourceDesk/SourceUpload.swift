import Crypto
public import Foundation
public import KBCore
import KBIngest
import KBRequests
import KBStore

/// An upload on its way in: its bytes are stored with the index as they arrive (in pieces of a
/// MiB), checked against the media type they were sent as and the size limit; `finish`
/// acknowledges them (the job is queued and its bots see the source from then on), `discard`
/// drops them. Nothing of an upload that was not finished is ever read.
public actor SourceUpload {
    let desk: SourceDesk
    let type: MediaType
    /// The job, as it was begun.
    public let job: Job
    private var pending = Data()
    private var head = Data()
    private var checked = false
    private var received = 0
    private var sequence = 0
    private var hasher = SHA256()
    private var ended = false

    /// Bytes kept per stored piece.
    static let chunkSize = 1 << 20
    /// Bytes the media type is checked against.
    static let headSize = 8192

    init(desk: SourceDesk, type: MediaType, fields: UploadFields) async throws {
        self.desk = desk
        self.type = type
        let now = Date()
        job = Job(id: UUID.random().uuidString.lowercased(), source: fields.id, state: .receiving, contentType: type.rawValue, size: 0,
                  createdAt: now, updatedAt: now)
        try await desk.store.beginJob(StoredJob(job: job, title: fields.title, tags: fields.tags, owner: fields.owner, bots: fields.bots))
    }

    /// Takes the next bytes of the body. Bytes over the size limit, or not of the upload's type,
    /// end the upload (its bytes are dropped) with `tooLarge` or `unsupportedMediaType`.
    public func append(_ bytes: Data) async throws {
        guard !ended else { throw KBError(.conflict, "The upload \(job.id) has ended.") }
        received += bytes.count
        guard received <= desk.limits.maxUploadBytes else {
            await discard()
            throw KBError(.tooLarge, "The upload is over the limit of \(desk.limits.maxUploadBytes) bytes (kb serve --max-upload).")
        }
        hasher.update(data: bytes)
        if !checked {
            head.append(bytes.prefix(Self.headSize - head.count))
            if head.count >= Self.headSize { try await checkType() }
        }
        pending.append(bytes)
        while pending.count >= Self.chunkSize {
            try await store(pending.prefix(Self.chunkSize))
            pending.removeFirst(Self.chunkSize)
        }
    }

    private func checkType() async throws {
        do {
            try type.check(head: head)
            checked = true
        } catch {
            await discard()
            throw error
        }
    }

    private func store(_ piece: Data) async throws {
        do {
            try await desk.store.appendJobChunk(id: job.id, seq: sequence, data: Data(piece))
            sequence += 1
        } catch {
            await discard()
            throw error
        }
    }

    /// Stores the last bytes and acknowledges the upload: from now on it is never lost, and its
    /// job runs (in the background). An empty body is an error, and nothing is kept.
    public func finish() async throws -> SourceAdded {
        let job = try await acknowledge()
        desk.jobsQueued()
        return SourceAdded(source: .init(id: job.job.source), job: job.job)
    }

    /// As `finish`, then reads the source while the caller waits: the job comes back done, or
    /// its error is thrown (and the job is recorded as failed).
    func finishAndRead(embedder choice: EmbedderChoice? = nil) async throws -> SourceAdded {
        let queued = try await acknowledge()
        let finished = try await desk.runClaimedJob(try await desk.claim(queued), embedder: choice)
        return SourceAdded(source: .init(id: finished.source), job: finished)
    }

    private func acknowledge() async throws -> StoredJob {
        guard !ended else { throw KBError(.conflict, "The upload \(job.id) has ended.") }
        if !checked { try await checkType() }
        if !pending.isEmpty { try await store(pending) }
        pending = Data()
        let hash = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        do {
            let queued = try await desk.store.queueJob(id: job.id, contentHash: hash)
            ended = true
            return queued
        } catch {
            await discard()
            throw error
        }
    }

    /// Drops the upload and every byte of it stored so far (a body cut short, a refused type).
    public func discard() async {
        guard !ended else { return }
        ended = true
        // The upload was never acknowledged; should the delete fail, the job runner drops it once stale.
        try? await desk.store.discardJob(id: job.id)
    }
}

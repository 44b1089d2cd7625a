import Crypto
public import Foundation
public import KBCore
public import KBIngest
import KBStore

/// One source as the sources API shows it, whether it was added over the API or ingested from a
/// file by the CLI.
public struct SourceInfo: Sendable, Hashable, Codable {
    public enum Origin: String, Sendable, Hashable, Codable {
        /// Added over the API (or `kb ingest -`); removable by its id.
        case upload
        /// Ingested from a file on the server's disk; it belongs to the file (`kb remove PATH`).
        case file
    }

    /// An upload's own id, or `file:` and 16 hex digits of the file path's SHA-256.
    public var id: String
    public var origin: Origin
    /// The file's path (files only).
    public var path: String?
    public var kind: SourceKind
    public var title: String
    public var tags: [Tag]
    /// The user a private source belongs to.
    public var user: String?
    public var size: Int
    public var contentHash: String
    public var snippets: Int
    /// How OCR read it (`Source.ocr`), and the mean OCR confidence of its snippets read by OCR.
    public var ocr: String?
    public var ocrConfidence: Double?
    public var ingestedAt: Date
    public var modifiedAt: Date?
    /// The bots that see it (given by `GET /v1/sources/{id}`, not by listings).
    public var bots: [String]?

    init(_ stored: StoredSource) {
        let upload = Source.uploadID(path: stored.path)
        id = upload ?? Self.fileID(stored.path)
        origin = upload == nil ? .file : .upload
        path = upload == nil ? stored.path : nil
        kind = stored.kind
        title = stored.title
        tags = stored.tags
        user = stored.owner
        size = stored.size
        contentHash = stored.contentHash
        snippets = stored.snippetCount
        ocr = stored.ocr
        ocrConfidence = stored.ocrConfidence.map { ($0 * 10).rounded() / 10 }
        ingestedAt = stored.ingestedAt
        modifiedAt = stored.modifiedAt
    }

    /// The id a file's source is listed under: stable across re-ingests and copies of the index.
    static func fileID(_ path: String) -> String {
        "file:" + SHA256.hash(data: Data(path.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}

/// A page of sources.
public struct SourceList: Sendable, Hashable, Codable {
    public var sources: [SourceInfo]
    /// How many sources pass the filters, on every page.
    public var total: Int
    public var offset: Int
    public var limit: Int
}

/// What adding a source started: its id, and the job that reads it.
public struct SourceAdded: Sendable, Hashable, Codable {
    public struct Reference: Sendable, Hashable, Codable {
        public var id: String
    }
    public var source: Reference
    public var job: Job
}

/// What reading uploaded sources again from their originals did, source by source.
public struct SourcesReread: Sendable, Hashable, Codable {
    public struct Outcome: Sendable, Hashable, Codable {
        public var id: String
        /// The job that read it: `done` (the source was replaced), or `failed` with its error
        /// (the source stays as it was).
        public var job: Job
    }
    public var sources: [Outcome]
    public var failed: Int { sources.filter { $0.job.state == .failed }.count }
}

/// What erasing a user's sources removed.
public struct SourcesErased: Sendable, Hashable, Codable {
    public var user: String
    /// Sources removed, with their snippets, vectors and originals.
    public var sources: Int
    /// Jobs cancelled that had not yet stored their source.
    public var jobs: Int
}

extension KnowledgeBase {
    /// Texts up to this many characters are read while `addSource` waits (the answer is the
    /// finished job); longer ones in the background, as files are.
    public static let inlineTextCharacters = 32_000

    /// Adds a text source (Markdown understood as in notes): the text is stored with the index
    /// first, then read — at once for a short text (the job comes back done, or the error is
    /// thrown), else by the job runner. With `waiting`, any length is read before returning
    /// (`kb ingest -`).
    ///
    /// - Parameters:
    ///   - request: the text and its fields (title, tags, bots, user, id).
    ///   - waiting: read the text before returning, whatever its length.
    ///   - choice: the embedder for a new index; an existing one keeps its own.
    ///   - caller: a scoped token needs the right `sources`.
    public func addSource(_ request: SourceRequest, waiting: Bool = false, embedder choice: EmbedderChoice? = nil,
                          as caller: Caller = .admin) async throws -> SourceAdded {
        let (text, fields) = try request.validated(limits)
        try caller.require(.sources, writing: true, "add sources")
        let upload = try await SourceUpload(kb: self, type: .markdown, fields: fields)
        try await upload.append(Data(text.utf8))
        if waiting || text.count <= Self.inlineTextCharacters { return try await upload.finishAndRead(embedder: choice) }
        return try await upload.finish()
    }

    /// Starts a file upload: the bots it names must exist, and the bytes that follow (`append`)
    /// are stored with the index as they come; `finish` acknowledges them. A scoped token needs
    /// the right `sources`.
    public func beginUpload(_ request: UploadRequest, as caller: Caller = .admin) async throws -> SourceUpload {
        let (type, fields) = try request.validated(limits)
        try caller.require(.sources, writing: true, "add sources")
        return try await SourceUpload(kb: self, type: type, fields: fields)
    }

    /// A job, as it is now (a scoped token needs the right `sources`).
    public func job(_ id: String, as caller: Caller = .admin) async throws -> Job {
        try caller.require(.sources, writing: false, "see jobs")
        guard id.count <= 128, let job = try await store.snapshot({ try $0.storedJob(id: id) })?.job else {
            throw KBError(.notFound, "No job has the id \(id). `POST /v1/sources` answers with the job's id.")
        }
        return job
    }

    /// Sources, a page at a time, by path (uploads as `upload:ID`): uploads and ingested files,
    /// not memories. A scoped token needs the right `sources`.
    public func sources(_ request: SourceListRequest, as caller: Caller = .admin) async throws -> SourceList {
        let checked = try request.validated(limits)
        try caller.require(.sources, writing: false, "list sources")
        let (all, visible) = try await store.snapshot { snapshot -> ([StoredSource], Set<String>?) in
            let all = try snapshot.sources().filter { $0.kind != .memory }
            guard let name = checked.bot else { return (all, nil) }
            return (all, try snapshot.sourcePaths(passing: Self.seenBy(try snapshot.bot(named: name))))
        }
        let kept = all.filter { source in
            (checked.user == nil || source.owner == checked.user) && (checked.kind == nil || source.kind.rawValue == checked.kind)
                && (checked.tag.map { source.tags.contains(Tag($0)) } ?? true) && (visible?.contains(source.path) ?? true)
        }
        let offset = checked.offset ?? 0, limit = checked.limit ?? 100
        let page = kept.dropFirst(offset).prefix(limit).map(SourceInfo.init)
        return SourceList(sources: Array(page), total: kept.count, offset: offset, limit: limit)
    }

    /// One source, with the bots that see it (a scoped token needs the right `sources`).
    public func source(_ id: String, as caller: Caller = .admin) async throws -> SourceInfo {
        let id = try SourceRemoveRequest(id: id).validated(limits)
        try caller.require(.sources, writing: false, "see sources")
        return try await store.snapshot { snapshot in
            let stored = try Self.find(id, in: try snapshot.sources())
            var info = SourceInfo(stored)
            info.bots = try snapshot.bots().filter { try snapshot.sourcePaths(passing: Self.seenBy($0)).contains(stored.path) }.map(\.name)
            return info
        }
    }

    /// Removes a source added over the API, with its snippets, vectors, original and jobs (a job
    /// still reading it is cancelled). A file's source is not removed this way: it belongs to the
    /// file (a `conflict`). A scoped token needs the right `sources`.
    public func removeSource(_ request: SourceRemoveRequest, as caller: Caller = .admin) async throws -> Deleted {
        let id = try request.validated(limits)
        try caller.require(.sources, writing: true, "remove sources")
        if id.hasPrefix("file:") {
            let stored = try await store.snapshot { try Self.find(id, in: try $0.sources()) }
            throw KBError(.conflict,
                "The source \(id) is the file \(stored.path), ingested by `kb ingest`: it belongs to the file on disk. Remove it with `kb remove \(stored.path)` on the server.")
        }
        let path = Source.uploadPath(id)
        let (exists, jobs) = try await store.snapshot { snapshot in
            (try snapshot.source(path: path) != nil, try snapshot.unfinishedJobs().contains { $0.job.source == id })
        }
        guard exists || jobs else {
            throw KBError(.notFound, "No source has the id \(id). `GET /v1/sources` (or `kb sources`) lists them.")
        }
        _ = try await store.removeSources(exactly: [path])
        try await store.scrub()
        return Deleted(id)
    }

    /// Reads uploaded sources again from the originals kept with the index — after new OCR
    /// settings, say — without the client sending them again: each in its own job, run here
    /// one after another. A source that fails to read keeps the version it had. `ids` empty means
    /// every uploaded source.
    ///
    /// - Parameters:
    ///   - ids: the uploaded sources to read again; empty means all of them.
    ///   - ocr: how page images are read; nil reads them as the job runner does.
    ///   - choice: the embedder for a new index; an existing one keeps its own.
    ///   - progress: called after each source with how many are done, of how many, and its id.
    public func rereadSources(_ ids: [String], ocr: OCRSettings? = nil, embedder choice: EmbedderChoice? = nil,
                              progress: @Sendable (_ done: Int, _ total: Int, _ id: String) -> Void = { _, _, _ in }) async throws -> SourcesReread {
        let uploaded = try await store.snapshot { try $0.sources() }.compactMap { Source.uploadID(path: $0.path) }
        var chosen: [String] = []
        for id in ids {
            let id = try SourceRemoveRequest(id: id).validated(limits)
            guard uploaded.contains(id) else {
                throw KBError(id.hasPrefix("file:") ? .conflict : .notFound, id.hasPrefix("file:")
                    ? "The source \(id) is a file ingested by `kb ingest`: run `kb ingest` on the file again to re-read it."
                    : "No uploaded source has the id \(id). `kb sources` lists them (as upload:ID).")
            }
            if !chosen.contains(id) { chosen.append(id) }
        }
        if ids.isEmpty { chosen = uploaded }
        var outcomes: [SourcesReread.Outcome] = []
        for (n, id) in chosen.enumerated() {
            progress(n, chosen.count, id)
            let job = try await store.beginReread(sourcePath: Source.uploadPath(id), jobID: UUID.random().uuidString.lowercased())
            // A failure is recorded in the job, which the outcome shows.
            _ = try? await runClaimedJob(job, embedder: choice, ocr: ocr, rereading: true)
            outcomes.append(SourcesReread.Outcome(id: id, job: try await self.job(job.job.id)))
        }
        progress(chosen.count, chosen.count, "")
        return SourcesReread(sources: outcomes)
    }

    /// Removes every private source of a user (their snippets, vectors and originals) and cancels
    /// the user's uploads still waiting to be read. A scoped token needs the right `sources`.
    public func eraseSources(user: String, as caller: Caller = .admin) async throws -> SourcesErased {
        _ = try MemoryScope.user(user)
        try caller.require(.sources, writing: true, "erase sources")
        let (paths, waiting) = try await store.snapshot { snapshot in
            (try snapshot.sources().filter { $0.owner == user }.map(\.path),
             try snapshot.unfinishedJobs().filter { $0.owner == user })
        }
        let removed = try await store.removeSources(exactly: paths).count
        for job in waiting { try await store.discardJob(id: job.job.id) }
        try await store.scrub()
        return SourcesErased(user: user, sources: removed, jobs: waiting.count)
    }

    /// The query whose filters pass what a bot sees, for any user.
    static func seenBy(_ bot: Bot) -> SearchQuery {
        var query = SearchQuery("")
        query.selectors = bot.sources
        query.everyUser = true
        return query
    }

    /// The source listed under `id`; `notFound` otherwise.
    static func find(_ id: String, in sources: [StoredSource]) throws -> StoredSource {
        let found = id.hasPrefix("file:")
            ? sources.first { $0.kind != .memory && Source.uploadID(path: $0.path) == nil && SourceInfo.fileID($0.path) == id }
            : sources.first { $0.path == Source.uploadPath(id) }
        guard let found else { throw KBError(.notFound, "No source has the id \(id). `GET /v1/sources` (or `kb sources`) lists them.") }
        return found
    }
}

/// An upload on its way in: its bytes are stored with the index as they arrive (in pieces of a
/// MiB), checked against the media type they were sent as and the size limit; `finish`
/// acknowledges them (the job is queued and its bots see the source from then on), `discard`
/// drops them. Nothing of an upload that was not finished is ever read.
public actor SourceUpload {
    let kb: KnowledgeBase
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

    init(kb: KnowledgeBase, type: MediaType, fields: UploadFields) async throws {
        self.kb = kb
        self.type = type
        let now = Date()
        job = Job(id: UUID.random().uuidString.lowercased(), source: fields.id, state: .receiving, contentType: type.rawValue, size: 0,
                  createdAt: now, updatedAt: now)
        try await kb.store.beginJob(StoredJob(job: job, title: fields.title, tags: fields.tags, owner: fields.owner, bots: fields.bots))
    }

    /// Takes the next bytes of the body. Bytes over the size limit, or not of the upload's type,
    /// end the upload (its bytes are dropped) with `tooLarge` or `unsupportedMediaType`.
    public func append(_ bytes: Data) async throws {
        guard !ended else { throw KBError(.conflict, "The upload \(job.id) has ended.") }
        received += bytes.count
        guard received <= kb.limits.maxUploadBytes else {
            await discard()
            throw KBError(.tooLarge, "The upload is over the limit of \(kb.limits.maxUploadBytes) bytes (kb serve --max-upload).")
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
            try await kb.store.appendJobChunk(id: job.id, seq: sequence, data: Data(piece))
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
        kb.jobsQueued()
        return SourceAdded(source: .init(id: job.job.source), job: job.job)
    }

    /// As `finish`, then reads the source while the caller waits: the job comes back done, or
    /// its error is thrown (and the job is recorded as failed).
    func finishAndRead(embedder choice: EmbedderChoice? = nil) async throws -> SourceAdded {
        let queued = try await acknowledge()
        let finished = try await kb.runClaimedJob(try await kb.claim(queued), embedder: choice)
        return SourceAdded(source: .init(id: finished.source), job: finished)
    }

    private func acknowledge() async throws -> StoredJob {
        guard !ended else { throw KBError(.conflict, "The upload \(job.id) has ended.") }
        if !checked { try await checkType() }
        if !pending.isEmpty { try await store(pending) }
        pending = Data()
        let hash = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        do {
            let queued = try await kb.store.queueJob(id: job.id, contentHash: hash)
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
        try? await kb.store.discardJob(id: job.id)
    }
}

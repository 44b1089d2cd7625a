import Crypto
import Foundation
import KBCore
import KBIngest
import KBRequests
import KBStore

/// Sources added while kb runs — texts and files sent over the API, stored with the index as
/// they arrive and read by jobs (`SourceDesk+Jobs`, through the `DocumentWriter`) — and every
/// source as the sources API lists, shows, removes, re-reads and erases them. Its one piece of
/// state is the signal that wakes the job runner.
struct SourceDesk: Sendable {
    let store: any IndexStore
    let limits: Limits
    let embedders: Embedders
    let ingestor: Ingestor
    let writer: DocumentWriter
    /// Pictures of PDF pages, kept on disk (`SourceDesk+Pages`).
    let pages: PageCache
    /// Wakes the job runner when this process queues a job.
    let jobSignal = JobSignal()

    /// Texts up to this many characters are read while `addSource` waits (the answer is the
    /// finished job); longer ones in the background, as files are.
    static let inlineTextCharacters = 32_000

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
    func addSource(_ checked: Checked<SourceRequest>, waiting: Bool = false, embedder choice: EmbedderChoice? = nil,
                          as caller: Caller) async throws -> SourceAdded {
        let (text, fields) = checked.valid
        try caller.require(.sources, writing: true, "add sources")
        let upload = try await SourceUpload(desk: self, type: .markdown, fields: fields)
        try await upload.append(Data(text.utf8))
        if waiting || text.count <= Self.inlineTextCharacters { return try await upload.finishAndRead(embedder: choice) }
        return try await upload.finish()
    }

    /// Starts a file upload: the bots it names must exist, and the bytes that follow (`append`)
    /// are stored with the index as they come; `finish` acknowledges them. A scoped token needs
    /// the right `sources`.
    func beginUpload(_ checked: Checked<UploadRequest>, as caller: Caller) async throws -> SourceUpload {
        let (type, fields) = checked.valid
        try caller.require(.sources, writing: true, "add sources")
        return try await SourceUpload(desk: self, type: type, fields: fields)
    }

    /// A job, as it is now (a scoped token needs the right `sources`).
    func job(_ id: String, as caller: Caller) async throws -> Job {
        try caller.require(.sources, writing: false, "see jobs")
        return try await job(id)
    }

    /// A job, for the work that runs it (its caller was checked when it was queued).
    func job(_ id: String) async throws -> Job {
        guard id.count <= 128, let job = try await store.snapshot({ try $0.storedJob(id: id) })?.job else {
            throw KBError(.notFound, "No job has the id \(id). `POST /v1/sources` answers with the job's id.")
        }
        return job
    }

    /// Sources, a page at a time, by path (uploads as `upload:ID`): uploads and ingested files,
    /// not memories. A scoped token needs the right `sources`.
    func sources(_ checked: Checked<SourceListRequest>, as caller: Caller) async throws -> SourceList {
        let list = checked.valid
        try caller.require(.sources, writing: false, "list sources")
        let (all, visible, jobs) = try await store.snapshot { snapshot -> ([StoredSource], Set<String>?, [StoredJob]) in
            let all = try snapshot.sources().filter { $0.kind != .memory }
            let jobs = Self.acknowledged(try snapshot.unfinishedJobs())
            guard let name = list.bot else { return (all, nil, jobs) }
            return (all, try snapshot.sourcePaths(passing: Self.seenBy(try snapshot.bot(named: name))), jobs)
        }
        let reading = Dictionary(jobs.map { ($0.job.source, $0) }, uniquingKeysWith: { first, _ in first })
        var infos: [SourceInfo] = all.filter { visible?.contains($0.path) ?? true }.map { stored in
            var info = SourceInfo(stored)
            if let job = reading[info.id] { (info.state, info.job) = (job.job.state.rawValue, job.job.id) }
            return info
        }
        // Acknowledged uploads not stored yet are listed at once, with their job.
        let stored = Set(infos.map(\.id))
        infos += jobs.filter { !stored.contains($0.job.source) && (list.bot.map($0.bots.contains) ?? true) }.map { SourceInfo(pending: $0) }
        let kept = infos.filter { source in
            (list.user == nil || source.user == list.user) && (list.kind == nil || source.kind.rawValue == list.kind)
                && (list.tag.map { source.tags.contains(Tag($0)) } ?? true)
        }
        let offset = list.offset ?? 0, limit = list.limit ?? 100
        let page = kept.dropFirst(offset).prefix(limit)
        return SourceList(sources: Array(page), total: kept.count, offset: offset, limit: limit)
    }

    /// One source, with the bots that see it (a scoped token needs the right `sources`).
    func source(_ id: String, as caller: Caller) async throws -> SourceInfo {
        let id = try SourceRemoveRequest(id: id).validated(limits)
        try caller.require(.sources, writing: false, "see sources")
        return try await store.snapshot { snapshot in
            let jobs = Self.acknowledged(try snapshot.unfinishedJobs()).filter { $0.job.source == id }
            guard let stored = try? Self.find(id, in: try snapshot.sources()) else {
                // Acknowledged, not stored yet: readable at once, with its job.
                guard let pending = jobs.first else { throw Self.noSuchSource(id) }
                var info = SourceInfo(pending: pending)
                info.bots = pending.bots
                return info
            }
            var info = SourceInfo(stored)
            if let job = jobs.first { (info.state, info.job) = (job.job.state.rawValue, job.job.id) }
            info.bots = try snapshot.bots().filter { try snapshot.sourcePaths(passing: Self.seenBy($0)).contains(stored.path) }.map(\.name)
            return info
        }
    }

    /// A source's snippets in order, with their pages and printed labels, headings, tags, weight
    /// and OCR mark (the console's chunk inspector); none yet while its job runs. The rights of
    /// `source(_:as:)`.
    func snippets(_ id: String, as caller: Caller) async throws -> SourceSnippets {
        let info = try await source(id, as: caller)
        let path = info.path ?? Source.uploadPath(info.id)
        let document = try await store.snapshot { try $0.document(path: path) }
        var answer = SourceSnippets(source: info, snippets: document?.snippets ?? [])
        if info.kind == .pdf, info.state == "ready" {
            // The original's bytes: an upload's kept with the index, a file's on disk (if still there).
            let bytes: Data? = if info.origin == .upload {
                try await store.snapshot { snapshot in
                    try snapshot.originalJobID(sourcePath: path).map { try snapshot.jobChunks(id: $0).reduce(into: Data()) { $0.append($1) } }
                }
            } else {
                try? await OffPool.run { try FileBytes.read(path, name: path) }
            }
            if let bytes, let pages = try? await OffPool.run({ try PDFLoader.pageTexts(bytes, name: info.title) }) {
                answer.pages = pages.enumerated().map { SourceSnippets.Page(number: $0.offset + 1, label: $0.element.label, text: $0.element.text) }
            }
        }
        return answer
    }

    /// The unfinished jobs of uploads that were acknowledged (queued or running; not those whose
    /// bytes are still arriving), oldest first.
    static func acknowledged(_ jobs: [StoredJob]) -> [StoredJob] {
        jobs.filter { $0.job.state == .queued || $0.job.state == .running }.sorted { $0.job.createdAt < $1.job.createdAt }
    }

    /// Removes a source added over the API, with its snippets, vectors, original and jobs (a job
    /// still reading it is cancelled). A file's source is not removed this way: it belongs to the
    /// file (a `conflict`). A scoped token needs the right `sources`.
    func removeSource(_ checked: Checked<SourceRemoveRequest>, as caller: Caller) async throws -> Deleted {
        let id = checked.valid
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
        await dropPicturesOfRemovedSources()
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
    func rereadSources(_ ids: [String], ocr: OCRSettings? = nil, embedder choice: EmbedderChoice? = nil, as caller: Caller,
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
            outcomes.append(SourcesReread.Outcome(id: id, job: try await self.job(job.job.id, as: caller)))
        }
        progress(chosen.count, chosen.count, "")
        return SourcesReread(sources: outcomes)
    }

    /// Reads one uploaded source again from its kept original, in the background (`POST
    /// /v1/sources/{id}/reread`): the job is returned at once, running; the source keeps its
    /// version until the job stores the new one, and keeps it if the job fails. A file ingested
    /// by `kb ingest` is re-read by ingesting it again (a `conflict`). A scoped token needs the
    /// right `sources`, and must not be read-only.
    func reread(_ id: String, as caller: Caller) async throws -> SourceAdded {
        let id = try SourceRemoveRequest(id: id).validated(limits)
        try caller.require(.sources, writing: true, "re-read sources")
        if id.hasPrefix("file:") {
            throw KBError(.conflict, "The source \(id) is a file ingested by `kb ingest`: run `kb ingest` on the file again to re-read it.")
        }
        guard try await store.snapshot({ try $0.source(path: Source.uploadPath(id)) }) != nil else { throw Self.noSuchSource(id) }
        let job = try await store.beginReread(sourcePath: Source.uploadPath(id), jobID: UUID.random().uuidString.lowercased())
        let desk = self
        Task.detached { _ = try? await desk.runClaimedJob(job, rereading: true) }   // a failure is recorded in the job
        return SourceAdded(source: .init(id: id), job: job.job)
    }

    /// Removes every private source of a user (their snippets, vectors and originals) and cancels
    /// the user's uploads still waiting to be read. A scoped token needs the right `sources`.
    func eraseSources(user: String, as caller: Caller) async throws -> SourcesErased {
        try caller.require(.sources, writing: true, "erase sources")
        return try await eraseSources(user: user)
    }

    /// The same, as part of erasing a user's scope (`KnowledgeBase.erase`, which checked that the
    /// caller may write it).
    func eraseSources(user: String) async throws -> SourcesErased {
        _ = try MemoryScope.user(user)
        let (paths, waiting) = try await store.snapshot { snapshot in
            (try snapshot.sources().filter { $0.owner == user }.map(\.path),
             try snapshot.unfinishedJobs().filter { $0.owner == user })
        }
        let removed = try await store.removeSources(exactly: paths).count
        for job in waiting { try await store.discardJob(id: job.job.id) }
        try await store.scrub()
        await dropPicturesOfRemovedSources()
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
        guard let found else { throw noSuchSource(id) }
        return found
    }

    static func noSuchSource(_ id: String) -> KBError {
        KBError(.notFound, "No source has the id \(id). `GET /v1/sources` (or `kb sources`) lists them.")
    }
}

public import Foundation
public import KBCore
public import KBIngest
public import KBRequests
import KBStore

/// Sources added while kb runs, and every source as the sources API shows it (`SourceDesk`).
extension KnowledgeBase {
    /// Texts up to this many characters are read while `addSource` waits (the answer is the
    /// finished job); longer ones in the background, as files are.
    public static let inlineTextCharacters = SourceDesk.inlineTextCharacters

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
                          as caller: Caller) async throws -> SourceAdded {
        try await addSource(try request.checked(limits), waiting: waiting, embedder: choice, as: caller)
    }

    /// As `addSource(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func addSource(_ checked: Checked<SourceRequest>, waiting: Bool = false, embedder choice: EmbedderChoice? = nil,
                          as caller: Caller) async throws -> SourceAdded {
        try await sourceDesk.addSource(try inForce(checked), waiting: waiting, embedder: choice, as: caller)
    }

    /// Starts a file upload: the bots it names must exist, and the bytes that follow (`append`)
    /// are stored with the index as they come; `finish` acknowledges them. A scoped token needs
    /// the right `sources`.
    public func beginUpload(_ request: UploadRequest, as caller: Caller) async throws -> SourceUpload {
        try await beginUpload(try request.checked(limits), as: caller)
    }

    /// As `beginUpload(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func beginUpload(_ checked: Checked<UploadRequest>, as caller: Caller) async throws -> SourceUpload {
        try await sourceDesk.beginUpload(try inForce(checked), as: caller)
    }

    /// A job, as it is now (a scoped token needs the right `sources`).
    public func job(_ id: String, as caller: Caller) async throws -> Job {
        try await sourceDesk.job(id, as: caller)
    }

    /// Sources, a page at a time, by path (uploads as `upload:ID`): uploads and ingested files,
    /// not memories. A scoped token needs the right `sources`.
    public func sources(_ request: SourceListRequest, as caller: Caller) async throws -> SourceList {
        try await sources(try request.checked(limits), as: caller)
    }

    /// As `sources(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func sources(_ checked: Checked<SourceListRequest>, as caller: Caller) async throws -> SourceList {
        try await sourceDesk.sources(try inForce(checked), as: caller)
    }

    /// One source, with the bots that see it (a scoped token needs the right `sources`).
    public func source(_ id: String, as caller: Caller) async throws -> SourceInfo {
        try await sourceDesk.source(id, as: caller)
    }

    /// A source's snippets in order, with pages, printed labels, headings, tags, weight and OCR
    /// mark (a scoped token needs the right `sources`).
    public func snippets(ofSource id: String, as caller: Caller) async throws -> SourceSnippets {
        try await sourceDesk.snippets(id, as: caller)
    }

    /// A page (from 1) of a PDF source as a PNG `width` pixels wide (200–2,000, default 1,000),
    /// rendered by poppler from the upload's kept original or the ingested file and kept in the
    /// page cache (`$KB_PAGE_CACHE_DIR`, `$KB_PAGE_CACHE_MB`). The rights of `readSource`: `bot`
    /// reads what that bot sees, `user` that user's private sources. A page the source lacks is
    /// `notFound`; a source without pages `unsupportedMediaType`; a file gone or changed since
    /// it was read a `conflict`; a PDF poppler cannot open `unprocessable`.
    public func pagePicture(source id: String, page: Int, width: Int? = nil, bot: String? = nil, user: String? = nil,
                            as caller: Caller) async throws -> PagePicture {
        try await sourceDesk.pagePicture(id, page: page, width: width, bot: bot, user: user, as: caller)
    }

    /// The words on a page (from 1) of a PDF source with their boxes, as fractions of the page
    /// from its top-left corner: every word, or those of the snippet whose ordinal is `snippet`.
    /// The rights and errors of `pagePicture`.
    public func pageWords(source id: String, page: Int, snippet: Int? = nil, bot: String? = nil, user: String? = nil,
                          as caller: Caller) async throws -> PageWords {
        try await sourceDesk.pageWords(id, page: page, snippet: snippet, bot: bot, user: user, as: caller)
    }

    /// Compares an app's list of a collection with what kb holds: which items to upload (new,
    /// changed or retitled), which are unchanged, which kb holds that the list no longer names
    /// (removed with `prune`), and which ids belong to sources outside the collection. A scoped
    /// token needs the right `sources` (and must not be read-only to prune).
    public func syncSources(_ request: SourceSyncRequest, as caller: Caller) async throws -> SourcesSynced {
        try await syncSources(try request.checked(limits), as: caller)
    }

    /// As `syncSources(_:as:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func syncSources(_ checked: Checked<SourceSyncRequest>, as caller: Caller) async throws -> SourcesSynced {
        try await sourceDesk.syncSources(try inForce(checked), as: caller)
    }

    /// A part of a source's text — pages, printed labels, a heading or a character range — with
    /// its citation fields, at most `maxCharacters` at a time (`next` continues). The caller reads
    /// what they may search: a scoped token through one of its bots, private sources only of a
    /// user its scopes cover; another user's private source is not found.
    public func readSource(_ request: SourceReadRequest, as caller: Caller) async throws -> SourceText {
        try await readSource(try request.checked(limits), as: caller)
    }

    /// As `readSource(_:as:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func readSource(_ checked: Checked<SourceReadRequest>, as caller: Caller) async throws -> SourceText {
        try await sourceDesk.readSource(try inForce(checked), as: caller)
    }

    /// Matches of a regular expression (or, with `literal`, a text) in the sources the caller may
    /// read, each with its source, pages, headings and line; bounded by `limit` and
    /// `Limits.grepSeconds` (`truncated` says which ended it). Patterns that could run for long
    /// (back-references, large counted repetitions) are refused.
    public func grepSources(_ request: SourceGrepRequest, as caller: Caller) async throws -> SourceMatches {
        try await grepSources(try request.checked(limits), as: caller)
    }

    /// As `grepSources(_:as:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func grepSources(_ checked: Checked<SourceGrepRequest>, as caller: Caller) async throws -> SourceMatches {
        try await sourceDesk.grepSources(try inForce(checked), as: caller)
    }

    /// Removes a source added over the API, with its snippets, vectors, original and jobs (a job
    /// still reading it is cancelled). A file's source is not removed this way: it belongs to the
    /// file (a `conflict`). A scoped token needs the right `sources`.
    public func removeSource(_ request: SourceRemoveRequest, as caller: Caller) async throws -> Deleted {
        try await removeSource(try request.checked(limits), as: caller)
    }

    /// As `removeSource(_:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func removeSource(_ checked: Checked<SourceRemoveRequest>, as caller: Caller) async throws -> Deleted {
        try await sourceDesk.removeSource(try inForce(checked), as: caller)
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
    ///   - caller: who asks (the admin's only; a scoped token rereads one source with `reread(source:as:)`).
    public func rereadSources(_ ids: [String], ocr: OCRSettings? = nil, embedder choice: EmbedderChoice? = nil, as caller: Caller,
                              progress: @Sendable (_ done: Int, _ total: Int, _ id: String) -> Void = { _, _, _ in }) async throws -> SourcesReread {
        try caller.requireAdmin("read every upload again")
        return try await sourceDesk.rereadSources(ids, ocr: ocr, embedder: choice, as: caller, progress: progress)
    }

    /// Reads one uploaded source again from its kept original, in the background: the running
    /// job comes back at once (`job(_:)` follows it); the source keeps its version until the job
    /// stores the new one, and keeps it if the job fails. A scoped token needs the right `sources`.
    public func reread(source id: String, as caller: Caller) async throws -> SourceAdded {
        try await sourceDesk.reread(id, as: caller)
    }

    /// Removes every private source of a user (their snippets, vectors and originals) and cancels
    /// the user's uploads still waiting to be read. A scoped token needs the right `sources`.
    public func eraseSources(user: String, as caller: Caller) async throws -> SourcesErased {
        try await sourceDesk.eraseSources(user: user, as: caller)
    }

    /// Starts the background runner of upload jobs (see `JobRunner`).
    public func startJobRunner(poll: TimeInterval = 2) -> JobRunner { sourceDesk.startJobRunner(poll: poll) }

    /// Runs queued jobs (and jobs whose process died) one after another until none is left;
    /// returns how many ran. Their failures are recorded in the jobs.
    @discardableResult
    public func runQueuedJobs() async -> Int { await sourceDesk.runQueuedJobs() }

    func runClaimedJob(_ stored: StoredJob) async throws -> Job { try await sourceDesk.runClaimedJob(stored) }
}

import Crypto
import KBContext
import KBEmbed
public import Foundation
public import KBCore
public import KBIndex
public import KBIngest
import KBPostgres

/// A knowledge base: one SQLite file, and everything kb does with it.
///
/// ```swift
/// let kb = try KnowledgeBase.open(at: "/tmp/kb.sqlite")
/// let report = kb.ingest(["notes/"], options: IngestOptions())
/// let hits = try kb.search(SearchQuery("venus in the tenth house"))
/// ```
public final class KnowledgeBase: Sendable {
    public let store: any IndexStore
    public var path: String { store.location }
    /// What requests may ask for.
    public let limits: Limits
    /// Where embedders come from: `KB_MODEL_DIR`, `KB_EMBEDDINGS_*`.
    let environment: [String: String]
    /// The embeddings endpoint to use instead of the one an `openai:` index recorded (the model
    /// name recorded stays the identity that must match): given when opening, else
    /// `KB_EMBEDDINGS_URL`.
    public var embedderURL: String? { givenEmbedderURL ?? environment["KB_EMBEDDINGS_URL"].flatMap { $0.isEmpty ? nil : $0 } }
    /// The endpoint given when opening (an error on an index that is not `openai:`).
    let givenEmbedderURL: String?
    let searchState = SearchState()
    let health = EmbedderHealth()
    /// Word sets of the texts context assembly has seen.
    let wordSets = WordSetCache()

    init(store: any IndexStore, limits: Limits, environment: [String: String], embedderURL: String?) {
        self.store = store
        self.limits = limits
        self.environment = environment
        self.givenEmbedderURL = embedderURL
    }

    /// Chooses how this process spends its cores on the model and on vector scans; call it once,
    /// before the first search or embedding (later calls with another mode change nothing and
    /// return false). Without it a process runs in `.throughput` mode.
    @discardableResult
    public static func configure(_ mode: ComputeMode) -> Bool { ProcessCompute.set(mode) }

    /// Opens (or, with `create`, makes) the index file at `path`; requests are held to `limits`.
    ///
    /// - Parameters:
    ///   - environment: where embedders are configured from (`KB_MODEL_DIR`, `KB_EMBEDDINGS_URL`,
    ///     `KB_EMBEDDINGS_API_KEY`, …). The default is the process's.
    ///   - embedderURL: an embeddings endpoint to use instead of the one an `openai:` index
    ///     recorded, for this knowledge base only (else `KB_EMBEDDINGS_URL`).
    public static func open(at path: String, create: Bool = true, limits: Limits = Limits(),
                            environment: [String: String] = ProcessInfo.processInfo.environment,
                            embedderURL: String? = nil) throws -> KnowledgeBase {
        KnowledgeBase(store: try openStore(path, create: create, environment: environment), limits: limits,
                      environment: environment, embedderURL: embedderURL)
    }

    /// The store `location` names: a PostgreSQL database for `postgres://…` (its pool holds
    /// `KB_DB_POOL` connections, default 8), else the SQLite file at that path.
    static func openStore(_ location: String, create: Bool, environment: [String: String]) throws -> any IndexStore {
        if PostgresStore.isURL(location) {
            let pool = environment["KB_DB_POOL"].map { Int($0) ?? 0 } ?? 8
            return try PostgresStore.open(url: location, create: create, connections: pool,
                                          textSearchConfig: environment["KB_TEXT_SEARCH"] ?? "simple", environment: environment)
        }
        return try SQLiteStore.open(at: FileScanner.absolute(location), create: create)
    }

    /// Opens the index for a service, making an empty one when there is none yet (so that a service
    /// that only stores memories needs no ingest first). The folder must exist: a mistyped path
    /// is an error, not a new directory tree. `created` says whether the file was made.
    /// A PostgreSQL index keeps `databasePool` connections (default `KB_DB_POOL`, else 8).
    public static func openForService(at path: String, limits: Limits = Limits(), embedderURL: String? = nil,
                                      databasePool: Int? = nil) throws -> (kb: KnowledgeBase, created: Bool) {
        if PostgresStore.isURL(path) {
            var environment = ProcessInfo.processInfo.environment
            if let databasePool { environment["KB_DB_POOL"] = String(databasePool) }
            return (try open(at: path, create: true, limits: limits, environment: environment, embedderURL: embedderURL), false)
        }
        let absolute = FileScanner.absolute(path)
        if FileManager.default.fileExists(atPath: absolute) {
            return (try open(at: absolute, create: false, limits: limits, embedderURL: embedderURL), false)
        }
        let folder = (absolute as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw KBError(.noSuchFile,
                "There is no index at \(absolute), and its folder \(folder) does not exist to make one in. Create the folder, or point --db (or KB_DB) at an index.")
        }
        return (try open(at: absolute, create: true, limits: limits, embedderURL: embedderURL), true)
    }

    /// Opens the index, runs `body`, and lets go of the file whatever happens.
    public static func withOpened<T>(at path: String, create: Bool = true, _ body: (KnowledgeBase) async throws -> T) async throws -> T {
        let kb = try open(at: path, create: create)
        return try await body(kb)
    }

    /// The index used when none is named: `$KB_DB`, else `$XDG_DATA_HOME/kb/kb.sqlite`,
    /// else `~/.local/share/kb/kb.sqlite`.
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        Locations.defaultIndex(environment)
    }

    // MARK: - Reading files

    /// What ingest would store for one file, without touching any index. Parsing (and OCR) runs
    /// on a Dispatch thread, off the cooperative pool.
    public static func inspect(_ file: String, options: IngestOptions) async throws -> SourceDocument {
        try await offPool { Result { try readDocument(file, options: options) } }.get()
    }

    static func readDocument(_ file: String, options: IngestOptions) throws -> SourceDocument {
        let path = FileScanner.absolute(file)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw KBError(.noSuchFile, "No such file: \(file). Check the path.")
        }
        guard !isDirectory.boolValue else {
            throw KBError(.invalidArgument, "\(file) is a folder; `kb inspect` takes one file. Try one of the files in it.")
        }
        let ext = URL(fileURLWithPath: path).pathExtension
        guard FileTypes.kind(forExtension: ext) != nil else {
            throw KBError(.unsupportedFileType, "\(file): kb does not read .\(ext) files; it reads \(FileTypes.supportedList).")
        }
        let (data, modified) = try readFile(path, displayName: file)
        return try loadDocument(data, path: path, displayName: file, contentHash: contentHash(data), modifiedAt: modified, options: options,
                                ocr: OCRSession(settings: options.ocr))
    }

    /// Parses one file with the loader its extension calls for.
    static func loadDocument(_ data: Data, path: String, displayName: String, contentHash: String, modifiedAt: Date?,
                             options: IngestOptions, ocr: OCRSession) throws -> SourceDocument {
        switch FileTypes.kind(forExtension: URL(fileURLWithPath: path).pathExtension) {
        case .pdf?:
            return try PDFLoader(options: options, password: options.password, ocr: ocr)
                .load(path: path, displayName: displayName, contentHash: contentHash, size: data.count, modifiedAt: modifiedAt)
        case .image?:
            return try ImageLoader(options: options, ocr: ocr)
                .load(path: path, displayName: displayName, contentHash: contentHash, size: data.count, modifiedAt: modifiedAt)
        default:
            break
        }
        return try NoteLoader(options: options).load(data, path: path, displayName: displayName, contentHash: contentHash, modifiedAt: modifiedAt)
    }

    static func readFile(_ path: String, displayName: String) throws -> (Data, Date?) {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path), options: [.mappedIfSafe])
            let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            return (data, modified)
        } catch {
            throw KBError(.unreadableFile, "Cannot read \(displayName): \(error.localizedDescription). Check that it exists and is readable.")
        }
    }

    /// Hex SHA-256 of the bytes.
    public static func contentHash(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: - Ingest

    /// The embedder this index uses: the one it records, else `choice`, else the local model.
    /// Fails, before any work, when `choice` differs from what the index holds.
    public func embedder(_ choice: EmbedderChoice?) async throws -> (embedder: (any Embedder)?, record: EmbedderRecord) {
        let recorded = try await store.snapshot { try $0.embedderRecord() }
        let resolved = try choice ?? recorded.map { try recordedChoice($0) } ?? .local
        // The index knows the dimension of the embedder it records: no need to ask a remote one.
        let known = recorded.flatMap { record in
            (try? recordedChoice(record)) == resolved && record.dimension > 0 ? record.dimension : nil
        }
        let embedder = try await resolved.make(environment: environment, dimension: known)
        let record = EmbedderChoice.record(for: embedder, choice: resolved)
        try await store.snapshot { try $0.checkEmbedder(record) }
        return (embedder, record)
    }

    /// Opens (or creates) the index for an ingest, with its embedder. The embedder is loaded
    /// before a new index file is created, so a missing model leaves no empty index behind.
    public static func openForIngest(at path: String, embedder choice: EmbedderChoice?, embedderURL: String? = nil)
        async throws -> (kb: KnowledgeBase, embedder: (any Embedder)?, record: EmbedderRecord) {
        if PostgresStore.isURL(path) {
            // A database is only known to hold an index once it has been asked.
            do {
                let kb = try open(at: path, create: false, embedderURL: embedderURL)
                let (embedder, record) = try await kb.embedder(choice)
                return (kb, embedder, record)
            } catch let error as KBError where error.code == .noIndex {}
        } else if FileManager.default.fileExists(atPath: FileScanner.absolute(path)) {
            let kb = try open(at: path, create: false, embedderURL: embedderURL)
            let (embedder, record) = try await kb.embedder(choice)
            return (kb, embedder, record)
        }
        let resolved = choice ?? .local
        let embedder = try await resolved.make()
        let kb = try open(at: path, create: true, embedderURL: embedderURL)
        return (kb, embedder, EmbedderChoice.record(for: embedder, choice: resolved))
    }

    /// Brings the index up to date with files and folders: new files are added, changed files
    /// replaced, unchanged files left alone. Snippets are embedded in batches across files
    /// (a changed file reuses the vectors of paragraphs whose text did not change). Each file is
    /// written with its vectors in its own transaction, so a bad file fails alone and leaves
    /// what the index held for it untouched.
    ///
    /// - Parameters:
    ///   - embedder: nil for a keyword-only ingest.
    ///   - prune: also remove sources under the given folders whose files are gone.
    ///   - progress: called as files are read and as snippets are embedded and written.
    public func ingest(
        _ paths: [String], options: IngestOptions, embedder: (any Embedder)? = nil, record: EmbedderRecord = .none,
        prune: Bool = false, progress: @escaping @Sendable (IngestProgress) -> Void = { _ in }
    ) async -> IngestReport {
        let started = Date()
        var report = IngestReport()
        // Under --ocr never, images in folders are left alone (as before OCR existed); named ones fail.
        let scan = FileScanner.scan(paths, skippingInFolders: options.ocr.mode == .never ? [.image] : [])
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

        // 1. Read, hash and parse on all cores (off the cooperative pool); keep what changed.
        var changed: [(candidate: FileScanner.Candidate, document: SourceDocument)] = []
        let batchSize = 64
        for batchStart in stride(from: 0, to: scan.files.count, by: batchSize) {
            let batch = Array(scan.files[batchStart..<min(batchStart + batchSize, scan.files.count)])
            progress(IngestProgress(phase: .reading, done: batchStart, total: scan.files.count, current: batch[0].displayName))
            let outcomes = await Self.offPool { Self.load(batch, options: options, known: known, ocrRecords: ocrRecords, ocr: ocr) }
            for (candidate, outcome) in zip(batch, outcomes) {
                switch outcome {
                case .unchanged: report.unchanged += 1
                case .failed(let message): report.failed.append(.init(path: candidate.displayName, message: message))
                case .loaded(let document): changed.append((candidate, document))
                }
            }
        }

        // 2. Embed and write, a group of files at a time; each file in its own transaction.
        await write(changed.map { (name: $0.candidate.displayName, document: $0.document, isNew: known[$0.candidate.path] == nil) },
                    embedder: embedder, record: record, into: &report, progress: progress)
        report.ocrPages = pages.withLock { $0.done }
        report.ocrCachedPages = ocr.cachedPagesUsed

        // Sources the index holds whose files are gone: under scanned folders, or named directly.
        let seen = Set(scan.files.map(\.path))
        var gone: [String] = []
        for folder in scan.folders {
            let stored = (try? await store.snapshot { try $0.sourcePaths(under: folder + "/") }) ?? []
            gone += stored.filter { !seen.contains($0) && !FileManager.default.fileExists(atPath: $0) }
        }
        var accountedFor = Set<String>()
        for missing in scan.missingArguments {
            let stored = (known[missing] != nil ? [missing] : []) + ((try? await store.snapshot { try $0.sourcePaths(under: missing + "/") }) ?? [])
            if !stored.isEmpty {
                gone += stored
                accountedFor.insert(missing)
            }
        }
        if prune {
            do {
                let (count, effect) = try await store.removeSources(exactly: gone)
                report.removed = count
                followWrite(effect, vectors: nil, record: record)
                // A vanished argument whose sources were just pruned is not a failure.
                report.failed.removeAll { accountedFor.contains(FileScanner.absolute($0.path)) }
            } catch {
                report.failed.append(.init(path: store.location, message: "\(error)"))
            }
        } else {
            report.missing = gone.sorted()
        }
        try? await store.deleteUnusedTags()
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Embeds (in groups of about 256 snippets) and stores documents, each in its own transaction,
    /// counting what happened into `report`. A failure leaves that document's source as it was.
    func write(
        _ documents: [(name: String, document: SourceDocument, isNew: Bool)], embedder: (any Embedder)?, record: EmbedderRecord,
        into report: inout IngestReport, progress: @Sendable (IngestProgress) -> Void
    ) async {
        let totalSnippets = documents.reduce(0) { $0 + $1.document.snippets.count }
        var doneSnippets = 0
        var start = 0
        while start < documents.count {
            var end = start
            var snippets = 0
            while end < documents.count && (snippets < 256 || end == start) {
                snippets += documents[end].document.snippets.count
                end += 1
            }
            let group = documents[start..<end]
            progress(IngestProgress(phase: .embedding, done: doneSnippets, total: totalSnippets, current: group.first!.name))
            let vectors = await embedGroup(group.map(\.document), embedder: embedder, record: record)
            for (item, result) in zip(group, vectors) {
                do {
                    let documentVectors = try result.get()
                    let effect = try await store.replace(item.document, vectors: documentVectors, embedder: record)
                    followWrite(effect, vectors: documentVectors, record: record)
                    if item.isNew { report.added += 1 } else { report.updated += 1 }
                    report.snippets += item.document.snippets.count
                    report.warnings += item.document.warnings
                } catch {
                    report.failed.append(.init(path: item.name, message: "\(error)"))
                }
                doneSnippets += item.document.snippets.count
            }
            progress(IngestProgress(phase: .embedding, done: doneSnippets, total: totalSnippets, current: group.last!.name))
            start = end
        }
    }

    /// Vectors for each document of a group (nil entries for a keyword-only index), reusing
    /// stored vectors of unchanged snippet text and embedding the rest in one call.
    private func embedGroup(_ documents: [SourceDocument], embedder: (any Embedder)?, record: EmbedderRecord) async -> [Result<[[Float]]?, any Error>] {
        guard let embedder else { return documents.map { _ in .success(nil) } }
        var reusable: [[String: [Float]]] = []
        var missing: [String] = []
        var missingIndex: [String: Int] = [:]
        for document in documents {
            let path = document.source.path
            let stored = (try? await store.snapshot { try $0.vectorsByText(path: path, embedder: record.name) }) ?? [:]
            reusable.append(stored)
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

    /// Vectors from a remote embedder, through the index's embedding cache: cached texts are
    /// not sent, and each answered batch is cached at once, so a run that fails part-way does not
    /// pay again for what was answered.
    func embedRemotely(_ texts: [String], embedder: any Embedder, record: EmbedderRecord) async throws -> [[Float]] {
        let hashes = texts.map { Data(SHA256.hash(data: Data($0.utf8))) }
        var vectors = try await store.snapshot { try $0.cachedVectors(embedder: record, hashes: hashes) }.filter { $0.value.count == record.dimension }
        var seen = Set<Data>()
        let wanted = hashes.filter { vectors[$0] == nil && seen.insert($0).inserted }
        let textByHash = Dictionary(zip(hashes, texts), uniquingKeysWith: { first, _ in first })
        for start in stride(from: 0, to: wanted.count, by: 64) {
            let part = Array(wanted[start..<min(start + 64, wanted.count)])
            let before = (embedder as? HTTPEmbedder)?.tokensUsed ?? 0
            let fresh = try await embedder.embed(part.map { textByHash[$0]! }, role: .passage)
            guard fresh.count == part.count, fresh.allSatisfy({ $0.count == record.dimension }) else {
                throw KBError(.embedding, "\(embedder.id) returned \(fresh.count) vectors for \(part.count) texts, or vectors of the wrong size.")
            }
            let used = ((embedder as? HTTPEmbedder)?.tokensUsed ?? 0) - before
            try await store.cacheVectors(embedder: record, Array(zip(part, fresh).map { (hash: $0, vector: $1) }), tokens: used)
            for (hash, vector) in zip(part, fresh) { vectors[hash] = vector }
        }
        return hashes.map { vectors[$0]! }
    }

    enum LoadOutcome: Sendable {
        case unchanged
        case loaded(SourceDocument)
        case failed(String)
    }

    /// Runs blocking work (file reads, parsing on all cores) on a Dispatch thread, not on Swift's
    /// cooperative pool, and awaits it.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }

    /// Reads, hashes and parses a batch of files on all cores.
    static func load(_ batch: [FileScanner.Candidate], options: IngestOptions, known: [String: String], ocrRecords: [String: String],
                     ocr: OCRSession) -> [LoadOutcome] {
        let results = ConcurrentSlots<LoadOutcome>(count: batch.count)
        DispatchQueue.concurrentPerform(iterations: batch.count) { index in
            let candidate = batch[index]
            let outcome: LoadOutcome
            do {
                let (data, modified) = try readFile(candidate.path, displayName: candidate.displayName)
                let hash = contentHash(data)
                let paged = [.pdf, .image].contains(FileTypes.kind(forExtension: URL(fileURLWithPath: candidate.path).pathExtension))
                if known[candidate.path] == hash && !(paged && options.ocr.needsRereading(recorded: ocrRecords[candidate.path])) {
                    outcome = .unchanged
                } else {
                    outcome = .loaded(try loadDocument(
                        data, path: candidate.path, displayName: candidate.displayName,
                        contentHash: hash, modifiedAt: modified, options: options, ocr: ocr))
                }
            } catch {
                outcome = .failed("\(error)")
            }
            results.set(index, outcome)
        }
        return results.values.map { $0 ?? .failed("not read") }
    }

    // MARK: - Search and listing

    /// An absolute, standardised path (`~` expanded, relative to the current folder).
    public static func absolutePath(_ path: String) -> String { FileScanner.absolute(path) }

    /// Turns a `--source` argument into the absolute prefix stored paths are matched with:
    /// a folder matches the files inside it, anything else is a plain path prefix.
    public static func sourcePrefix(_ argument: String) -> String {
        let path = FileScanner.absolute(argument)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue, path != "/" {
            return path + "/"
        }
        return argument.hasSuffix("/") && path != "/" ? path + "/" : path
    }

    /// Ingested files (memories are listed by `memories(_:)`).
    public func sources() async throws -> [StoredSource] { try await store.snapshot { try $0.sources() }.filter { $0.kind != .memory } }

    /// Removes sources by file path, or all sources under a folder path. Throws when a path
    /// matches nothing, naming it, and removes nothing in that case.
    @discardableResult
    public func remove(_ paths: [String]) async throws -> [String] {
        let absolute = paths.map(FileScanner.absolute)
        for (argument, path) in zip(paths, absolute) {
            let under = try await store.snapshot { try $0.sourcePaths(under: path) }
            if !under.contains(where: { $0 == path || $0.hasPrefix(path + "/") }) {
                throw KBError(.notFound, "No source in the index matches \(argument). `kb sources` lists what is indexed.")
            }
        }
        let (removed, effect) = try await store.removeSources(matching: absolute)
        followWrite(effect, vectors: nil, record: nil)
        return removed
    }
}

/// The index's OCR page cache, for loaders running on Dispatch threads: each call waits (on
/// that thread, never on the cooperative pool) for the store's async call.
final class StoreOCRCache: OCRPageCache {
    let store: any IndexStore

    init(store: any IndexStore) { self.store = store }

    func pages(contentHash: String, key: String) -> [Int: OCRPage] {
        let store = self.store
        let pages = Self.wait { try await store.snapshot { try $0.ocrPages(contentHash: contentHash, key: key) } } ?? []
        return Dictionary(pages.map { ($0.page, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func store(_ page: OCRPage, contentHash: String, key: String) {
        let store = self.store
        _ = Self.wait { try await store.cacheOCRPage(page, contentHash: contentHash, key: key) }
    }

    /// Runs async work and blocks the calling (Dispatch) thread until it is done; nil on error.
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> T? {
        let result = LockedValue<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = try? await work()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}

extension KnowledgeBase {
    /// The OCR languages for an ingest: `given` (then recorded as the index's), else English
    /// plus the languages the index was given before.
    public func ocrLanguages(given: [String]?) async throws -> [String] {
        let recorded = try await store.snapshot { try $0.meta(Self.ocrLanguagesKey) }
        if let given {
            let list = given.joined(separator: "+")
            if recorded != list { try await store.setMeta(Self.ocrLanguagesKey, list) }
            return given
        }
        let before = (recorded ?? "").split(separator: "+").map(String.init)
        return (["eng"] + before).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    }

    static let ocrLanguagesKey = "ocr_languages"
}

extension KnowledgeBase {
    /// Tunes keyword search for `language` (recorded with the index); rebuilds the keyword index
    /// when it was tuned for another. False when nothing changed.
    @discardableResult
    public func setKeywordLanguage(_ language: KeywordLanguage) async throws -> Bool {
        try await store.setKeywordLanguage(language)
    }
}

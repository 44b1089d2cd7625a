public import Foundation
import KBContext
public import KBCore
import KBIngest
public import KBRequests
public import KBRetrieval
import KBSQLite
public import KBStore

/// A knowledge base: an index (one SQLite file, or a PostgreSQL database that several servers
/// share) and everything kb does with it — ingest, search, memories, bots, context.
///
/// It is a facade: opening happens here, and each request method validates its request once,
/// holds it to what the caller may do (`Caller`), and hands it to the job that answers it — the
/// `Retriever` (search, recall and the retrieval of context), `ContextBuilder`, `MemoryBook`,
/// `Ingestor` and `DocumentWriter`, `SourceDesk` (sources added while kb runs and their jobs),
/// `TokenKeeper`, `Evaluator` and `IndexCopier` — over the embedders (`Embedders`) and the index,
/// reached only through KBStore's `IndexStore`, whichever backend holds it. Each job holds only
/// the state it uses.
///
/// ```swift
/// let kb = try KnowledgeBase.open(at: path)
/// let (embedder, record) = try await kb.embedder(nil)
/// let report = try await kb.ingest([notes], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
/// let results = try await kb.search(SearchQuery("venus in the tenth house"), as: .admin)
/// ```
public final class KnowledgeBase: Sendable {
    /// The index, through the storage contract only.
    let store: any IndexStore
    /// Where the index is: a file path, or a `postgres://` URL without password.
    public var path: String { store.location }
    /// What requests may ask for.
    public let limits: Limits
    /// The embedders: the one the index records (for queries and memory writes) and whether
    /// queries can be embedded now.
    let embedders: Embedders
    /// Where embedders come from: `KB_MODEL_DIR`, `KB_EMBEDDINGS_*`.
    var environment: [String: String] { embedders.environment }
    /// Search, recall, bot and report context, evaluation: the pipeline of retrieval stages.
    public let retriever: Retriever
    /// The API tokens and the check of bearer secrets.
    let tokenKeeper: TokenKeeper
    /// Memories: added, changed, recalled, learned from conversations.
    let memoryBook: MemoryBook
    /// Prompt context for bots and reports.
    let contexts: ContextBuilder
    /// Files into the index.
    let ingestor: Ingestor
    /// Sources added while kb runs, their jobs, and the sources API.
    let sourceDesk: SourceDesk
    /// `kb eval`: corpora loaded and queries scored.
    let evaluator: Evaluator

    init(store: any IndexStore, limits: Limits, profile: RetrievalProfile, environment: [String: String], embedderURL: String?,
         queryCacheBytes: Int, pages: PageCache) {
        self.store = store
        self.limits = limits
        embedders = Embedders(store: store, environment: environment, embedderURL: embedderURL, queryCacheBytes: queryCacheBytes)
        retriever = Retriever(store: store, profile: profile, encoding: embedders)
        tokenKeeper = TokenKeeper(store: store, limits: limits)
        memoryBook = MemoryBook(store: store, limits: limits, embedders: embedders, retriever: retriever)
        contexts = ContextBuilder(store: store, limits: limits, retriever: retriever, memoryBook: memoryBook)
        let writer = DocumentWriter(store: store, embedders: embedders)
        ingestor = Ingestor(store: store, embedders: embedders, retriever: retriever, writer: writer)
        sourceDesk = SourceDesk(store: store, limits: limits, embedders: embedders, ingestor: ingestor, writer: writer, pages: pages)
        evaluator = Evaluator(store: store, retriever: retriever, ingestor: ingestor, writer: writer)
    }

    /// A request checked against this knowledge base's limits: as given when it was checked
    /// against the same limits, else checked now.
    func inForce<R: KBRequest>(_ checked: Checked<R>) throws -> Checked<R> {
        checked.limits == limits ? checked : try checked.request.checked(limits)
    }

    /// Every depth and limit of retrieval this knowledge base uses.
    public var profile: RetrievalProfile { retriever.profile }

    /// Runs `stage` (a re-ranker, say) after every ranking's snapshot and before its hits are
    /// read, in searches, recalls and contexts; `PassThroughStage()` removes it.
    public func useRetrievalStage(_ stage: any RetrievalStage) { retriever.use(stage) }

    /// Asks `rewriter` (a chat model, `ChatRewriter`) to rewrite every turn that comes with a
    /// conversation's history before it is searched; nil stops.
    public func useQueryRewriter(_ rewriter: (any QueryRewriter)?) { retriever.use(rewriter: rewriter) }

    /// Chooses how this process spends its cores on the model and on vector scans; call it once,
    /// before the first search or embedding (later calls with another mode change nothing and
    /// return false). Without it a process runs in `.throughput` mode.
    @discardableResult
    public static func configure(_ mode: ComputeMode) -> Bool { ProcessCompute.set(mode) }

    /// Opens (or, with `create`, makes) the index at `path`; requests are held to `limits`.
    ///
    /// - Parameters:
    ///   - path: an SQLite file, or the URL of a registered engine's index (`postgres://…` once
    ///     `PostgresEngine` is registered: ``register(_:)``).
    ///   - create: make the index when there is none (else that is an error saying how to make one).
    ///   - limits: what requests may ask for.
    ///   - profile: every depth and limit of retrieval (the defaults unless given).
    ///   - options: how a database server's index is opened (its pool size); nil reads them
    ///     from `environment` (`KB_DB_POOL`, `KB_TEXT_SEARCH`).
    ///   - environment: where embedders are configured from (`KB_MODEL_DIR`, `KB_EMBEDDINGS_URL`,
    ///     `KB_EMBEDDINGS_API_KEY`, …). The default is the process's.
    ///   - embedderURL: an embeddings endpoint to use instead of the one an `openai:` index
    ///     recorded, for this knowledge base only (else `KB_EMBEDDINGS_URL`).
    public static func open(at path: String, create: Bool = true, limits: Limits = Limits(), profile: RetrievalProfile = .standard,
                            store options: StoreOptions? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
                            embedderURL: String? = nil) throws -> KnowledgeBase {
        // The environment's settings are read before the store opens: a malformed one creates no index.
        let queryCacheBytes = try Embedders.queryCacheBytes(environment)
        let pages = try PageCache.standard(for: isDatabaseURL(path) ? StoreLocation.shown(path) : SourcePaths.absolute(path), environment: environment)
        return KnowledgeBase(store: try openStore(path, create: create, options: try options ?? StoreOptions(environment: environment), environment: environment),
                             limits: limits, profile: profile, environment: environment, embedderURL: embedderURL, queryCacheBytes: queryCacheBytes,
                             pages: pages)
    }

    /// Whether `location` names a database server (`postgres://…`, any `scheme://`) rather than a file.
    public static func isDatabaseURL(_ location: String) -> Bool {
        StoreLocation.scheme(of: location) != nil
    }

    /// The engines indexes are opened with: SQLite files, built in, and those registered.
    private static let engines = LockedValue<[any StoreEngine]>([SQLiteEngine()])

    /// Lets knowledge bases open the locations whose scheme `engine` names (a later engine for a
    /// scheme replaces an earlier one). Call it once, at start, before opening such a location:
    ///
    /// ```swift
    /// KnowledgeBase.register(PostgresEngine())
    /// let kb = try KnowledgeBase.open(at: "postgres://kb@db.internal:5432/kb")
    /// ```
    public static func register(_ engine: any StoreEngine) {
        engines.withLock { engines in
            engines.removeAll { !Set($0.schemes).isDisjoint(with: engine.schemes) || ($0.schemes.isEmpty && engine.schemes.isEmpty) }
            engines.append(engine)
        }
    }

    /// The URL schemes knowledge bases can open now, sorted.
    public static var registeredSchemes: [String] { engines.withLock { $0.flatMap(\.schemes) }.sorted() }

    /// The store `location` names — the one place an engine is chosen: the registered engine of the
    /// location's scheme, else (a plain path) the file engine, with the path made absolute.
    static func openStore(_ location: String, create: Bool, options: StoreOptions, environment: [String: String]) throws -> any IndexStore {
        let scheme = StoreLocation.scheme(of: location)
        let engine = engines.withLock { engines in engines.last { scheme.map($0.schemes.contains) ?? $0.schemes.isEmpty } }
        guard let engine else {
            let known = registeredSchemes.map { "\($0)://" }
            let fix = scheme == "postgres" || scheme == "postgresql"
                ? "PostgreSQL indexes are opened by KBPostgres's PostgresEngine: call KnowledgeBase.register(PostgresEngine()) once at start (the kb command does; its PostgreSQL trait is on by default)"
                : "Give a file path for an SQLite index" + (known.isEmpty ? "" : ", or a location of \(known.joined(separator: ", "))")
            throw KBError(.unsupportedMode, "No store engine opens \(scheme ?? "")://… locations like \(StoreLocation.shown(location)) here. \(fix).")
        }
        let opening = StoreOpening(create: create, options: options, analyzer: try FoldingAnalyzer(language: .auto), environment: environment)
        return try engine.open(scheme == nil ? SourcePaths.absolute(location) : location, opening)
    }

    /// Opens the index for a service, making an empty one when there is none yet (so that a service
    /// that only stores memories needs no ingest first). The folder must exist: a mistyped path
    /// is an error, not a new directory tree. `created` says whether the file was made.
    /// A PostgreSQL index is opened with `store` (its pool size, say).
    public static func openForService(at path: String, limits: Limits = Limits(), embedderURL: String? = nil,
                                      store options: StoreOptions? = nil) throws -> (kb: KnowledgeBase, created: Bool) {
        if isDatabaseURL(path) {
            return (try open(at: path, create: true, limits: limits, store: options, embedderURL: embedderURL), false)
        }
        let absolute = SourcePaths.absolute(path)
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

    /// Opens (or creates) the index for an ingest, with its embedder. The embedder is loaded
    /// before a new index file is created, so a missing model leaves no empty index behind.
    public static func openForIngest(at path: String, embedder choice: EmbedderChoice?, embedderURL: String? = nil)
        async throws -> (kb: KnowledgeBase, embedder: (any Embedder)?, record: EmbedderRecord) {
        if isDatabaseURL(path) {
            // A database is only known to hold an index once it has been asked.
            do {
                let kb = try open(at: path, create: false, embedderURL: embedderURL)
                let (embedder, record) = try await kb.embedder(choice)
                return (kb, embedder, record)
            } catch let error as KBError where error.code == .noIndex {}
        } else if FileManager.default.fileExists(atPath: SourcePaths.absolute(path)) {
            let kb = try open(at: path, create: false, embedderURL: embedderURL)
            let (embedder, record) = try await kb.embedder(choice)
            return (kb, embedder, record)
        }
        let resolved = choice ?? .newIndexDefault()
        let embedder = try await resolved.make()
        let kb = try open(at: path, create: true, embedderURL: embedderURL)
        return (kb, embedder, EmbedderChoice.record(for: embedder, choice: resolved))
    }

    /// The index used when none is named: `$KB_DB`, else `$XDG_DATA_HOME/kb/kb.sqlite`,
    /// else `~/.local/share/kb/kb.sqlite`.
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        Locations.defaultIndex(environment)
    }

    /// What the index holds (any caller: counts, no content).
    public func status(as caller: Caller) async throws -> IndexStatus { try await store.snapshot { try $0.status() } }

    /// SQLite's (or the database's) own consistency check of the index: "ok", or what is damaged.
    /// The admin's only.
    public func integrityCheck(as caller: Caller) async throws -> String {
        try caller.requireAdmin("check the index's integrity")
        return try await store.snapshot { try $0.integrityCheck() }
    }
}

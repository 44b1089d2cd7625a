public import Foundation
public import KBCore
public import KBStore
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO

/// A knowledge base in PostgreSQL with the pgvector extension, for several `kb serve` replicas
/// on one database: every read is one REPEATABLE READ transaction (a consistent view), vectors
/// are ranked by the database (`vector` columns, exact by default, an HNSW index when built), and
/// nothing is cached per process, so each replica sees the others' writes in its next request.
/// Writes take one advisory lock for their transaction (one writer at a time, as in SQLite), so
/// rules such as "identical memories collapse into one" hold across replicas.
///
/// ```swift
/// let store = try await PostgresStore.open(url: "postgres://kb@127.0.0.1:5432/kb", create: true)
/// ```
public final class PostgresStore: TransactionalStore {
    /// The URL without its password.
    public let location: String

    /// The connection pool, made anew once the server is back after an outage (the old pool's
    /// connections are dead and it backs off before it tries again), with the task running it.
    /// Its connections' session settings are kept with it (a new pool numbers its connections anew).
    private let pool: NIOLockedValueBox<(client: PostgresClient, running: Task<Void, Never>, settings: ConnectionSettings)>
    private let poolConfiguration: PostgresClient.Configuration
    /// The server as a probe reaches it (outside the pool).
    let server: PostgresConnection.Configuration
    /// Since when the server has been unreachable, when it is (nil: reachable, as far as known).
    private let unreachable = NIOLockedValueBox<Date?>(nil)
    let threads: NIOThreadPool
    let logger: Logger
    /// The schema made ready (created or migrated) before the first transaction; its value is the
    /// text search configuration the index records.
    private let ready: Task<String, any Error>

    /// Whether a `--db` value names a PostgreSQL database rather than a file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// kb's keyword analysis, for an index that records `auto` (`PostgresKeywords`).
    private let analyzer: (any KeywordAnalyzer)?

    /// Keyword blocks this process keeps (`StoreOptions.keywordCacheMegabytes`).
    let blockCache: KeywordBlockCache?
    /// Bitmaps of the large id sets searches filter by (a bot's snippets), for the keyword walk.
    let idBitmaps = IDBitmapCache()

    private init(location: String, server: PostgresConnection.Configuration, create: Bool, textSearchConfig: String,
                 analyzer: (any KeywordAnalyzer)?, configuration: PostgresClient.Configuration, threads: NIOThreadPool, logger: Logger,
                 keywordCacheMegabytes: Int) {
        self.location = location
        self.blockCache = keywordCacheMegabytes > 0 ? KeywordBlockCache(megabytes: keywordCacheMegabytes) : nil
        self.analyzer = analyzer
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let settings = ConnectionSettings()
        self.pool = NIOLockedValueBox((client, Task { await client.run() }, settings))
        self.poolConfiguration = configuration
        self.server = server
        self.threads = threads
        self.logger = logger
        self.ready = Task {
            func prepare() async throws -> String {
                try await Self.run(client: client, settings: settings, server: server, threads: threads, logger: logger, location: location,
                                   write: true, connectionWait: Self.connectionWait) { session in
                    try PostgresSchema.prepare(session, create: create, location: location, textSearchConfig: textSearchConfig)
                }
            }
            try await Self.probe(server, create: create, logger: logger, location: location)
            return try await prepare()
        }
    }

    deinit {
        pool.withLockedValue { $0.running.cancel() }
        threads.shutdownGracefully { _ in }
    }

    /// How keywords are analysed, as the index records it: `auto` (kb's own analysis) or a text
    /// search configuration, chosen when the index was made.
    public func textSearchConfig() async throws -> String { try await ready.value }

    func keywords() async throws -> PostgresKeywords { try PostgresKeywords(config: try await ready.value, analyzer: analyzer) }

    /// Prepares to connect to the database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`; the
    /// password may also come from `PGPASSWORD`), creating kb's tables when `create` is true and
    /// migrating older ones forward, before the first transaction (so connection errors surface
    /// there). `connections` bounds the pool (and the threads that wait on it); `keywordCacheMegabytes` the keyword blocks kept in memory. `textSearchConfig`
    /// is how a new index analyses keywords: `auto` (kb's own analysis, given by `analyzer`) or a
    /// text search configuration of the server's.
    public static func open(url: String, create: Bool, connections: Int = 8, keywordCacheMegabytes: Int = StoreOptions.defaultKeywordCacheMegabytes,
                            textSearchConfig: String = "auto",
                            analyzer: (any KeywordAnalyzer)? = nil,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresStore {
        guard let parts = URLComponents(string: url), isURL(url), let host = parts.host, !host.isEmpty else {
            throw KBError(.invalidArgument, "\(url) is not a PostgreSQL URL. Use postgres://USER@HOST:PORT/DATABASE.")
        }
        let database = String(parts.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else {
            throw KBError(.invalidArgument, "\(url) names no database. Use postgres://USER@HOST:PORT/DATABASE.")
        }
        let user = parts.user ?? environment["PGUSER"] ?? "postgres"
        let password = parts.password ?? environment["PGPASSWORD"]
        var safe = parts
        safe.password = nil
        let location = safe.string ?? "postgres://\(host)/\(database)"
        guard (1...1_000).contains(connections) else {
            throw KBError(.invalidArgument, "The PostgreSQL pool size (--db-pool or KB_DB_POOL) must be between 1 and 1000; got \(connections).")
        }
        // How long a new connection may take (`KB_DB_CONNECT_TIMEOUT`, seconds; PostgresNIO's 10 by
        // default): a busy server on a loaded machine can take longer to accept one.
        var connectSeconds: Int64 = 10
        if let text = environment["KB_DB_CONNECT_TIMEOUT"], !text.isEmpty {
            guard let seconds = Int64(text), (1...600).contains(seconds) else {
                throw KBError(.invalidArgument, "KB_DB_CONNECT_TIMEOUT is \"\(text)\"; give whole seconds from 1 to 600 (the default is 10).")
            }
            connectSeconds = seconds
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: parts.port ?? 5432, username: user, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(connectSeconds)
        configuration.options.maximumConnections = connections
        configuration.options.minimumConnections = 0
        var logger = Logger(label: "kb.postgres")
        logger.logLevel = .critical
        let threads = NIOThreadPool(numberOfThreads: connections)
        threads.start()
        guard textSearchConfig.range(of: "^[A-Za-z_][A-Za-z0-9_]{0,62}$", options: .regularExpression) != nil else {
            throw KBError(.invalidArgument, "\(textSearchConfig) is not a text search configuration name (e.g. simple, english).")
        }
        var server = PostgresConnection.Configuration(
            host: host, port: parts.port ?? 5432, username: user, password: password, database: database, tls: .disable)
        server.options.connectTimeout = .seconds(connectSeconds)
        return PostgresStore(location: location, server: server, create: create, textSearchConfig: textSearchConfig,
                             analyzer: analyzer, configuration: configuration, threads: threads, logger: logger,
                             keywordCacheMegabytes: keywordCacheMegabytes)
    }

    // MARK: - Transactions

    /// Runs `body` on one of the store's threads inside one transaction on a leased connection:
    /// REPEATABLE READ READ ONLY for reads; for writes, after taking the write lock.
    ///
    /// While the server cannot be reached (a connection failed, or none came within
    /// `connectionWait`), every call fails at once with `databaseUnavailable` — after one probe
    /// that finds it still gone — instead of waiting on the pool; once a probe reaches it, a new
    /// pool serves.
    func run<T: Sendable>(write: Bool, _ body: @Sendable (PGSession) throws -> T) async throws -> T {
        _ = try await ready.value
        if unreachable.withLockedValue({ $0 }) != nil { try await reconnect() }
        let (client, settings) = pool.withLockedValue { ($0.client, $0.settings) }
        do {
            return try await Self.run(client: client, settings: settings, server: server, threads: threads, logger: logger, location: location,
                                      write: write, connectionWait: Self.connectionWait, body)
        } catch let error as KBError where error.code == .databaseUnavailable {
            unreachable.withLockedValue { $0 = $0 ?? Date() }
            throw error
        }
    }

    /// How often a call still waiting for a connection checks that the server answers at all.
    static let connectionWait: Duration = .seconds(2)

    /// Probes the server; when it answers, a new pool replaces the one that lost it (the old one,
    /// its connections dead and backing off before it tries again, serves what it already took
    /// and is closed a minute later).
    private func reconnect() async throws {
        do {
            try await Self.probe(server, logger: logger)
        } catch {
            throw KBError(.databaseUnavailable, "Cannot reach the database \(location) (down since \(unreachable.withLockedValue { $0 }.map { ISO8601DateFormatter().string(from: $0) } ?? "now")). kb tries again with the next request.", cause: error)
        }
        let fresh = PostgresClient(configuration: poolConfiguration, backgroundLogger: logger)
        let old = pool.withLockedValue { pool -> Task<Void, Never>? in
            guard unreachable.withLockedValue({ $0 }) != nil else { return nil }   // another call reconnected first
            let old = pool.running
            pool = (fresh, Task { await fresh.run() }, ConnectionSettings())
            unreachable.withLockedValue { $0 = nil }
            return old
        }
        if let old {
            Task {
                try? await Task.sleep(for: .seconds(60))
                old.cancel()
            }
        }
    }

    /// How many probes in a row must time out before a call waiting for a connection gives up.
    static let slowProbes = 4

    /// Whether `error` is a connection attempt that ran out of time (rather than one refused).
    static func isTimeout(_ error: any Error) -> Bool {
        let channelError = (error as? PSQLError)?.underlying as? ChannelError ?? error as? ChannelError
        if case .connectTimeout? = channelError { return true }
        return false
    }

    /// Why a probe failed, in a few words (PSQLError's own description hides its cause).
    static func reason(_ error: any Error) -> String {
        if isTimeout(error) { return "no connection within \(slowProbes) tries of 5 s" }
        if let underlying = (error as? PSQLError)?.underlying { return String(describing: underlying) }
        return String(describing: error)
    }

    /// A connection made and closed outside the pool: an error when the server does not answer
    /// (one that answers with an error — too many connections, starting up — does answer).
    static func probe(_ server: PostgresConnection.Configuration, logger: Logger) async throws {
        var server = server
        server.options.connectTimeout = .seconds(5)
        do {
            let connection = try await PostgresConnection.connect(configuration: server, id: 0, logger: logger)
            try? await connection.close()
        } catch let error as PSQLError where error.serverInfo != nil && error.serverInfo?[.sqlState] != "57P03" {
            return
        }
    }

    private static func run<T: Sendable>(client: PostgresClient, settings: ConnectionSettings, server: PostgresConnection.Configuration, threads: NIOThreadPool,
                                         logger: Logger, location: String, write: Bool, connectionWait: Duration,
                                         _ body: @Sendable (PGSession) throws -> T) async throws -> T {
        try await wrap(location) {
            try await withoutActuallyEscaping(body) { body in
                // The thread pool keeps its work item a little after the work is done; it holds
                // `lent`, which lets go of `body` before this block returns.
                let lent = Lent(body)
                defer { lent.release() }
                // While no connection is given, the server is probed every `connectionWait`: a
                // server that does not answer ends the call (the pool would retry it for a long
                // while); a busy pool is waited for. A connection given runs the transaction to its end.
                let leased = NIOLockedValueBox(false)
                return try await withThrowingTaskGroup(of: T?.self) { group in
                    group.addTask {
                        try await client.withConnection { connection in
                            leased.withLockedValue { $0 = true }
                            return try await Self.transact(connection, settings: settings, lent: lent, threads: threads, logger: logger, write: write)
                        }
                    }
                    group.addTask {
                        // A probe that is refused ends the wait at once; one that times out may
                        // be this machine too busy to connect in time (a server alive but slow),
                        // so only `slowProbes` of them in a row do.
                        var timedOut = 0
                        while true {
                            try await Task.sleep(for: connectionWait)
                            guard !leased.withLockedValue({ $0 }) else { return nil }
                            do {
                                try await probe(server, logger: logger)
                                timedOut = 0
                            } catch where Self.isTimeout(error) && timedOut + 1 < slowProbes {
                                timedOut += 1
                            } catch {
                                throw KBError(.databaseUnavailable, "The database \(location) does not answer (\(Self.reason(error))); kb tries again with the next request.", cause: error)
                            }
                        }
                    }
                    while let result = try await group.next() {
                        guard let result else { continue }
                        group.cancelAll()
                        return result
                    }
                    throw CancellationError()
                }
            }
        }
    }

    /// One transaction on a leased connection, on one of the store's threads.
    private static func transact<T: Sendable>(_ connection: PostgresConnection, settings: ConnectionSettings, lent: Lent<@Sendable (PGSession) throws -> T>,
                                              threads: NIOThreadPool, logger: Logger, write: Bool) async throws -> T {
        let session = PGSession(connection, logger: logger, settled: settings.of(connection), statements: settings.statements)
        return try await threads.runIfActive {
            let body = try lent.take()
            try session.execute(write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            do {
                if write { try session.execute("SELECT pg_advisory_xact_lock(\(Self.writeLock))") }
                let result = try body(session)
                try session.execute("COMMIT")
                settings.commit(session)
                return result
            } catch {
                try? session.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// The advisory lock every write holds (an arbitrary constant: "kb" in ASCII, and 1).
    static let writeLock: Int64 = 0x6B62_0001

    public func snapshot<T: Sendable>(_ body: @Sendable (any IndexSnapshot) throws -> T) async throws -> T {
        let location = location, keywords = try await keywords()
        return try await run(write: false) { session in
            try body(PostgresSnapshot(session: session, location: location, keywords: keywords, blockCache: blockCache, idBitmaps: idBitmaps))
        }
    }

    /// Runs `body` in one write transaction (holding the write lock) on one of the store's threads;
    /// then, when the keyword tail or its deletions have outgrown their limit, merges them into
    /// the blocks in the same transaction (a merge that fails is undone alone and left to the next
    /// write: the write itself stands).
    public func transaction<T: Sendable>(_ body: @Sendable (PostgresTransaction) throws -> T) async throws -> T {
        try await transaction(preparing: [], body)
    }

    /// `transaction`, with the keyword analyses of `documents`' snippets made first, on every core,
    /// before the transaction begins (so that another batch's statements can run meanwhile).
    func transaction<T: Sendable>(preparing documents: [SourceDocument], _ body: @Sendable (PostgresTransaction) throws -> T) async throws -> T {
        let keywords = try await keywords(), bulk = bulkLoad.withLockedValue { $0 }
        var prepared: [String: [PostgresKeywords.Analysis]]?
        if let analyzer = keywords.analyzer, documents.count > 1 {
            prepared = try await threads.runIfActive { PostgresKeywords.analyses(of: documents, analyzer) }
        }
        let analyses = prepared
        return try await run(write: true) { session in
            if bulk != nil { try session.execute("SET LOCAL kb.bulk_keywords = 'on'") }
            var transaction = PostgresTransaction(session: session, keywords: keywords, bulk: bulk)
            transaction.prepared = analyses
            let result = try body(transaction)
            if bulk == nil {
                try session.execute("SAVEPOINT kb_keyword_merge")
                do {
                    try PostgresKeywordIndex.mergeIfDue(session)
                    try session.execute("RELEASE SAVEPOINT kb_keyword_merge")
                } catch {
                    try session.execute("ROLLBACK TO SAVEPOINT kb_keyword_merge")
                }
            }
            return result
        }
    }

    /// Sources copied from another index: a batch that touches nothing stored goes in a handful of
    /// statements (`PostgresTransaction.copyIn`), its keyword analysis made on every core first.
    public func copyIn(_ documents: [(document: SourceDocument, vectors: [[Float]]?, ingestedAt: Date)], embedder: EmbedderRecord) async throws -> [WriteEffect] {
        try await transaction(preparing: documents.map(\.document)) { try $0.copyIn(documents, embedder: embedder) }
    }

    public func importMemories(_ entries: [(write: MemoryWrite, history: [MemoryVersion])], replacing: Bool) async throws -> [(MemoryImportOutcome, WriteEffect?)] {
        try await transaction(preparing: entries.map(\.write.document)) { try $0.importMemories(entries, replacing: replacing) }
    }

    /// The keyword postings of a bulk load in progress (`beginBulkLoad`).
    private let bulkLoad = NIOLockedValueBox<KeywordBulkLoad?>(nil)

    /// Merges the keyword tail and deletions into the blocks and builds every term's blocks anew,
    /// then checkpoints when the role may.
    public func optimizeKeywordIndex() async throws -> KeywordIndexReport {
        var report = try await run(write: true) { session in try PostgresKeywordIndex.merge(session, rebuild: true) }
        // Every word's blocks written anew: to disk now, not by the timed checkpoint while serving.
        report.checkpoint = try await checkpoint(after: "the rewritten keyword index")
        return report
    }

    /// With kb's own analysis, the snippets copied from now on write no keyword tail or
    /// statistics: `finishBulkLoad` writes their blocks and statistics at once. The index records
    /// that a copy is under way until then.
    public func beginBulkLoad() async throws -> Bool {
        guard try await keywords().analyzer != nil else { return false }
        try await run(write: true) { session in
            try PostgresSchema.setMeta("keyword_bulk", "started \(ISO8601DateFormatter().string(from: Date()))", session)
        }
        bulkLoad.withLockedValue { $0 = KeywordBulkLoad() }
        return true
    }

    public func finishBulkLoad() async throws -> CheckpointReport? {
        guard let bulk = bulkLoad.withLockedValue({ $0 }) else { return nil }
        try await run(write: true) { session in
            _ = try bulk.finish(session)
            try session.execute("DELETE FROM kb_meta WHERE key = 'keyword_bulk'")
            try session.execute("ANALYZE")
        }
        bulkLoad.withLockedValue { $0 = nil }
        return try await checkpoint(after: "the copy")
    }

    /// Asks the server to write every page changed so far to disk now (`CHECKPOINT`), after a
    /// large write and before replicas serve it; when the role may not (neither a superuser nor,
    /// on PostgreSQL 15 and later, a member of `pg_checkpoint`), says so and what to run instead.
    /// Read-only: it changes no data, and holds no write lock while the server writes.
    func checkpoint(after what: String) async throws -> CheckpointReport {
        try await run(write: false) { session in
            let role = try session.value(String.self, "SELECT current_user::text") ?? "?"
            // pg_has_role on an OID: NULL (not an error) where pg_checkpoint does not exist (before 15).
            let may = try session.value(Bool.self, """
                SELECT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false)
                    OR coalesce(pg_has_role(current_user, to_regrole('pg_checkpoint')::oid, 'USAGE'), false)
                """) ?? false
            guard may else {
                return CheckpointReport(done: false, note: "The role \(role) may not run CHECKPOINT, so the server writes \(what) to disk over the "
                    + "next minutes while it serves, and answers slower meanwhile. Run CHECKPOINT as a superuser before serving, "
                    + "or GRANT pg_checkpoint TO \(role) (PostgreSQL 15 and later).")
            }
            let started = Date()
            try session.execute("CHECKPOINT")
            return CheckpointReport(done: true, seconds: Date().timeIntervalSince(started))
        }
    }

    static func wrap<T>(_ location: String, _ body: () async throws -> T) async throws -> T {
        try await KBError.converting({ kbError($0, location: location) }, body)
    }

    static func kbError(_ error: any Error, location: String) -> KBError {
        if let error = error as? KBError { return error }
        // The pool's own errors (its circuit breaker open while the server is gone): its type is in
        // a module PostgresNIO marks unstable (_ConnectionPoolModule), so it is told by name.
        if String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError") {
            return KBError(.databaseUnavailable, "No connection to the database \(location) could be made: \(error). kb tries again with the next request.", cause: error)
        }
        if error is PGSession.ConnectionLost {
            return KBError(.databaseUnavailable, "Cannot reach the database \(location): \(error). kb tries again with the next request.", cause: error)
        }
        if let error = error as? PGSession.ServerError {
            if Self.unavailableStates.contains(error.state) {
                return KBError(.databaseUnavailable, "The database \(location) is restarting or went away (SQLSTATE \(error.state)). Try again in a few seconds.", cause: error)
            }
            return KBError(.database, "The database \(location) could not be used: \(error).", cause: error)
        }
        if let error = error as? PSQLError {
            if error.code == .connectionError || error.code == .serverClosedConnection || error.code == .clientClosedConnection
                || error.code == .poolClosed {
                return KBError(.databaseUnavailable, "Cannot reach the database \(location): \(String(reflecting: error)). Check that PostgreSQL runs there and the URL is right.", cause: error)
            }
            // The server shutting down, crashed or starting up; connections lost.
            if let state = error.serverInfo?[.sqlState], Self.unavailableStates.contains(state) {
                return KBError(.databaseUnavailable, "The database \(location) is restarting or went away (SQLSTATE \(state)). Try again in a few seconds.", cause: error)
            }
            if let message = error.serverInfo?[.message] {
                return KBError(.database, "The database \(location) could not be used: \(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?")).", cause: error)
            }
            return KBError(.database, "The database \(location) could not be used: \(String(reflecting: error)).", cause: error)
        }
        return KBError(.database, "The database \(location) could not be used: \(error).", cause: error)
    }

    /// SQLSTATEs of a server shutting down, crashed or starting up, and of connections lost.
    static let unavailableStates: Set<String> = ["57P01", "57P02", "57P03", "08000", "08003", "08006"]

    /// Connects once, outside the pool (whose errors hide the cause), so that an unreachable
    /// server, a refused login or a missing database gets its own message; with `create`, a
    /// missing database is created.
    static func probe(_ server: PostgresConnection.Configuration, create: Bool, logger: Logger, location: String) async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: server, id: 0, logger: logger)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "3D000" {
            guard create else {
                throw KBError(.noIndex, "No database \(server.database ?? "?") at \(location). Create one with `kb ingest PATH… --db \(location)` (or createdb), or point --db at an existing index.")
            }
            try await createDatabase(server, logger: logger, location: location)
            return
        } catch let error as PSQLError where error.serverInfo != nil {
            throw KBError(.database, "PostgreSQL at \(location) refused the connection: \(error.serverInfo?[.message] ?? "?") (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?")). Check the user, password (PGPASSWORD) and database in the URL.", cause: error)
        } catch {
            throw KBError(.database, "Cannot reach PostgreSQL at \(location): \(String(describing: error.self is PSQLError ? (error as! PSQLError).underlying ?? error : error)). Check that the server runs and the host and port are right.", cause: error)
        }
        try? await connection.close()
    }

    /// Creates the database `server` names, through the server's `postgres` database (the user
    /// needs the CREATEDB privilege; the error says so otherwise).
    static func createDatabase(_ server: PostgresConnection.Configuration, logger: Logger, location: String) async throws {
        guard let name = server.database else { return }
        var maintenance = server
        maintenance.database = "postgres"
        try await wrap(location) {
            let connection = try await PostgresConnection.connect(configuration: maintenance, id: 0, logger: logger)
            do {
                let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(quoted)"), logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" {
                // made meanwhile by another process
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
        }
    }

    // MARK: - Keyword language

    /// The text search configuration is chosen when the index is made (`KB_TEXT_SEARCH`); kb does
    /// not rebuild a PostgreSQL index's keyword data for another one.
    public var retunesKeywordLanguage: Bool { false }

    @discardableResult
    public func setKeywordLanguage(_ language: KeywordLanguage) async throws -> Bool {
        let config = try await textSearchConfig()
        guard Self.keywordLanguage(textSearchConfig: config) != language else { return false }
        throw KBError(.unsupportedMode,
            "This PostgreSQL index searches keywords with the '\(config)' text search configuration, chosen when it was made. "
          + "Make a new index with KB_TEXT_SEARCH=\(Self.textSearchConfig(for: language)) for \(language.rawValue) keywords.")
    }

    /// The keyword language a text search configuration stands for.
    static func keywordLanguage(textSearchConfig config: String) -> KeywordLanguage {
        switch config {
        case PostgresKeywords.kbAnalysis: .auto
        case "english": .english
        case "russian": .russian
        case "arabic": .arabic
        default: .simple
        }
    }

    /// The text search configuration closest to a keyword language (`auto` is kb's own analysis;
    /// PostgreSQL has no Ukrainian stemmer).
    static func textSearchConfig(for language: KeywordLanguage) -> String {
        switch language {
        case .auto: PostgresKeywords.kbAnalysis
        case .english: "english"
        case .russian: "russian"
        case .arabic: "arabic"
        case .ukrainian, .simple: "simple"
        }
    }
}

/// A closure lent to another thread for the length of one call.
///
/// @unchecked Sendable: `take` runs on the pool's thread while the lender awaits it; `release`
/// runs after that; the lock orders them.
private final class Lent<Body>: @unchecked Sendable {
    private let lock = NSLock()
    private var body: Body?

    init(_ body: Body) { self.body = body }

    func take() throws -> Body {
        guard let body = lock.withLock({ self.body }) else { throw CancellationError() }
        return body
    }

    func release() { lock.withLock { body = nil } }
}

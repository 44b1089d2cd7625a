public import Foundation
import KBCore
public import KBStore
import Logging
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

    let client: PostgresClient
    let threads: NIOThreadPool
    let logger: Logger
    private let running: Task<Void, Never>
    /// The schema made ready (created or migrated) before the first transaction; its value is the
    /// text search configuration the index records.
    private let ready: Task<String, any Error>

    /// Whether a `--db` value names a PostgreSQL database rather than a file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// kb's keyword analysis, for an index that records `auto` (`PostgresKeywords`).
    private let analyzer: (any KeywordAnalyzer)?

    private init(location: String, server: PostgresConnection.Configuration, create: Bool, textSearchConfig: String,
                 analyzer: (any KeywordAnalyzer)?, client: PostgresClient, threads: NIOThreadPool, logger: Logger) {
        self.location = location
        self.analyzer = analyzer
        self.client = client
        self.threads = threads
        self.logger = logger
        self.running = Task { await client.run() }
        self.ready = Task {
            func prepare() async throws -> String {
                try await Self.run(client: client, threads: threads, logger: logger, location: location, write: true) { session in
                    try PostgresSchema.prepare(session, create: create, location: location, textSearchConfig: textSearchConfig)
                }
            }
            try await Self.probe(server, create: create, logger: logger, location: location)
            return try await prepare()
        }
    }

    deinit {
        running.cancel()
        threads.shutdownGracefully { _ in }
    }

    /// How keywords are analysed, as the index records it: `auto` (kb's own analysis) or a text
    /// search configuration, chosen when the index was made.
    public func textSearchConfig() async throws -> String { try await ready.value }

    func keywords() async throws -> PostgresKeywords { try PostgresKeywords(config: try await ready.value, analyzer: analyzer) }

    /// Prepares to connect to the database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`; the
    /// password may also come from `PGPASSWORD`), creating kb's tables when `create` is true and
    /// migrating older ones forward, before the first transaction (so connection errors surface
    /// there). `connections` bounds the pool (and the threads that wait on it). `textSearchConfig`
    /// is how a new index analyses keywords: `auto` (kb's own analysis, given by `analyzer`) or a
    /// text search configuration of the server's.
    public static func open(url: String, create: Bool, connections: Int = 8, textSearchConfig: String = "auto",
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
        var configuration = PostgresClient.Configuration(
            host: host, port: parts.port ?? 5432, username: user, password: password, database: database, tls: .disable)
        configuration.options.maximumConnections = connections
        configuration.options.minimumConnections = 0
        var logger = Logger(label: "kb.postgres")
        logger.logLevel = .critical
        let threads = NIOThreadPool(numberOfThreads: connections)
        threads.start()
        guard textSearchConfig.range(of: "^[A-Za-z_][A-Za-z0-9_]{0,62}$", options: .regularExpression) != nil else {
            throw KBError(.invalidArgument, "\(textSearchConfig) is not a text search configuration name (e.g. simple, english).")
        }
        let server = PostgresConnection.Configuration(
            host: host, port: parts.port ?? 5432, username: user, password: password, database: database, tls: .disable)
        return PostgresStore(location: location, server: server, create: create, textSearchConfig: textSearchConfig,
                             analyzer: analyzer, client: PostgresClient(configuration: configuration, backgroundLogger: logger),
                             threads: threads, logger: logger)
    }

    // MARK: - Transactions

    /// Runs `body` on one of the store's threads inside one transaction on a leased connection:
    /// REPEATABLE READ READ ONLY for reads; for writes, after taking the write lock.
    func run<T: Sendable>(write: Bool, _ body: @Sendable (PGSession) throws -> T) async throws -> T {
        _ = try await ready.value
        return try await Self.run(client: client, threads: threads, logger: logger, location: location, write: write, body)
    }

    private static func run<T: Sendable>(client: PostgresClient, threads: NIOThreadPool, logger: Logger, location: String,
                                                 write: Bool, _ body: @Sendable (PGSession) throws -> T) async throws -> T {
        try await wrap(location) {
            try await client.withConnection { connection in
                let session = PGSession(connection, logger: logger)
                return try await withoutActuallyEscaping(body) { body in
                    // The thread pool keeps its work item a little after the work is done; it holds
                    // `lent`, which lets go of `body` before this block returns.
                    let lent = Lent(body)
                    defer { lent.release() }
                    return try await threads.runIfActive {
                        let body = try lent.take()
                        try session.execute(write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                        do {
                            if write { try session.execute("SELECT pg_advisory_xact_lock(\(Self.writeLock))") }
                            let result = try body(session)
                            try session.execute("COMMIT")
                            return result
                        } catch {
                            try? session.execute("ROLLBACK")
                            throw error
                        }
                    }
                }
            }
        }
    }

    /// The advisory lock every write holds (an arbitrary constant: "kb" in ASCII, and 1).
    static let writeLock: Int64 = 0x6B62_0001

    public func snapshot<T: Sendable>(_ body: @Sendable (any IndexSnapshot) throws -> T) async throws -> T {
        let location = location, keywords = try await keywords()
        return try await run(write: false) { session in
            try body(PostgresSnapshot(session: session, location: location, keywords: keywords))
        }
    }

    /// Runs `body` in one write transaction (holding the write lock) on one of the store's threads.
    public func transaction<T: Sendable>(_ body: @Sendable (PostgresTransaction) throws -> T) async throws -> T {
        let keywords = try await keywords()
        return try await run(write: true) { session in try body(PostgresTransaction(session: session, keywords: keywords)) }
    }

    static func wrap<T>(_ location: String, _ body: () async throws -> T) async throws -> T {
        try await KBError.converting({ kbError($0, location: location) }, body)
    }

    static func kbError(_ error: any Error, location: String) -> KBError {
        if let error = error as? PSQLError {
            if error.code == .connectionError || error.code == .serverClosedConnection || error.code == .clientClosedConnection {
                return KBError(.database, "Cannot reach the database \(location): \(String(reflecting: error)). Check that PostgreSQL runs there and the URL is right.", cause: error)
            }
            if let message = error.serverInfo?[.message] {
                return KBError(.database, "The database \(location) could not be used: \(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?")).", cause: error)
            }
            return KBError(.database, "The database \(location) could not be used: \(String(reflecting: error)).", cause: error)
        }
        return KBError(.database, "The database \(location) could not be used: \(error).", cause: error)
    }

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

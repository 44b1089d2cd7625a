import Foundation
public import GRDB
import KBCore
public import KBStore

/// One knowledge base: a single SQLite file in WAL mode, read and written through a
/// `DatabasePool` (readers never block the writer, and never see a half-written source).
/// Vectors are ranked in memory: the searched embedder's vectors are loaded once into a
/// `VectorMatrix` and follow every write this process makes (see `VectorCache`).
///
/// ```swift
/// let store = try SQLiteStore.open(at: "/tmp/kb.sqlite", create: true)
/// try await store.replace(document, vectors: nil, embedder: .none)
/// let hits = try await store.snapshot { try $0.keywordSearch(SearchQuery("venus")) }
/// ```
public final class SQLiteStore: TransactionalStore {
    public let path: String
    public var location: String { path }
    let pool: DatabasePool
    /// The searched embedder's vectors in memory: everything but memories, and memories in a
    /// matrix of their own (a bot's knowledge scan never reads the memories' rows, a user's
    /// recall gathers theirs).
    let vectors = VectorCache(rows: .knowledge)
    let memoryVectors = VectorCache(rows: .memories)
    let keywords = KeywordCache()
    /// Those copies saved beside the index file, for the next process that opens it.
    let saved: SavedSearchData

    private init(path: String, pool: DatabasePool) {
        self.path = path
        self.pool = pool
        saved = SavedSearchData(indexPath: path)
    }

    /// Opens the index at `path`, migrating an older schema forward.
    ///
    /// - Parameter create: make the file (and its folder) when it does not exist; otherwise
    ///   a missing file is an error that says how to create one.
    public static func open(at path: String, create: Bool) throws -> SQLiteStore {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = fm.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue {
            throw KBError(.notAnIndex, "\(path) is a folder, not an index file. Pass the file, e.g. --db \(path)/kb.sqlite.")
        }
        if !exists {
            guard create else {
                throw KBError(.noIndex,
                    "No index at \(path). Create one with `kb ingest PATH…`, or point --db (or KB_DB) at an existing index.")
            }
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty {
                do {
                    try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
                } catch {
                    throw KBError(.database, "Cannot create the folder \(folder) for the index: \(error.localizedDescription). Choose another place with --db.")
                }
            }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        // Reads run on the readers' own queues (never on Swift's cooperative pool): two per core,
        // so that a read waiting on the disk does not hold up the cores.
        configuration.maximumReaderCount = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Deleted text is overwritten with zeros in the file, not left in free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            db.add(tokenizer: FoldingTokenizer.self)
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw KBError(.notAnIndex, "Not a kb index (not an SQLite database): \(path). Point --db at a kb index, or at a new file name.")
        } catch {
            throw KBError(.database, "Cannot open \(path): \(error). Check the path and its permissions.", cause: error)
        }
        let store = SQLiteStore(path: path, pool: pool)
        try store.prepareSchema()
        return store
    }

    private func prepareSchema() throws {
        do {
            let isNew = try pool.write { db in
                let hasMeta = try db.tableExists("kb_meta")
                if !hasMeta {
                    let tableCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table'") ?? 0
                    if tableCount > 0 {
                        throw KBError(.notAnIndex, "Not a kb index (no kb_meta table): \(path). Point --db at a kb index, or at a new file name.")
                    }
                }
                return !hasMeta
            }
            let migrator = Schema.migrator
            let superseded = try pool.read { db in try migrator.hasBeenSuperseded(db) }
            if superseded {
                let recorded = try pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM kb_meta WHERE key = 'schema_version'") } ?? "?"
                throw KBError(.newerSchema,
                    "\(path) was written by a newer kb (schema \(recorded); this kb knows up to \(Schema.version)). Upgrade kb to open it.")
            }
            try migrator.migrate(pool)
            try pool.write { db in
                try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               arguments: [String(Schema.version)])
                try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES ('created_at', ?) ON CONFLICT(key) DO NOTHING",
                               arguments: [ISO8601DateFormatter().string(from: Date())])
                // A new index analyses each word by its script's rules (`KeywordLanguage.auto`);
                // an index made before keeps the language it records (English when none).
                if isNew {
                    try db.execute(sql: """
                        DROP TABLE snippets_fts;
                        CREATE VIRTUAL TABLE snippets_fts USING fts5(text, title, heading_path, keywords, tokenize = '\(KeywordLanguage.auto.ftsTokenizer)');
                        INSERT INTO kb_meta (key, value) VALUES ('\(SQLiteStore.languageKey)', '\(KeywordLanguage.auto.rawValue)');
                        """)
                }
            }
        } catch let error as KBError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw KBError(.notAnIndex, "Not a kb index (not an SQLite database): \(path). Point --db at a kb index, or at a new file name.")
        } catch {
            throw KBError(.database, "Cannot prepare the index \(path): \(error)", cause: error)
        }
    }

    /// A consistent view of the index for the length of one read transaction: every query made
    /// through it sees the same state, whatever other connections write meanwhile. Only valid
    /// inside the `snapshot` call that hands it out.
    public struct Snapshot: IndexSnapshot, SQLiteReads {
        let db: Database
        /// The index file.
        public let path: String
        public var location: String { path }
        /// The store's vectors in memory (memories' apart).
        let vectors: VectorCache
        let memoryVectors: VectorCache
        /// The store's keyword postings in memory.
        let keywords: KeywordCache
        /// The copies saved beside the index file.
        let saved: SavedSearchData
    }

    /// Runs `body` in one read transaction on one of GRDB's reader queues — never on the
    /// caller's thread, so never on Swift's cooperative pool — and awaits its result.
    ///
    /// ```swift
    /// let (record, generation) = try await store.snapshot { try ($0.embedderRecord(), $0.generation()) }
    /// ```
    public func snapshot<T: Sendable>(_ body: @Sendable (any IndexSnapshot) throws -> T) async throws -> T {
        let path = self.path, vectors = self.vectors, memoryVectors = self.memoryVectors, keywords = self.keywords, saved = self.saved
        return try await wrap {
            try await pool.read { db in
                try body(Snapshot(db: db, path: path, vectors: vectors, memoryVectors: memoryVectors, keywords: keywords, saved: saved))
            }
        }
    }

    /// Runs `body` in one write transaction on GRDB's writer queue (never on the caller's thread):
    /// all of it is committed, or none. Once it is committed, still on the writer queue (so in
    /// the order of the writes), the vectors in memory follow what it did.
    public func transaction<T: Sendable>(_ body: @Sendable (SQLiteTransaction) throws -> T) async throws -> T {
        let vectors = self.vectors, memoryVectors = self.memoryVectors, keywords = self.keywords, saved = self.saved
        return try await wrap {
            try await pool.writeWithoutTransaction { db in
                let transaction = SQLiteTransaction(db: db)
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(transaction)
                    // With what it did, for saved copies older than the index to catch up.
                    try SearchLog.record(transaction.log, in: db, saved: saved)
                    return .commit
                }
                vectors.follow(transaction.log)
                memoryVectors.follow(transaction.log)
                keywords.follow(transaction.log)
                guard let result else { throw KBError(.database, "A write transaction ended without a result.") }
                return result
            }
        }
    }

    /// Runs `body` in one write transaction with the raw connection (for tests and tools; kb's
    /// own writes go through `transaction`). It moves the index's generation on; the vectors in
    /// memory are reloaded at the next search, and the saved copies beside the index deleted.
    public func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        let vectors = self.vectors, memoryVectors = self.memoryVectors, keywords = self.keywords, saved = self.saved
        return try await wrap {
            let result = try await pool.write { db in
                let result = try body(db)
                // What it changed is unknown: the generation moves on (nothing made from the index
                // before, in another process or a saved copy, passes for it after), and the saved
                // copies go (here, on the writer's queue, not the caller's thread).
                try db.execute(sql: SQLiteTransaction.bumpGenerationSQL)
                saved.discard()
                return result
            }
            vectors.invalidate()
            memoryVectors.invalidate()
            keywords.invalidate()
            return result
        }
    }

    /// Every vector of an embedder as one row-major matrix, read in one transaction (for tools
    /// and benchmarks; searches use the vectors in memory).
    public func loadVectors(embedder: EmbedderRecord, rows: VectorRows = .all) async throws -> (ids: [Int64], matrix: [Float], generation: Int64) {
        let path = self.path, vectors = self.vectors, memoryVectors = self.memoryVectors, keywords = self.keywords, saved = self.saved
        return try await wrap {
            try await pool.read { db in
                try Snapshot(db: db, path: path, vectors: vectors, memoryVectors: memoryVectors, keywords: keywords, saved: saved)
                    .loadVectors(embedder: embedder, rows: rows)
            }
        }
    }

    /// Runs `body` in one read transaction on a reader queue, with the raw connection (for tests
    /// and tools; kb's own reads go through `snapshot`).
    public func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        try await wrap { try await pool.read(body) }
    }

    func wrap<T>(_ body: () async throws -> T) async throws -> T {
        try await KBError.converting({ KBError(.database, "The index \(path) could not be used: \($0)", cause: $0) }, body)
    }

    /// SQLite ranks vectors exactly, in memory; there is no approximate index to build.
    public func buildApproximateIndex(_ settings: HNSWSettings, sample: Int) async throws -> HNSWReport {
        throw KBError(.unsupportedMode,
            "HNSW indexes are built in PostgreSQL (--db postgres://…). An SQLite index scans every vector exactly; scripts/bench/bench-search.sh shows how fast that is.")
    }

    public func dropApproximateIndex() async throws -> Bool {
        throw KBError(.unsupportedMode, "Only PostgreSQL indexes have HNSW indexes; an SQLite index scans exactly.")
    }

    /// Makes deleted text unreadable in the index files: `secure_delete` has zeroed the rows
    /// themselves; the keyword index is merged into one segment (FTS5 keeps a deleted row's words
    /// in its older segments until they are merged), and the write-ahead log is checkpointed
    /// into the main file and truncated to nothing (it holds the pages as they were before).
    /// Waits for readers that hold older snapshots (up to the busy timeout).
    public func scrub() async throws {
        let saved = self.saved
        return try await wrap {
            try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO snippets_fts(snippets_fts) VALUES('optimize')")
                _ = try db.checkpoint(.truncate)
                // Saved keyword postings name the words of deleted text: they go too, overwritten
                // first (the next `kb serve` saves the index as it is now).
                saved.discard(overwriting: true)
            }
        }
    }
}

extension SQLiteStore {
    /// Merges FTS5's segments of the keyword table into one (what `kb index optimize` does here).
    public func optimizeKeywordIndex() async throws -> KeywordIndexReport {
        let started = Date()
        return try await wrap {
            try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO snippets_fts(snippets_fts) VALUES('optimize')")
                var report = KeywordIndexReport()
                report.seconds = Date().timeIntervalSince(started)
                return report
            }
        }
    }
}

extension SQLiteStore.Snapshot {
    /// SQLite's own check of the whole file: "ok", or what is damaged.
    public func integrityCheck() throws -> String {
        try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
    }
}

extension SQLiteStore {
    /// `?, ?, …` for an `IN (…)` list of `values`, padded with NULLs (which match nothing) to the
    /// next power of two, with its arguments: lists of any length then share a few statements,
    /// which `Database.cachedStatement` prepares once per connection instead of once per search.
    static func inList(_ values: [some DatabaseValueConvertible & Sendable]) -> (sql: String, arguments: StatementArguments) {
        var size = 1
        while size < values.count { size *= 2 }
        var arguments = StatementArguments(values)
        arguments += StatementArguments(Array(repeating: DatabaseValue.null, count: size - values.count))
        return (String(repeating: "?,", count: size - 1) + "?", arguments)
    }
}

import Crypto
public import Foundation
import KBCore
public import KBRequests
public import KBStore

/// What `kb serve` answered, kept with the index for `kb usage`: every search, recall, context,
/// memory extraction and source request, with its route, status, request id, caller (admin or
/// the token's name), bot or report, the user as a salted hash, result and token counts,
/// whether it was degraded, and its latency; the query's text only with `logQueries`. Entries
/// are buffered in memory and written once a second in one transaction (`run`), so answering
/// never waits for the log; rows older than `retention` are pruned every hour.
///
/// ```swift
/// let log = RequestLog(kb: kb)
/// let running = Task { await log.run() }   // cancel it to stop; it flushes once more
/// ```
public final class RequestLog: Sendable {
    public struct Settings: Sendable, Hashable {
        /// How long rows are kept. The default is 30 days.
        public var retention: TimeInterval = 30 * 86_400
        /// Keep each request's query text too. The default is false.
        public var logQueries = false

        public init() {}
    }

    public let kb: KnowledgeBase
    public let settings: Settings
    private let pending = LockedValue<[RequestLogEntry]>([])
    private let salt = LockedValue<String?>(nil)
    /// Entries kept in memory at most while the index cannot be written (then the oldest go).
    static let maxPending = 100_000

    public init(kb: KnowledgeBase, settings: Settings = Settings()) {
        self.kb = kb
        self.settings = settings
    }

    /// Queues an entry for the next write.
    public func record(_ entry: RequestLogEntry) {
        var entry = entry
        if !settings.logQueries { entry.query = nil }
        pending.withLock { entries in
            entries.append(entry)
            if entries.count > Self.maxPending { entries.removeFirst(entries.count - Self.maxPending) }
        }
    }

    /// Writes what is queued, in one transaction; on failure it stays queued.
    public func flush() async throws {
        let entries = pending.withLock { entries in defer { entries = [] }; return entries }
        guard !entries.isEmpty else { return }
        do {
            try await kb.store.appendRequestLog(entries)
        } catch {
            pending.withLock { $0.insert(contentsOf: entries, at: 0) }
            throw error
        }
    }

    /// Deletes rows older than the retention.
    @discardableResult
    public func prune(now: Date = Date()) async throws -> Int {
        try await kb.store.pruneRequestLog(before: now.addingTimeInterval(-settings.retention))
    }

    /// Flushes every second and prunes every hour until `stopping` says so (a service's graceful
    /// shutdown) or the task is cancelled, then flushes once more. Stop it with `stopping` where
    /// you can: a write in a cancelled task may be refused, or land and still report a failure
    /// (and be written again by a later flush).
    public func run(until stopping: @escaping @Sendable () -> Bool = { false }) async {
        var lastPrune = Date.distantPast
        while !Task.isCancelled && !stopping() {
            try? await Task.sleep(nanoseconds: 1_000_000_000)
            try? await flush()
            if Date().timeIntervalSince(lastPrune) >= 3600 {
                _ = try? await prune()
                lastPrune = Date()
            }
        }
        try? await flush()
    }

    /// The user as the log keeps it: the first 16 hex digits of SHA-256 of a salt kept with the
    /// index and the id, so rows of one user can be counted together but the id is not there.
    public func userHash(_ user: String) async throws -> String {
        let salt: String
        if let known = self.salt.withLock({ $0 }) {
            salt = known
        } else {
            salt = try await kb.store.updateMeta("request_log_salt") { stored in
                let value = stored ?? UUID.random().uuidString
                return (value, value)
            }
            self.salt.withLock { $0 = salt }
        }
        // Lower-case hex of the first 8 bytes (as "%02x" each, without String(format:)'s cost).
        let digits = Array("0123456789abcdef".utf8)
        let bytes = SHA256.hash(data: Data((salt + "\u{0}" + user).utf8)).prefix(8).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `kb usage`: the request log grouped, and what each embedder has cost.
public struct UsageReport: Sendable, Hashable, Codable {
    public var since: Date
    public var by: UsageGrouping
    public var rows: [UsageRow]
    /// Tokens each remote embedder reported using, over the index's life.
    public var embeddingTokens: [String: Int]

    /// How far back a usage request may look: 1 to 999,999 (decimals allowed), in minutes,
    /// hours, days (the default unit) or weeks.
    public static let sincePattern = "^0*[1-9][0-9]{0,5}(\\.[0-9]{1,3})?[mhdw]?$"
}

extension KnowledgeBase {
    /// The request log over the last `since` (`30d`, `12h`; the default 30d), grouped `by` day (the
    /// default), bot, report or route: `GET /v1/usage`. The admin's only.
    public func usage(since: String?, by: String?, as caller: Caller) async throws -> UsageReport {
        try caller.requireAdmin("read the request log")
        let since = since ?? "30d"
        guard since.range(of: UsageReport.sincePattern, options: .regularExpression) != nil else {
            throw KBError(.invalidArgument, "\"since\" is \"\(since)\"; give how far back as a number and a unit: 30d, 12h, 90m, 2w.")
        }
        let seconds = try APIToken.duration(since)
        guard let grouping = UsageGrouping(rawValue: by ?? "day") else {
            throw KBError(.invalidArgument, "\"by\" is \"\(by ?? "")\"; use day, bot, report or route.")
        }
        return try await usage(since: Date(timeIntervalSinceNow: -seconds), by: grouping, as: caller)
    }

    /// The request log since `since`, grouped by day, bot, report or route.
    public func usage(since: Date, by grouping: UsageGrouping, as caller: Caller) async throws -> UsageReport {
        try caller.requireAdmin("read the request log")
        let (rows, tokens) = try await store.snapshot { snapshot in
            (try snapshot.usage(since: since, by: grouping), try snapshot.status().tokensUsed)
        }
        return UsageReport(since: since, by: grouping, rows: rows, embeddingTokens: tokens)
    }
}

extension KnowledgeBase {
    /// Every row of the request log, oldest first (for tests and exports of the log). The admin's only.
    public func requestLogEntries(as caller: Caller) async throws -> [RequestLogEntry] {
        try caller.requireAdmin("read the request log")
        return try await store.snapshot { try $0.requestLogEntries() }
    }
}

public import Foundation
public import KBCore

/// One answered request, as the request log keeps it: no query text unless asked for, and the
/// user only as a salted hash.
public struct RequestLogEntry: Sendable, Hashable, Codable {
    public var at: Date
    /// `POST /v1/context`, …
    public var route: String
    public var status: Int
    public var requestID: String
    /// `admin` or the scoped token's name.
    public var caller: String?
    public var bot: String?
    public var report: String?
    public var userHash: String?
    /// Hits, memories, citations or proposals returned.
    public var results: Int?
    /// Tokens of context returned, and the budget asked for.
    public var tokens: Int?
    public var budget: Int?
    public var degraded = false
    public var latencyMilliseconds: Double
    /// Only with `kb serve --log-queries`.
    public var query: String?

    public init(at: Date, route: String, status: Int, requestID: String, latencyMilliseconds: Double) {
        self.at = at
        self.route = route
        self.status = status
        self.requestID = requestID
        self.latencyMilliseconds = latencyMilliseconds
    }
}

/// How `kb usage` groups the log.
public enum UsageGrouping: String, Sendable, Hashable, Codable, CaseIterable, SchemaEnumeration {
    case day, bot, report, route
}

/// One group of the request log.
public struct UsageRow: Sendable, Hashable, Codable {
    /// The day (YYYY-MM-DD, UTC), bot, report or route; "" for requests without one.
    public var key: String
    public var requests: Int
    /// Answers with status 400 or above.
    public var errors: Int
    public var degraded: Int
    public var results: Int
    /// Tokens of context served.
    public var tokens: Int
    public var meanLatencyMilliseconds: Double
    public var maxLatencyMilliseconds: Double
    /// The median and 99th-percentile latency (nearest rank).
    public var p50LatencyMilliseconds: Double
    public var p99LatencyMilliseconds: Double

    public init(key: String, requests: Int, errors: Int, degraded: Int, results: Int, tokens: Int,
                meanLatencyMilliseconds: Double, maxLatencyMilliseconds: Double, p50LatencyMilliseconds: Double, p99LatencyMilliseconds: Double) {
        self.key = key
        self.requests = requests
        self.errors = errors
        self.degraded = degraded
        self.results = results
        self.tokens = tokens
        self.meanLatencyMilliseconds = meanLatencyMilliseconds
        self.maxLatencyMilliseconds = maxLatencyMilliseconds
        self.p50LatencyMilliseconds = p50LatencyMilliseconds
        self.p99LatencyMilliseconds = p99LatencyMilliseconds
    }
}

/// The request log's SQL, written once for both stores: the table's columns in order, and the
/// summary query with the store's own expression for a row's UTC day.
public enum RequestLogSQL {
    public static let columns = ["at", "route", "status", "request_id", "caller", "bot", "report", "user_hash", "results", "tokens",
                                 "budget", "degraded", "latency_ms", "query"]

    /// Every row, oldest first, in `columns` order.
    public static let entries = "SELECT " + columns.joined(separator: ", ") + " FROM request_log ORDER BY id"

    /// `key, requests, errors, degraded, results, tokens, mean latency, max latency, p50, p99` per
    /// group of the rows at or after the one parameter (seconds since 1970), ordered by key. The
    /// percentiles are nearest-rank: the smallest latency whose rank in its group is at least
    /// p × the group's count (window functions, as both SQLite and PostgreSQL have them).
    public static func usage(by grouping: UsageGrouping, day: String, since parameter: String) -> String {
        let key = switch grouping {
        case .day: day
        case .bot: "coalesce(bot, '')"
        case .report: "coalesce(report, '')"
        case .route: "route"
        }
        return """
            WITH ranked AS (
                SELECT \(key) AS k, status, degraded, results, tokens, latency_ms,
                       row_number() OVER (PARTITION BY \(key) ORDER BY latency_ms) AS n, count(*) OVER (PARTITION BY \(key)) AS c
                FROM request_log WHERE at >= \(parameter))
            SELECT k, count(*), sum(CASE WHEN status >= 400 THEN 1 ELSE 0 END), sum(degraded), sum(coalesce(results, 0)),
                   sum(coalesce(tokens, 0)), avg(latency_ms), max(latency_ms),
                   min(CASE WHEN n >= 0.5 * c THEN latency_ms END), min(CASE WHEN n >= 0.99 * c THEN latency_ms END)
            FROM ranked GROUP BY k ORDER BY k
            """
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import KBCore
import KBKit
import KBRequests
import KBStore
import Prometheus

/// What a handler says about the request it answers, for the request log and the metrics: set
/// up by `ObservingMiddleware` for the handler's task.
final class RequestNote: @unchecked Sendable {
    // @unchecked: every field is guarded by `lock`.
    private let lock = NSLock()
    private var fields = Fields()

    struct Fields {
        var caller: String?
        var bot: String?
        var report: String?
        var user: String?
        var results: Int?
        var tokens: Int?
        var budget: Int?
        var degraded = false
        var query: String?
        /// The route is one the request log keeps (declared with the route, `logged`).
        var logged = false
    }

    @TaskLocal static var current: RequestNote?

    /// Changes the current request's note, if there is one.
    static func set(_ change: (inout Fields) -> Void) {
        guard let note = current else { return }
        note.lock.withLock { change(&note.fields) }
    }

    var snapshot: Fields { lock.withLock { fields } }
}

/// Counts and times every request (`/metrics`), and writes the ones the request log keeps —
/// the routes declared `logged`: search, recall, context, memory extraction and sources — with
/// what their handlers noted. It runs outside the error middleware, so it sees the status and
/// the request id the client gets.
struct ObservingMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics
    let log: RequestLog?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let note = RequestNote()
        let response = try await RequestNote.$current.withValue(note) { try await next(request, context) }
        let elapsed = ContinuousClock.now - started
        let route = context.endpointPath ?? "unknown"
        let status = Int(response.status.code)
        let fields = note.snapshot
        metrics.record(method: request.method.rawValue, route: route, status: status, elapsed: elapsed, degraded: fields.degraded)
        if let log, fields.logged {
            await log.record("\(request.method) \(route)", status: status, requestID: response.headers[ErrorMiddleware<Context>.requestIDHeader] ?? "",
                             elapsed: elapsed, note: fields)
        }
        return response
    }
}

extension RequestLog {
    /// Writes the entry of a request — or of a step after one, such as a chat turn's learning —
    /// from what its handler noted: the one way kb's service makes log entries.
    func record(_ route: String, status: Int, requestID: String, elapsed: Duration, note fields: RequestNote.Fields) async {
        var entry = RequestLogEntry(at: Date(), route: route, status: status, requestID: requestID,
                                    latencyMilliseconds: Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        entry.caller = fields.caller ?? "admin"
        entry.bot = fields.bot
        entry.report = fields.report
        if let user = fields.user { entry.userHash = try? await userHash(user) }
        entry.results = fields.results
        entry.tokens = fields.tokens
        entry.budget = fields.budget
        entry.degraded = fields.degraded
        entry.query = fields.query
        record(entry)
    }
}

/// The service's Prometheus metrics (`GET /metrics`, text format 0.0.4): requests by route and
/// status, latency histograms by route, degraded answers; and, read when scraped, whether queries
/// can be embedded, the encoders' queue and pass sizes, the index's size and jobs by state.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    static let buckets: [Duration] = [.milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                                      .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10)]

    func record(method: String, route: String, status: Int, elapsed: Duration, degraded: Bool) {
        let name = "\(method) \(route)"
        registry.makeCounter(descriptor: Self.name("http_requests", "total", "Requests answered, by route and status."),
                             labels: [("route", name), ("status", String(status))]).increment()
        registry.makeDurationHistogram(descriptor: Self.name("http_request_duration", "seconds", "Time to answer, by route."),
                                       labels: [("route", name)], buckets: Self.buckets).record(elapsed)
        if degraded {
            registry.makeCounter(descriptor: Self.name("degraded_answers", "total", "Answers from keywords alone: the query could not be embedded."),
                                 labels: [("route", name)]).increment()
        }
    }

    /// A call to a chat completion's upstream model, once it ended: how long it took (to the
    /// end of the answer, streamed or not) and how it ended (`ok`, `timeout`, `unreachable`,
    /// `status`, `malformed`, or `cancelled` when the client went away mid-stream).
    func recordUpstream(_ error: (any Error)?, elapsed: Duration) {
        let outcome: String = switch error {
        case nil: "ok"
        case is CancellationError: "cancelled"
        case let error as KBError where error.code == .upstreamTimeout: "timeout"
        case let error as KBError where error.message.contains("answered HTTP"): "status"
        case let error as KBError where error.message.contains("could not be reached"): "unreachable"
        default: "malformed"
        }
        registry.makeDurationHistogram(descriptor: Self.name("upstream_duration", "seconds", "Time the upstream chat model took, by outcome."),
                                       labels: [("outcome", outcome)], buckets: Self.buckets).record(elapsed)
        if error != nil {
            registry.makeCounter(descriptor: Self.name("upstream_errors", "total", "Chat completions the upstream model failed, by outcome."),
                                 labels: [("outcome", outcome)]).increment()
        }
    }

    static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "kb", metricName: metric, unitName: unit, helpText: help)
    }

    /// The text a scrape gets, with the gauges read now.
    /// `caller` must be allowed to read them (KBKit says who may).
    /// `watch`: the folder watcher's counts, when folders are watched.
    func exposition(kb: KnowledgeBase, as caller: Caller, watch: WatchCounts? = nil) async throws -> String {
        let state = try await kb.metricsStatus(as: caller)
        let (status, jobs, available) = (state.index, state.jobs, state.queryEmbedder.available)
        registry.makeGauge(descriptor: Self.name("query_embedder", "available", "1 while queries can be embedded, 0 while answers come from keywords."))
            .set(to: available ? 1 : 0)
        let encoder = KnowledgeBase.encoderLoad
        registry.makeGauge(descriptor: Self.name("encoder_waiting", "sequences", "Sequences waiting for an encoder pass.")).set(to: Double(encoder.waiting))
        registry.makeGauge(descriptor: Self.name("encoder_passes", "total", "Encoder passes run.")).set(to: Double(encoder.passes))
        registry.makeGauge(descriptor: Self.name("encoder_encoded", "sequences", "Sequences encoded.")).set(to: Double(encoder.sequences))
        for (size, count) in zip(["1", "2-4", "5-8", "9-16", "17+"], encoder.passSizes) {
            registry.makeGauge(descriptor: Self.name("encoder_passes_by_size", "total", "Encoder passes by how many sequences they held."),
                               labels: [("sequences", size)]).set(to: Double(count))
        }
        let cache = kb.queryCacheCounts
        for (name, value, help) in [("query_cache_hits", cache.hits, "Query texts whose vector came from the query-embedding cache."),
                                    ("query_cache_misses", cache.misses, "Query texts the embedder had to embed.")] {
            registry.makeGauge(descriptor: Self.name(name, "total", help)).set(to: Double(value))
        }
        registry.makeGauge(descriptor: Self.name("query_cache", "entries", "Query vectors the cache holds.")).set(to: Double(cache.entries))
        registry.makeGauge(descriptor: Self.name("query_cache", "bytes", "Bytes the query-embedding cache holds.")).set(to: Double(cache.bytes))
        for (name, value, help) in [("sources", status.sources, "Sources in the index (memories included)."),
                                    ("snippets", status.snippets, "Snippets in the index."),
                                    ("index_size", Int(status.sizeOnDisk), "Bytes the index takes on disk (SQLite).")] {
            registry.makeGauge(descriptor: Self.name(name, name == "index_size" ? "bytes" : "count", help)).set(to: Double(value))
        }
        for state in ["receiving", "queued", "running"] {
            registry.makeGauge(descriptor: Self.name("jobs", "count", "Unfinished jobs by state."), labels: [("state", state)])
                .set(to: Double(jobs[state] ?? 0))
        }
        if let watch {
            for (name, value, help) in [("watch_events", watch.events, "File system events under watched folders."),
                                        ("watch_rounds", watch.rounds, "Rounds of changes brought into the index."),
                                        ("watch_files_read", watch.filesRead, "Files read again because they appeared or changed."),
                                        ("watch_sources_removed", watch.sourcesRemoved, "Sources removed because their files are gone."),
                                        ("watch_failures", watch.failures, "Files a watch round failed to read."),
                                        ("watch_rescans", watch.rescans, "Periodic full scans of the watched folders."),
                                        ("watch_overflows", watch.overflows, "Full scans after the kernel's event queue overflowed.")] {
                registry.makeGauge(descriptor: Self.name(name, "total", help)).set(to: Double(value))
            }
            registry.makeGauge(descriptor: Self.name("watch_folders", "count", "Folders the kernel watches.")).set(to: Double(watch.folders))
        }
        return registry.emitToString()
    }
}

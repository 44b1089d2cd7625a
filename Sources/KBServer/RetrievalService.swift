import Crypto
import Foundation
public import Hummingbird
import KBContext
import KBCore
public import KBKit
import KBMemory
import KBRequests
import KBStore
public import Logging
import NIOCore
public import ServiceLifecycle

/// `kb serve`: the HTTP retrieval service over one knowledge base.
///
/// ```swift
/// let service = RetrievalService(kb: kb, configuration: ServiceConfiguration())
/// try await service.run()
/// ```
public struct RetrievalService: Sendable {
    public let kb: KnowledgeBase
    public let configuration: ServiceConfiguration
    let embeddings: LocalEmbeddings
    /// The request log (`kb usage`), unless the configuration turns it off.
    public let log: RequestLog?
    let metrics = ServiceMetrics()
    /// The folder watcher, once `startWatching` started it (its counts go to `/metrics`).
    let watcher = LockedValue<FolderWatcher?>(nil)
    /// Whether the service is warm: `run()` clears it while `KnowledgeBase.warm()` readies the
    /// model and the index, and `/healthz` answers 503 "warming" until then.
    let warmed = LockedValue(true)

    public init(kb: KnowledgeBase, configuration: ServiceConfiguration, embeddings: LocalEmbeddings = .shared) {
        self.kb = kb
        self.configuration = configuration
        self.embeddings = embeddings
        log = configuration.requestLog.map { RequestLog(kb: kb, settings: $0) }
    }

    /// Every route the service answers, as the router registers them (the OpenAPI document
    /// documents the same list; a test holds them equal).
    public var routes: [(method: String, path: String)] { RouteTable.entries(of: router()) }

    /// The application, ready to run or to test, with `services` run beside its server in its
    /// one `ServiceGroup`.
    public func application(logger: Logger? = nil, services: [any Service] = []) -> some ApplicationProtocol {
        Application(
            router: router(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "kb"),
            services: services,
            logger: logger ?? Self.defaultLogger)
    }

    static var defaultLogger: Logger {
        var log = Logger(label: "kb.serve")
        log.logLevel = .warning
        return log
    }

    /// Binds and serves until the process is stopped (SIGTERM or SIGINT: a graceful shutdown);
    /// `/healthz` says "warming" (503) until the model and the index are ready
    /// (`KnowledgeBase.warm()`). While the query embedder is unavailable, searches answer from
    /// keywords and a background probe brings it back; both changes are logged. Beside the
    /// server, as services of its group (`BackgroundServices.swift`): the job runner, the request
    /// log's writer, the folder watcher, the search copies and the warm-up; `report` gets each
    /// line they have to say (`kb serve` writes them to standard error).
    public func run(report: @escaping @Sendable (String) -> Void = { _ in }) async throws {
        try configuration.validate()
        let logger = Self.defaultLogger
        kb.recoverEmbedderInBackground()
        kb.onEmbedderHealthChange { event in
            switch event {
            case .unavailable(let reason):
                logger.warning("queries cannot be embedded; answering from keywords and retrying in the background: \(reason)")
            case .recovered(let seconds):
                logger.warning("queries can be embedded again (after \(Int(seconds.rounded())) s of keyword-only answers)")
            }
        }
        var services: [any Service] = [JobRunnerService(kb: kb)]
        if let log { services.append(RequestLogService(log: log)) }
        if let watching = try await startWatching(report: { report("watch: " + $0.summary) }) {
            services.append(FolderWatcherService(watcher: watching))
        }
        services.append(SearchCopiesService(kb: kb, report: report))
        // Not ready until warm, from before the server binds: the services start beside it.
        warmed.withLock { $0 = false }
        services.append(WarmUpService(kb: kb, warmed: warmed, logger: logger))
        do {
            try await application(logger: logger, services: services).runService()
        } catch let error as KBError {
            throw error
        } catch {
            throw KBError(.invalidArgument, "Cannot serve on \(configuration.host):\(configuration.port): \(error). Is another program using the port? Try --port.")
        }
    }

    /// Starts keeping the configuration's watched folders in the index (nil without any): every
    /// round goes to `report`, the request log (route `WATCH`) and `/metrics`.
    public func startWatching(report: @escaping @Sendable (WatchReport) -> Void = { _ in }) async throws -> FolderWatcher? {
        guard let settings = configuration.watch, !settings.folders.isEmpty else { return nil }
        let (embedder, record) = try await kb.embedder(nil)
        let log = self.log
        let started = try kb.watch(settings, embedder: embedder, record: record, as: .admin) { round in
            report(round)
            var entry = RequestLogEntry(at: round.at, route: "WATCH \(round.cause.rawValue)", status: round.failed.isEmpty ? 200 : 500,
                                        requestID: "watch-" + UUID().uuidString.lowercased().prefix(8), latencyMilliseconds: round.seconds * 1000)
            entry.caller = "watch"
            entry.results = round.read + round.removed
            log?.record(entry)
        }
        watcher.withLock { $0 = started }
        return started
    }

    /// The router: the middleware (metrics and the request log, the browser rules, request ids
    /// and errors, the token, the body limit), then the routes of each resource, registered once;
    /// the table of methods per path that a 405 answer and a CORS preflight list is read from
    /// these registrations. What a caller may do is decided by KBKit, to which every route hands
    /// its caller: every route but the open ones and the console's files is registered in the
    /// group of `CallerContext`, whose caller the auth middleware set (or the request is refused).
    public func router() -> Router<KBRequestContext> {
        let router = Router(context: KBRequestContext.self)
        let routes = RouteTable()
        router.add(middleware: ObservingMiddleware(metrics: metrics, log: log))
        if configuration.checksAnswers {
            let document = OpenAPIDocument.document(kb.limits, maxEmbeddingInputs: configuration.maxEmbeddingInputs)
            router.add(middleware: AnswerCheckingMiddleware(schema: AnswerSchema(document)))
        }
        router.add(middleware: BrowserGuardMiddleware(policy: (try? BrowserPolicy(configuration)) ?? .loopback, routes: routes))
        router.add(middleware: ErrorMiddleware(routes: routes))
        router.add(middleware: AuthMiddleware(token: configuration.token, kb: kb, metricsPublic: configuration.metricsPublic))
        router.add(middleware: BodyLimitMiddleware(limit: configuration.maxBodyBytes))
        let maxBodyBytes = configuration.maxBodyBytes
        router.addRoutes(OpenController(kb: kb, metrics: metrics, metricsPublic: configuration.metricsPublic, warmed: warmed, watcher: watcher).routes)
        router.addRoutes(ConsoleController().routes)
        let acting = router.group(context: CallerContext.self)
        acting.addRoutes(ServiceController(kb: kb, reports: configuration.reports, maxEmbeddingInputs: configuration.maxEmbeddingInputs).routes)
        acting.addRoutes(RetrievalController(kb: kb, maxBodyBytes: maxBodyBytes, reports: configuration.reports,
                                             maxEmbeddingInputs: configuration.maxEmbeddingInputs, embeddings: embeddings).routes, atPath: "/v1")
        acting.addRoutes(ChatController(kb: kb, maxBodyBytes: maxBodyBytes, chatModel: configuration.chatModel, reports: configuration.reports,
                                        metrics: metrics, log: log).routes, atPath: "/v1")
        acting.addRoutes(MemoryController(kb: kb, maxBodyBytes: maxBodyBytes, chatModel: configuration.chatModel).routes, atPath: "/v1/memories")
        acting.addRoutes(BotController(kb: kb, maxBodyBytes: maxBodyBytes).routes, atPath: "/v1/bots")
        acting.addRoutes(SourceController(kb: kb, maxBodyBytes: maxBodyBytes).routes, atPath: "/v1")
        acting.addRoutes(TokenController(kb: kb, maxBodyBytes: maxBodyBytes).routes, atPath: "/v1/tokens")
        acting.addRoutes(MCPController(kb: kb, maxBodyBytes: maxBodyBytes, reports: configuration.reports, chatModel: configuration.chatModel).routes)
        routes.record(router)
        return router
    }
}

extension RequestContext {
    /// A path parameter as the client meant it: percent-decoded (`file%3A…` is `file:…`).
    func pathParameter(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        guard let decoded = raw.removingPercentEncoding else {
            throw KBError(.invalidArgument, "The path parameter \(name) is '\(raw)', which is not valid percent-encoding; encode the value with UTF-8.")
        }
        return decoded
    }
}

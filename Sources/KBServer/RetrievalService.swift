import Crypto
import Foundation
public import Hummingbird
import KBContext
import KBCore
public import KBKit
import KBMemory
import KBStore
public import Logging
import NIOCore

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

    /// The application, ready to run or to test.
    public func application(logger: Logger? = nil) -> some ApplicationProtocol {
        Application(
            router: router(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "kb"),
            logger: logger ?? Self.defaultLogger)
    }

    static var defaultLogger: Logger {
        var log = Logger(label: "kb.serve")
        log.logLevel = .warning
        return log
    }

    /// Binds and serves until the process is stopped; `/healthz` says "warming" (503) until the
    /// model and the index are ready (`KnowledgeBase.warm()`). While the query embedder is unavailable,
    /// searches answer from keywords and a background probe brings it back; both changes are logged.
    public func run() async throws {
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
        // Ready for load once warm: /healthz says "warming" (503) until the model has run on every
        // encoder worker and the index has been read, so that a load balancer waits for it.
        warmed.withLock { $0 = false }
        Task.detached { [kb, warmed] in
            let took = await kb.warm()
            warmed.withLock { $0 = true }
            logger.info("warm after \(took)")
        }
        let jobs = kb.startJobRunner()
        let logging = log.map { log in Task { await log.run() } }
        let watching = try await startWatching { report in
            FileHandle.standardError.write(Data(("kb serve: watch: " + report.summary + "\n").utf8))
        }
        do {
            try await application(logger: logger).runService()
        } catch {
            await watching?.stop()
            await jobs.stop()
            logging?.cancel()
            throw error
        }
        await watching?.stop()
        await jobs.stop()
        logging?.cancel()
        _ = await logging?.value
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
        router.addRoutes(openRoutes())
        router.addRoutes(consoleRoutes())
        let acting = router.group(context: CallerContext.self)
        acting.addRoutes(serviceRoutes())
        acting.addRoutes(retrievalRoutes(), atPath: "/v1")
        acting.addRoutes(chatRoutes(), atPath: "/v1")
        acting.addRoutes(memoryRoutes(), atPath: "/v1/memories")
        acting.addRoutes(botRoutes(), atPath: "/v1/bots")
        acting.addRoutes(sourceRoutes(), atPath: "/v1")
        acting.addRoutes(tokenRoutes(), atPath: "/v1/tokens")
        acting.addRoutes(mcpRoutes())
        routes.record(router)
        return router
    }

    /// A request's query parameters, in order.
    static func parameters(_ request: Request) -> [(key: String, value: String)] {
        request.uri.queryParameters.map { (String($0.key), String($0.value)) }
    }

    // MARK: - Handlers

    /// Decodes a request body into `R` (fields from the path added), answers it with `body`, and
    /// encodes the answer: all a kb route does.
    func answer<R: KBRequest, T: Encodable>(
        _ type: R.Type, _ request: Request, adding: [String: JSONValue] = [:], status: (T) -> HTTPResponse.Status = { _ in .ok },
        _ body: (R) async throws -> T
    ) async throws -> Response {
        let buffer = try await request.body.collect(upTo: configuration.maxBodyBytes)
        let decoded = try KBJSON.decode(R.self, from: Data(buffer: buffer), adding: adding)
        let value = try await body(decoded)
        return try Self.json(value, status: status(value))
    }

    // MARK: - JSON

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(bytes: try KBJSON.encode(value))))
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

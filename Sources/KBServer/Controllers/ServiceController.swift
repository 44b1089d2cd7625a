import Foundation
import Hummingbird
import KBCore
import KBKit
import KBRequests
import NIOCore

/// `/healthz` (200 "ok" once warm, 503 "warming" before) and `/metrics`, which may be reached without a token (`/metrics` with
/// `--metrics-public`): they act for no one.
struct OpenController {
    let kb: KnowledgeBase
    let metrics: ServiceMetrics
    let metricsPublic: Bool
    /// Whether the service is warm (`WarmUpService`).
    let warmed: LockedValue<Bool>
    /// The folder watcher, once started (its counts go to `/metrics`).
    let watcher: LockedValue<FolderWatcher?>

    var routes: RouteCollection<KBRequestContext> {
        let routes = RouteCollection(context: KBRequestContext.self)
        routes.get("healthz") { _, _ in
            warmed.withLock { $0 } ? try Answers.json(Readiness(status: .ok)) : try Answers.json(Readiness(status: .warming), status: .serviceUnavailable)
        }
        routes.get("metrics") { _, context in
            // Public metrics count everything; otherwise what the token's holder may see.
            guard let caller = metricsPublic ? .admin : context.caller else {
                throw KBError(.unauthorized, "Send the API token as `Authorization: Bearer TOKEN`, or start kb serve with --metrics-public.")
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: try await metrics.exposition(kb: kb, as: caller, watch: watcher.withLock { $0 }?.counts))))
        }
        return routes
    }
}

/// `/openapi.json`, `/v1/status`, `/v1/me`, `/v1/reports` and `/v1/usage`.
struct ServiceController {
    let kb: KnowledgeBase
    let reports: [String: ReportTemplate]
    let maxEmbeddingInputs: Int

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json(
                        kb.limits, maxEmbeddingInputs: maxEmbeddingInputs))))
        }
        routes.get("v1/status") { _, context in try Answers.json(try await kb.serviceStatus(as: context.caller)) }
        routes.get("v1/me") { _, context in try Answers.json(CallerInfo(context.caller)) }
        routes.get("v1/reports") { _, context in try Answers.json(try kb.reportTemplates(reports, as: context.caller)) }
        routes.get("v1/usage") { request, context in
            let parameters = Answers.parameters(request)
            if let unknown = parameters.map(\.key).first(where: { !["since", "by"].contains($0) }) {
                throw KBError(.invalidArgument, "Unknown query parameter \"\(unknown)\". GET /v1/usage takes since (30d, 12h) and by (day, bot, report, route).")
            }
            let value = { (name: String) in parameters.last { $0.key == name }?.value }
            return try Answers.json(try await kb.usage(since: value("since"), by: value("by"), as: context.caller))
        }
        return routes
    }
}

/// `GET /healthz`'s answer: ok once the model and the index are ready, warming before.
struct Readiness: Codable {
    enum State: String, Codable, SchemaEnumeration { case ok, warming }
    var status: State
}

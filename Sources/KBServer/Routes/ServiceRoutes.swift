import Foundation
import Hummingbird
import KBCore
import KBKit
import NIOCore

extension RetrievalService {
    /// `/healthz` (200 "ok" once warm, 503 "warming" before) and `/metrics`, which may be reached without a token (`/metrics` with
    /// `--metrics-public`): they act for no one.
    func openRoutes() -> RouteCollection<KBRequestContext> {
        let routes = RouteCollection(context: KBRequestContext.self)
        routes.get("healthz") { _, _ in
            warmed.withLock { $0 } ? try Self.json(["status": "ok"]) : try Self.json(["status": "warming"], status: .serviceUnavailable)
        }
        routes.get("metrics") { _, context in
            // Public metrics count everything; otherwise what the token's holder may see.
            guard let caller = configuration.metricsPublic ? .admin : context.caller else {
                throw KBError(.unauthorized, "Send the API token as `Authorization: Bearer TOKEN`, or start kb serve with --metrics-public.")
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: try await metrics.exposition(kb: kb, as: caller, watch: watcher.withLock { $0 }?.counts))))
        }
        return routes
    }

    /// `/openapi.json`, `/v1/status`, `/v1/me`, `/v1/reports` and `/v1/usage`.
    func serviceRoutes() -> RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json(
                        kb.limits, maxEmbeddingInputs: configuration.maxEmbeddingInputs))))
        }
        routes.get("v1/status") { _, context in try Self.json(try await kb.serviceStatus(as: context.caller)) }
        routes.get("v1/me") { _, context in try Self.json(CallerInfo(context.caller)) }
        routes.get("v1/reports") { _, context in try Self.json(try kb.reportTemplates(configuration.reports, as: context.caller)) }
        routes.get("v1/usage") { request, context in
            let parameters = Self.parameters(request)
            if let unknown = parameters.map(\.key).first(where: { !["since", "by"].contains($0) }) {
                throw KBError(.invalidArgument, "Unknown query parameter \"\(unknown)\". GET /v1/usage takes since (30d, 12h) and by (day, bot, report, route).")
            }
            let value = { (name: String) in parameters.last { $0.key == name }?.value }
            return try Self.json(try await kb.usage(since: value("since"), by: value("by"), as: context.caller))
        }
        return routes
    }
}

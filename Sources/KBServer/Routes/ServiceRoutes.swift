import Foundation
import Hummingbird
import KBCore
import KBKit
import NIOCore

extension RetrievalService {
    /// `/healthz`, `/openapi.json`, `/metrics`, `/v1/status`, `/v1/me`, `/v1/reports` and `/v1/usage`.
    func serviceRoutes() -> RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get("healthz") { _, _ in try Self.json(["status": "ok"]) }
        routes.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json(
                        kb.limits, maxEmbeddingInputs: configuration.maxEmbeddingInputs, dimension: embeddings.declaredDimension))))
        }
        routes.get("metrics") { _, _ in
            let caller = configuration.metricsPublic ? .admin : Access.caller
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: try await metrics.exposition(kb: kb, as: caller, watch: watcher.withLock { $0 }?.counts))))
        }
        routes.get("v1/status") { _, _ in try Self.json(try await kb.serviceStatus()) }
        routes.get("v1/me") { _, _ in try Self.json(CallerInfo(Access.caller)) }
        routes.get("v1/reports") { _, _ in try Self.json(try kb.reportTemplates(configuration.reports, as: Access.caller)) }
        routes.get("v1/usage") { request, _ in
            let parameters = Self.parameters(request)
            if let unknown = parameters.map(\.key).first(where: { !["since", "by"].contains($0) }) {
                throw KBError(.invalidArgument, "Unknown query parameter \"\(unknown)\". GET /v1/usage takes since (30d, 12h) and by (day, bot, report, route).")
            }
            let value = { (name: String) in parameters.last { $0.key == name }?.value }
            return try Self.json(try await kb.usage(since: value("since"), by: value("by"), as: Access.caller))
        }
        return routes
    }
}

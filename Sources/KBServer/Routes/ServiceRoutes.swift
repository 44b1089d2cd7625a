import Foundation
import Hummingbird
import KBCore
import KBKit
import NIOCore

extension RetrievalService {
    /// `/healthz`, `/openapi.json`, `/metrics`, `/v1/status` and `/v1/me`.
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
                            body: .init(byteBuffer: ByteBuffer(string: try await metrics.exposition(kb: kb, as: caller))))
        }
        routes.get("v1/status") { _, _ in try Self.json(try await kb.serviceStatus()) }
        routes.get("v1/me") { _, _ in try Self.json(CallerInfo(Access.caller)) }
        return routes
    }
}

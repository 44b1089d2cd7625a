import Foundation
import Hummingbird
import KBCore
import KBKit

extension RetrievalService {
    /// `/v1/tokens`: list, make and revoke scoped tokens (the admin token only; KBKit says so).
    func tokenRoutes() -> RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get { _, _ in try Self.json(try await kb.tokens(as: Access.caller)) }
        routes.post { request, _ in
            try await answer(TokenRequest.self, request, status: { _ in .created }) { try await kb.createToken($0, as: Access.caller) }
        }
        routes.delete("{name}") { _, context in
            try Self.json(try await kb.revokeToken(try context.pathParameter("name"), as: Access.caller))
        }
        return routes
    }
}

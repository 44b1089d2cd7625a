import Foundation
import Hummingbird
import KBCore
import KBKit
import KBRequests

/// `/v1/tokens`: list, make and revoke scoped tokens (the admin token only; KBKit says so).
struct TokenController: Controller {
    let kb: KnowledgeBase
    let maxBodyBytes: Int

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.get { _, context in try Answers.json(try await kb.tokens(as: context.caller)) }
        routes.post { request, context in
            try await answer(TokenRequest.self, request, status: { _ in .created }) { try await kb.createToken($0, as: context.caller) }
        }
        routes.delete("{name}") { _, context in
            try Answers.json(try await kb.revokeToken(try context.pathParameter("name"), as: context.caller))
        }
        return routes
    }
}

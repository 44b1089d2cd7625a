import Foundation
import Hummingbird
import KBCore
import KBKit

extension RetrievalService {
    /// `/v1/bots`: list and make; one bot by name.
    func botRoutes() -> RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get { _, _ in try Self.json(try await kb.bots(as: Access.caller)) }
        routes.post { request, _ in
            try await answer(BotRequest.self, request, status: { _ in .created }) { try await kb.createBot($0, as: Access.caller) }
        }
        routes.get("{name}") { _, context in try Self.json(try await kb.bot(try context.pathParameter("name"), as: Access.caller)) }
        routes.patch("{name}") { request, context in
            try await answer(BotChangeRequest.self, request, adding: ["name": .string(try context.pathParameter("name"))]) {
                try await kb.changeBot($0, as: Access.caller)
            }
        }
        routes.delete("{name}") { _, context in
            try Self.json(try await kb.deleteBot(try context.pathParameter("name"), as: Access.caller))
        }
        return routes
    }
}

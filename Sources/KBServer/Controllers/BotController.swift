import Foundation
import Hummingbird
import KBCore
import KBKit
import KBRequests

/// `/v1/bots`: list and make; one bot by name.
struct BotController: Controller {
    let kb: KnowledgeBase
    let maxBodyBytes: Int

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.get { _, context in try Answers.json(try await kb.bots(as: context.caller)) }
        routes.post { request, context in
            try await answer(BotRequest.self, request, status: { _ in .created }) { try await kb.createBot($0, as: context.caller) }
        }
        routes.get("{name}") { _, context in try Answers.json(try await kb.bot(try context.pathParameter("name"), as: context.caller)) }
        routes.patch("{name}") { request, context in
            try await answer(BotChangeRequest.self, request, adding: ["name": .string(try context.pathParameter("name"))]) {
                try await kb.changeBot($0, as: context.caller)
            }
        }
        routes.delete("{name}") { _, context in
            try Answers.json(try await kb.deleteBot(try context.pathParameter("name"), as: context.caller))
        }
        return routes
    }
}

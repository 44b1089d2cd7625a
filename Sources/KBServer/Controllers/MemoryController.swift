import Foundation
import Hummingbird
import KBCore
import KBKit
import KBLanguageModel
import KBRequests

/// `/v1/memories`: list, add, erase a scope, search, extract; one memory by id.
struct MemoryController: Controller {
    let kb: KnowledgeBase
    let maxBodyBytes: Int
    let chatModel: ChatModel?

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.get { request, context in try Answers.json(try await kb.memories(try Self.memoryList(request), as: context.caller)) }
        routes.post { request, context in
            try await answer(RememberRequest.self, request, status: { $0.created ? .created : .ok }) { try await kb.remember($0, as: context.caller) }
        }
        routes.delete { request, context in
            let parameters = Answers.parameters(request)
            guard parameters.count == 1, parameters[0].key == "scope" else {
                throw KBError(.invalidArgument, "DELETE /v1/memories takes one parameter, scope (?scope=user:ada): it erases everything of that scope. Delete one memory with DELETE /v1/memories/{id}.")
            }
            return try Answers.json(try await kb.erase(EraseRequest(scope: parameters[0].value), as: context.caller))
        }
        routes.logged(.post, "search") { request, context in
            try await answer(RecallRequest.self, request) { request in
                let answer = try await kb.recall(request, as: context.caller)
                RequestNote.set { note in
                    if let scopes = request.scopes, scopes.count == 1, scopes[0].hasPrefix("user:") { note.user = String(scopes[0].dropFirst(5)) }
                    (note.query, note.results, note.degraded) = (request.query, answer.hits.count, answer.degraded != nil)
                }
                return answer
            }
        }
        routes.logged(.post, "extract") { request, context in
            try await answer(MemoryExtractRequest.self, request) { request in
                let answer = try await kb.extractMemories(request, model: chatModel, as: context.caller)
                RequestNote.set { note in (note.bot, note.user, note.results) = (request.bot, request.user, answer.proposals.count) }
                return answer
            }
        }
        routes.logged(.post, "consolidate") { request, context in
            try await answer(MemoryConsolidateRequest.self, request) { request in
                let answer = try await kb.consolidateMemories(request, as: context.caller)
                RequestNote.set { note in
                    if request.scope.hasPrefix("user:") { note.user = String(request.scope.dropFirst(5)) }
                    note.results = answer.changes.count
                }
                return answer
            }
        }
        routes.post("{id}/feedback") { request, context in
            try await answer(MemoryFeedbackRequest.self, request, adding: ["id": .string(try context.pathParameter("id"))]) {
                try await kb.memoryFeedback($0, as: context.caller)
            }
        }
        routes.get("{id}") { _, context in
            try Answers.json(try await kb.memory(try context.pathParameter("id"), history: true, as: context.caller))
        }
        routes.patch("{id}") { request, context in
            try await answer(MemoryChangeRequest.self, request, adding: ["id": .string(try context.pathParameter("id"))]) {
                try await kb.changeMemory($0, as: context.caller)
            }
        }
        routes.delete("{id}") { _, context in
            try Answers.json(try await kb.forget(ForgetRequest(id: try context.pathParameter("id")), as: context.caller))
        }
        return routes
    }

    /// `GET /v1/memories`' query parameters: `scope` and `tag` (repeatable), `all`.
    static func memoryList(_ request: Request) throws -> MemoryListRequest {
        let parameters = request.uri.queryParameters
        if let unknown = parameters.map({ String($0.key) }).sorted().first(where: { !["scope", "tag", "all"].contains($0) }) {
            throw KBError(.invalidArgument, "Unknown query parameter \"\(unknown)\". GET /v1/memories takes scope, tag and all.")
        }
        var list = MemoryListRequest()
        list.scopes = parameters.getAll("scope").map { String($0) }
        list.tags = parameters.getAll("tag").map { String($0) }
        if let all = parameters.get("all") {
            guard let flag = Bool(String(all)) else { throw KBError(.invalidArgument, "\"all\" must be true or false; got \"\(all)\".") }
            list.includeSuperseded = flag
        }
        return list
    }
}

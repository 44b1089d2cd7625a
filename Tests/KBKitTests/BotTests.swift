import Foundation
import KBCore
import KBKit
import KBRequests
import Testing

@Suite struct BotTests {
    func botBase() async throws -> KnowledgeBase {
        let kb = try KnowledgeBase.open(at: try Workspace().dbPath)
        var request = BotRequest(name: "astro")
        request.systemPrompt = "You are a tutor."
        request.sources = ["tag:area:career", "/notes/planets"]
        _ = try await kb.createBot(request, as: .admin)
        return kb
    }

    @Test func aChangeAppliesPromptScopesAndSourcesTogether() async throws {
        let kb = try await botBase()
        var change = BotChangeRequest(name: "astro")
        change.systemPrompt = "You are a careful tutor."
        change.sources = ["kind:pdf", "tag:area:career", "kind:pdf"]
        change.addSources = ["tag:area:love"]
        change.removeSources = ["tag:area:career"]
        change.memoryScopes = ["user:{user}"]
        let bot = try await kb.changeBot(change, as: .admin)
        #expect(bot.systemPrompt == "You are a careful tutor.")
        #expect(bot.sources.map(\.description) == ["kind:pdf", "tag:area:love"])
        #expect(bot.memoryScopes == ["user:{user}"])
        #expect(try await kb.bot("astro", as: .admin) == bot)
    }

    @Test func aChangeThatFailsPartWayChangesNothing() async throws {
        let kb = try await botBase()
        let before = try await kb.bot("astro", as: .admin)
        var change = BotChangeRequest(name: "astro")
        change.systemPrompt = "Something else."
        change.sources = ["kind:note"]
        change.removeSources = ["tag:not-there"]   // fails after the prompt and sources were applied
        let error = await #expect(throws: KBError.self) { try await kb.changeBot(change, as: .admin) }
        #expect(error?.code == .unprocessable)
        #expect(try await kb.bot("astro", as: .admin) == before)
    }

    @Test func requestsNameRelativePathsAsErrors() async throws {
        let kb = try await botBase()
        var change = BotChangeRequest(name: "astro")
        change.addSources = ["notes/planets"]
        let error = await #expect(throws: KBError.self) { try await kb.changeBot(change, as: .admin) }
        #expect(error?.message.contains("notes/planets") == true)
    }
}

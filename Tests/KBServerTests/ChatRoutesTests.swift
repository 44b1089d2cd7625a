import Foundation
import KBCore
import KBKit
import MCP
import Testing
@testable import KBServer

/// The pieces of chat completions that OpenAI's Python client does not reach on its own
/// (Tests/Client/chat_completions.py drives the rest against a running kb serve): the MCP chat
/// prompt and a service without a model. (Reading an upstream's events: ChatTests.)
@Suite struct ChatRoutesTests {
    @Test func withoutAModelTheServiceSaysHowToGiveItOne() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let (status, json) = try await client.call(.post, "/v1/chat/completions", raw: #"{"model": "astro", "messages": [{"role": "user", "content": "Venus"}]}"#)
            #expect(status == 422)
            #expect((((json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String)?.contains("--llm openai:MODEL") == true)
            let (listed, models) = try await client.call(.get, "/v1/models")
            #expect(listed == 200)
            #expect((((models as? [String: Any])?["data"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == ["astro", "chef"])
        }
    }

    @Test func theMCPChatPromptGivesTheBotsPromptAndContextThenTheQuestion() async throws {
        let fixture = try await Fixture()
        let server = try await MCPService(kb: fixture.kb).makeServer()
        let (clientTransport, serverTransport) = await InMemoryTransport.createConnectedPair()
        try await server.start(transport: serverTransport)
        let client = Client(name: "test", version: "1.0")
        _ = try await client.connect(transport: clientTransport)
        let (prompts, _) = try await client.listPrompts()
        #expect(prompts.map(\.name) == ["chat"])
        let (_, messages) = try await client.getPrompt(name: "chat", arguments: ["bot": "astro", "query": "Venus in the tenth house", "user": "ada"])
        let texts = messages.compactMap { if case .text(let text) = $0.content { text } else { nil } }
        #expect(texts.count == 2)
        #expect(texts.first?.hasPrefix("You are an astrology tutor.\n\n<context>") == true)
        #expect(texts.first?.contains("the tenth house favours the arts") == true)
        #expect(texts.first?.contains("Ada has Venus") == true)   // ada's memory
        #expect(texts.last == "Venus in the tenth house")
        await #expect(throws: (any Error).self) { _ = try await client.getPrompt(name: "chat", arguments: ["bot": "nobody", "query": "x"]) }
        await #expect(throws: (any Error).self) { _ = try await client.getPrompt(name: "chat", arguments: ["query": "x"]) }
    }
}

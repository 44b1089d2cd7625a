import Foundation
import KBCore
import KBKit
import KBServer
import MCP
import Testing

@Suite struct MCPServiceTests {
    @Test func aClientInitializesListsToolsAndCallsThem() async throws {
        let fixture = try await Fixture()
        let server = try await MCPService(kb: fixture.kb).makeServer()
        let (clientTransport, serverTransport) = await InMemoryTransport.createConnectedPair()
        try await server.start(transport: serverTransport)
        let client = Client(name: "test", version: "1.0")
        let initialized = try await client.connect(transport: clientTransport)
        #expect(initialized.serverInfo.name == "kb")

        let (tools, _) = try await client.listTools()
        #expect(Set(tools.map(\.name)) == ["search", "context", "remember", "recall", "update_memory", "forget", "extract_memories", "forget_user",
                                            "add_source", "list_sources", "remove_source", "memory_feedback", "consolidate_memories",
                                            "read_source", "read_page", "grep_sources", "sync_sources"])
        for tool in tools {
            #expect(tool.inputSchema.objectValue?["type"]?.stringValue == "object", "\(tool.name)")
        }

        func text(_ content: [Tool.Content]) -> String {
            content.compactMap { if case .text(let text, _, _) = $0 { text } else { nil } }.joined()
        }
        func object(_ content: [Tool.Content]) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(text(content).utf8)) as? [String: Any])
        }

        let remembered = try await client.callTool(name: "remember", arguments: ["content": "Likes rye bread.", "scope": "user:dee"])
        #expect(remembered.isError != true)
        let id = try #require((try object(remembered.content)["memory"] as? [String: Any])?["id"] as? String)

        let recalled = try await client.callTool(name: "recall", arguments: ["query": "rye", "scopes": ["user:dee"]])
        #expect((try object(recalled.content)["hits"] as? [Any])?.count == 1)

        let searched = try await client.callTool(name: "search", arguments: ["query": "dough", "k": 2])
        let hits = try #require(try object(searched.content)["hits"] as? [[String: Any]])
        #expect((hits.first?["sourcePath"] as? String)?.hasSuffix("bread.md") == true)

        let context = try await client.callTool(name: "context", arguments: ["bot": "chef", "query": "bread", "user": "dee", "budget": 300])
        let assembled = try object(context.content)
        #expect((assembled["tokens"] as? Int ?? 999) <= 300)
        #expect((assembled["context"] as? String)?.contains("rye") == true)

        let forgotten = try await client.callTool(name: "forget", arguments: ["id": .string(id)])
        #expect(forgotten.isError != true)
        let missing = try await client.callTool(name: "forget", arguments: ["id": .string(id)])
        #expect(missing.isError == true)
        #expect(text(missing.content).contains("No memory has the id"))
        let bad = try await client.callTool(name: "search", arguments: ["k": 3])
        #expect(bad.isError == true)
        #expect(text(bad.content).contains("\"query\" is missing"))

        await client.disconnect()
        await server.stop()
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
@testable import KBKit
import KBRequests
import KBServer
import MCP
import Testing

/// Rights are decided in KBKit, once: the same scoped token, driven through HTTP and through
/// MCP, is refused the same things with the same words, and allowed the same things.
@Suite struct RightsAcrossEntryPointsTests {
    struct Case: Sendable {
        let tool: String
        let arguments: [String: Value]
        let method: HTTPRequest.Method
        let path: String
        let body: String?
        let allowed: Bool
    }

    @Test func theSameScopedTokenGetsTheSameRefusalsOverHTTPAndMCP() async throws {
        let fixture = try await Fixture()
        let kb = fixture.kb
        var request = TokenRequest(name: "ada-app")
        request.scopes = ["user:ada"]
        request.bots = ["astro"]
        let secret = try await kb.createToken(request, as: .admin).token
        let bob = try await kb.memories(scopes: [try .user("bob")])[0].id
        let ada = try await kb.memories(scopes: [try .user("ada")])[0].id
        var source = SourceRequest(text: "# Kept\n\nA source only the admin may remove.")
        source.id = "kept"
        _ = try await kb.addSource(source, as: .admin)
        let turns: Value = [["role": "user", "content": "I live in Kyiv."]]

        let cases = [
            Case(tool: "search", arguments: ["query": "venus"], method: .post, path: "/v1/search", body: #"{"query": "venus"}"#, allowed: false),
            Case(tool: "search", arguments: ["query": "bread", "bot": "chef"], method: .post, path: "/v1/search",
                 body: #"{"query": "bread", "bot": "chef"}"#, allowed: false),
            Case(tool: "search", arguments: ["query": "venus", "bot": "astro"], method: .post, path: "/v1/search",
                 body: #"{"query": "venus", "bot": "astro"}"#, allowed: true),
            Case(tool: "context", arguments: ["bot": "chef", "query": "bread"], method: .post, path: "/v1/context",
                 body: #"{"bot": "chef", "query": "bread"}"#, allowed: false),
            Case(tool: "context", arguments: ["bot": "astro", "query": "venus", "user": "bob"], method: .post, path: "/v1/context",
                 body: #"{"bot": "astro", "query": "venus", "user": "bob"}"#, allowed: false),
            Case(tool: "context", arguments: ["bot": "astro", "query": "venus", "user": "ada"], method: .post, path: "/v1/context",
                 body: #"{"bot": "astro", "query": "venus", "user": "ada"}"#, allowed: true),
            Case(tool: "remember", arguments: ["content": "Bob likes rye.", "scope": "user:bob"], method: .post, path: "/v1/memories",
                 body: #"{"content": "Bob likes rye.", "scope": "user:bob"}"#, allowed: false),
            Case(tool: "recall", arguments: ["query": "bread", "scopes": ["user:bob"]], method: .post, path: "/v1/memories/search",
                 body: #"{"query": "bread", "scopes": ["user:bob"]}"#, allowed: false),
            Case(tool: "recall", arguments: ["query": "bread"], method: .post, path: "/v1/memories/search", body: #"{"query": "bread"}"#, allowed: false),
            Case(tool: "recall", arguments: ["query": "bread", "scopes": ["user:ada"]], method: .post, path: "/v1/memories/search",
                 body: #"{"query": "bread", "scopes": ["user:ada"]}"#, allowed: true),
            Case(tool: "update_memory", arguments: ["id": .string(bob), "content": "Bob loves bread."], method: .patch, path: "/v1/memories/\(bob)",
                 body: #"{"content": "Bob loves bread."}"#, allowed: false),
            Case(tool: "update_memory", arguments: ["id": .string(ada), "content": "Ada has Venus in the tenth house."], method: .patch,
                 path: "/v1/memories/\(ada)", body: #"{"content": "Ada has Venus in the tenth house."}"#, allowed: true),
            Case(tool: "forget", arguments: ["id": .string(bob)], method: .delete, path: "/v1/memories/\(bob)", body: nil, allowed: false),
            Case(tool: "forget_user", arguments: ["scope": "user:bob"], method: .delete, path: "/v1/memories?scope=user:bob", body: nil, allowed: false),
            Case(tool: "extract_memories", arguments: ["user": "bob", "turns": turns], method: .post, path: "/v1/memories/extract",
                 body: #"{"user": "bob", "turns": [{"role": "user", "content": "I live in Kyiv."}]}"#, allowed: false),
            Case(tool: "add_source", arguments: ["text": "# Planted"], method: .post, path: "/v1/sources", body: ##"{"text": "# Planted"}"##, allowed: false),
            Case(tool: "list_sources", arguments: [:], method: .get, path: "/v1/sources", body: nil, allowed: false),
            Case(tool: "remove_source", arguments: ["id": "kept"], method: .delete, path: "/v1/sources/kept", body: nil, allowed: false),
        ]

        // Over MCP, with the token given to the service.
        let server = try await MCPService(kb: kb, token: secret).makeServer()
        let (clientTransport, serverTransport) = await InMemoryTransport.createConnectedPair()
        try await server.start(transport: serverTransport)
        let client = Client(name: "test", version: "1.0")
        _ = try await client.connect(transport: clientTransport)
        var overMCP: [(allowed: Bool, message: String)] = []
        for item in cases {
            let answer = try await client.callTool(name: item.tool, arguments: item.arguments)
            let text = answer.content.compactMap { if case .text(let text, _, _) = $0 { text } else { nil } }.joined()
            overMCP.append((answer.isError != true, text))
        }
        await client.disconnect()
        await server.stop()

        // Over HTTP, with the token as a bearer.
        let allCases = cases
        let overHTTP = try await fixture.service().application().test(.router) { client -> [(allowed: Bool, message: String)] in
            var overHTTP: [(allowed: Bool, message: String)] = []
            for item in allCases {
                let headers: HTTPFields = [.authorization: "Bearer \(secret)", .contentType: "application/json"]
                let (status, json) = try await client.execute(uri: item.path, method: item.method, headers: headers,
                                                              body: item.body.map { ByteBuffer(string: $0) }) { response in
                    (Int(response.status.code), try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                }
                let message = (json?["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect((200..<300).contains(status) || status == 403, "\(item.method) \(item.path): \(status) \(message)")
                overHTTP.append(((200..<300).contains(status), message))
            }
            return overHTTP
        }

        for (index, item) in cases.enumerated() {
            #expect(overMCP[index].allowed == item.allowed, "MCP \(item.tool) \(item.arguments): \(overMCP[index].message)")
            #expect(overHTTP[index].allowed == item.allowed, "HTTP \(item.method) \(item.path): \(overHTTP[index].message)")
            if !item.allowed {
                #expect(overHTTP[index].message.hasPrefix("The token ada-app "), "\(overHTTP[index].message)")
                #expect(overMCP[index].message == overHTTP[index].message, "\(item.tool)")
            }
        }
        // Nothing the token was refused happened.
        #expect(try await kb.memories(scopes: [try .user("bob")]).map(\.content) == ["Bob has Saturn rising and hates bread."])
        #expect(try await kb.sources(SourceListRequest(), as: .admin).sources.contains { $0.id == "kept" })
    }

    @Test func mcpStopsActingWithARevokedToken() async throws {
        let fixture = try await Fixture()
        var request = TokenRequest(name: "short-lived")
        request.scopes = ["user:ada"]
        let secret = try await fixture.kb.createToken(request, as: .admin).token
        let service = MCPService(kb: fixture.kb, token: secret)
        #expect(try await service.caller() != .admin)
        _ = try await fixture.kb.revokeToken("short-lived", as: .admin)
        try await Task.sleep(nanoseconds: 2_100_000_000)   // the token cache's lifetime
        let error = await #expect(throws: KBError.self) { try await service.caller() }
        #expect(error?.code == .unauthorized && error?.message.contains("revoked") == true)
        await #expect(throws: KBError.self) { try await MCPService(kb: fixture.kb, token: "kb_nothing_here").caller() }
        #expect(try await MCPService(kb: fixture.kb).caller() == .admin)
    }
}

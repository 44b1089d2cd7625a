import Foundation
import Hummingbird
import HummingbirdTesting
import KBKit
import KBRequests
@testable import KBServer
import Testing

/// `POST /mcp`: kb mcp's tools over MCP's streamable HTTP transport, with the HTTP API's tokens
/// and rights (answers checked against the document, as for every route in these tests).
@Suite struct MCPHTTPTests {
    /// Sends one JSON-RPC message; returns the status and the answer's JSON (nil without a body).
    static func send(_ client: some TestClientProtocol, _ message: [String: Any], token: String?,
                     headers extra: HTTPFields = [:]) async throws -> (status: Int, json: [String: Any]?) {
        var headers = extra
        headers[.contentType] = "application/json"
        if headers[.accept] == nil { headers[.accept] = "application/json, text/event-stream" }
        if let token { headers[.authorization] = "Bearer \(token)" }
        let body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: message))
        return try await client.execute(uri: "/mcp", method: .post, headers: headers, body: body) { response in
            (Int(response.status.code), try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        }
    }

    static func request(_ id: Int, _ method: String, _ params: [String: Any] = [:]) -> [String: Any] {
        ["jsonrpc": "2.0", "id": id, "method": method, "params": params]
    }

    /// A tool's answer: whether it is an error, and its first text.
    static func toolAnswer(_ json: [String: Any]?) -> (isError: Bool, text: String) {
        let result = json?["result"] as? [String: Any]
        let text = ((result?["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
        return (result?["isError"] as? Bool ?? true, text)
    }

    @Test func aClientInitialisesListsAndCallsKbsToolsWithItsTokensRights() async throws {
        let fixture = try await Fixture()
        var bobs = TokenRequest(name: "bob")
        bobs.scopes = ["user:bob"]
        let bob = try await fixture.kb.createToken(bobs, as: .admin).token
        try await fixture.service().application().test(.router) { client in
            let initialize = Self.request(1, "initialize", ["protocolVersion": "2025-06-18", "capabilities": [String: Any](),
                                                            "clientInfo": ["name": "test", "version": "1"]])
            let (status, json) = try await Self.send(client, initialize, token: Fixture.token)
            #expect(status == 200)
            let result = try #require(json?["result"] as? [String: Any])
            #expect((result["serverInfo"] as? [String: Any])?["name"] as? String == "kb")
            #expect(try await Self.send(client, ["jsonrpc": "2.0", "method": "notifications/initialized"], token: Fixture.token).status == 202)

            let listed = try await Self.send(client, Self.request(2, "tools/list"), token: Fixture.token)
            let names = ((listed.json?["result"] as? [String: Any])?["tools"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(names == MCPService.specs.map(\.name))

            // The admin token recalls Ada's memory; Bob's token (user:bob) may not read her scope.
            let recall = Self.request(3, "tools/call", ["name": "recall", "arguments": ["query": "venus", "scopes": ["user:ada"]]])
            let asAdmin = Self.toolAnswer(try await Self.send(client, recall, token: Fixture.token).json)
            #expect(!asAdmin.isError && asAdmin.text.contains("tenth house"), "\(asAdmin.text)")
            let asBob = try await Self.send(client, recall, token: bob)
            #expect(asBob.status == 200)
            let refused = Self.toolAnswer(asBob.json)
            #expect(refused.isError && !refused.text.contains("tenth house"), "\(refused.text)")
            let own = Self.toolAnswer(try await Self.send(client, Self.request(4, "tools/call", ["name": "recall", "arguments": ["query": "saturn", "scopes": ["user:bob"]]]), token: bob).json)
            #expect(!own.isError && own.text.contains("Saturn rising"), "\(own.text)")
        }
    }

    @Test func theTransportIsGuardedAsEveryRouteIs() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let list = Self.request(1, "tools/list")
            #expect(try await Self.send(client, list, token: nil).status == 401)
            #expect(try await Self.send(client, list, token: Fixture.token + "x").status == 401)
            #expect(try await Self.send(client, list, token: Fixture.token, headers: [.origin: "http://evil.example"]).status == 403)
            // Not the envelope the document describes: refused before the protocol reads it.
            for bad: [String: Any] in [["jsonrpc": "1.0", "id": 1, "method": "tools/list"], ["jsonrpc": "2.0", "id": 1],
                                       ["jsonrpc": "2.0", "id": 1.5, "method": "tools/list"], ["jsonrpc": "2.0", "id": 1, "method": "tools/list", "extra": 1],
                                       ["jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]]] {
                let (status, json) = try await Self.send(client, bad, token: Fixture.token)
                #expect(status == 400 && errorCode(json) == "invalid_argument", "\(bad)")
            }
            // A client that does not take JSON; an unknown method (a JSON-RPC error, answered 200).
            #expect(try await Self.send(client, list, token: Fixture.token, headers: [.accept: "text/html"]).status == 406)
            let unknown = try await Self.send(client, Self.request(5, "no/such/method"), token: Fixture.token)
            #expect(unknown.status == 200 && (unknown.json?["error"] as? [String: Any])?["code"] as? Int == -32601)
            // No session, so no GET stream: the route is POST only.
            try await client.execute(uri: "/mcp", method: .get, headers: [.authorization: "Bearer \(Fixture.token)"]) { response in
                #expect(response.status == .methodNotAllowed)
            }
        }
    }
}

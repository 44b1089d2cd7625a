import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import Testing
@testable import KBServer

/// The answers and their document have one shape: every service the tests start checks each
/// JSON answer against the OpenAPI document (`AnswerSchema`), kb's objects are closed there, so
/// a field added to an answer without its document fails the test that meets the answer.
@Suite struct AnswerSchemaTests {
    static let schema = AnswerSchema(OpenAPIDocument.document(Limits(), maxEmbeddingInputs: 256))

    @Test func aRealAnswerMatchesAndAnUndocumentedFieldDoesNot() async throws {
        let fixture = try await Fixture()
        var status = try JSONDecoder().decode(JSONValue.self, from: KBJSON.encode(try await fixture.kb.serviceStatus(as: .admin)))
        #expect(Self.schema.problems(method: "GET", path: "/v1/status", status: 200, answer: status) == [])
        guard case .object(var fields) = status else { Issue.record("not an object"); return }
        fields["addedLater"] = .integer(1)
        status = .object(fields)
        let added = try #require(Self.schema.problems(method: "GET", path: "/v1/status", status: 200, answer: status))
        #expect(added == [#"$: the field "addedLater" is not in the document"#])

        // Deeper, a required field gone, a wrong type: each named by its place.
        let bot: JSONValue = ["name": "astro", "systemPrompt": "p", "sources": [.integer(3)], "memoryScopes": [], "colour": "red"]
        let problems = try #require(Self.schema.problems(method: "GET", path: "/v1/bots/{name}", status: 200, answer: bot))
        #expect(problems.contains(#"$: the field "colour" is not in the document"#))
        #expect(problems.contains("$.sources[0]: 3 is not of type string"))
        let error: JSONValue = ["error": ["code": "not_found"]]
        #expect(Self.schema.problems(method: "GET", path: "/v1/bots/{name}", status: 404, answer: error)
                == [#"$.error: the required field "message" is missing"#])
        // A status the route does not document as JSON is not checked here (the route table is).
        #expect(Self.schema.problems(method: "GET", path: "/v1/bots/{name}", status: 299, answer: error) == nil)
    }

    @Test func anAnswerThatDoesNotMatchItsDocumentIsA500NamingTheField() async throws {
        let document: JSONValue = [
            "paths": ["/thing": ["get": ["responses": ["200": ["content": ["application/json": ["schema": ["$ref": "#/components/schemas/Thing"]]]]]]]],
            "components": ["schemas": ["Thing": ["type": "object", "properties": ["name": ["type": "string"]], "additionalProperties": false]]],
        ]
        let router = Router(context: KBRequestContext.self)
        router.add(middleware: AnswerCheckingMiddleware(schema: AnswerSchema(document)))
        router.get("thing") { request, _ in
            try RetrievalService.json(request.uri.queryParameters["extra"] == nil ? ["name": "a"] : ["name": "a", "size": "2"])
        }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/thing", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"name":"a"}"#)
            }
            try await client.execute(uri: "/thing?extra=1", method: .get) { response in
                #expect(response.status == .internalServerError)
                let text = String(buffer: response.body)
                #expect(text.contains("GET /thing") && text.contains(#"\"size\" is not in the document"#), "\(text)")
            }
        }
    }
}

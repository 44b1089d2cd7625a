import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import KBRequests
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
            try Answers.json(request.uri.queryParameters["extra"] == nil ? ["name": "a"] : ["name": "a", "size": "2"])
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

/// Answer schemas read off the answer types (`SchemaDerivation`), and the document's bounds
/// and streams checked on real answers.
@Suite struct SchemaDerivationTests {
    struct Part: Codable { var text: String }
    enum Colour: String, Codable, CaseIterable, SchemaEnumeration { case red, green }
    enum Unmarked: String, Codable { case one }
    struct Sample: Codable, SchemaFieldNotes {
        static let fieldNotes: [String: JSONValue] = ["name": ["description": "Its name."]]
        var name: String
        var count: Int?
        var colour: Colour
        var parts: [Part]
        var scores: [String: Double]
        var at: Date
        var anything: JSONValue
        var inline: [[Int]]
    }
    struct Wrong: Codable { var unmarked: Unmarked }

    @Test func aTypesSchemaSaysWhatItDecodes() throws {
        let derivation = SchemaDerivation(components: [("Sample", Sample.self), ("Part", Part.self)])
        let schemas = try derivation.schemas()
        let expected: JSONValue = [
            "type": "object", "additionalProperties": false,
            "properties": [
                "name": ["type": "string", "description": "Its name."], "count": ["type": "integer"],
                "colour": ["type": "string", "enum": ["red", "green"]],
                "parts": ["type": "array", "items": ["$ref": "#/components/schemas/Part"]],
                "scores": ["type": "object", "additionalProperties": ["type": "number"]],
                "at": ["type": "string"], "anything": [:],
                "inline": ["type": "array", "items": ["type": "array", "items": ["type": "integer"]]],
            ],
            "required": ["name", "colour", "parts", "scores", "at", "anything", "inline"],
        ]
        #expect(schemas["Sample"] == expected)
        #expect(schemas["Part"] == ["type": "object", "additionalProperties": false, "properties": ["text": ["type": "string"]], "required": ["text"]])
        // A closed set of strings that does not say so cannot be derived: the error names the type.
        #expect(throws: SchemaDerivationError.self) { try SchemaDerivation(components: [("Wrong", Wrong.self)]).schemas() }
        do { _ = try SchemaDerivation(components: [("Wrong", Wrong.self)]).schemas() } catch {
            #expect("\(error)".contains("Unmarked") && "\(error)".contains("SchemaEnumeration"))
        }
    }

    @Test func boundsArePartOfTheCheck() {
        let schema = AnswerSchema([:])
        var problems: [String] = []
        let rules: JSONValue = ["type": "object", "properties": [
            "name": ["type": "string", "pattern": "^[a-z]+$", "maxLength": 4],
            "count": ["type": "integer", "minimum": 1, "maximum": 9],
            "tags": ["type": "array", "items": ["type": "string", "minLength": 1], "maxItems": 2],
        ]]
        schema.check(["name": "abc", "count": 3, "tags": ["x"]], against: rules, at: "$", into: &problems)
        #expect(problems == [])
        schema.check(["name": "Abcdef", "count": 0, "tags": ["", "y", "z"]], against: rules, at: "$", into: &problems)
        #expect(problems.sorted() == [
            "$.count: 0 is below the minimum 1",
            #"$.name: "Abcdef" does not match the pattern ^[a-z]+$"#,
            "$.name: 6 characters, more than 4",
            "$.tags: 3 items, more than 2",
            "$.tags[0]: 0 characters, fewer than 1",
        ])
    }

    @Test func aStreamsEventsAreCheckedAndAMismatchBecomesAnErrorEvent() async throws {
        let document: JSONValue = [
            "paths": ["/stream": ["get": ["responses": ["200": ["content": ["text/event-stream": [
                "schema": ["type": "string"], "x-kb-event": ["$ref": "#/components/schemas/Chunk"],
            ]]]]]]],
            "components": ["schemas": ["Chunk": ["type": "object", "properties": ["n": ["type": "integer", "maximum": 2], "s": ["type": "string"]],
                                             "additionalProperties": false]]],
        ]
        let router = Router(context: KBRequestContext.self)
        router.add(middleware: AnswerCheckingMiddleware(schema: AnswerSchema(document)))
        router.get("stream") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { writer in
                // The first event's "é" is cut between two writes, as a chunk of a stream may cut a character.
                let first = Array(#"data: {"n":1,"s":"é"}"#.utf8) + [0x0A, 0x0A], cut = first.firstIndex(of: 0xC3)! + 1
                try await writer.write(ByteBuffer(bytes: first[..<cut]))
                try await writer.write(ByteBuffer(bytes: first[cut...]))
                for event in ["data: {\"n\":", "3}\n\n: keep-alive\n\ndata: [DONE]\n\n"] { try await writer.write(ByteBuffer(string: event)) }
                try await writer.finish(nil)
            })
        }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/stream", method: .get) { response in
                let events = String(buffer: response.body).components(separatedBy: "\n\n").filter { !$0.isEmpty }
                #expect(events.count == 4)
                #expect(events.first == #"data: {"n":1,"s":"é"}"#)
                #expect(events[1].contains("answer_check") && events[1].contains("$.n: 3 is above the maximum 2"), "\(events)")
                #expect(events[2] == ": keep-alive")
                #expect(events.last == "data: [DONE]")
            }
        }
    }
}

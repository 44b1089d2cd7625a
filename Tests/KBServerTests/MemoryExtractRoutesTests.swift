import Foundation
import HummingbirdTesting
import KBCore
import KBKit
import KBServer
import KBStubServers
import Testing
import KBLanguageModel

/// `POST /v1/memories/extract`: a failing chat model is a 502 naming the language model; without a
/// model kb's own patterns answer, and bad requests are 400.
@Suite(.serialized) struct MemoryExtractRoutesTests {
    @Test func aFailingModelIs502AndWithoutOneThePatternsAnswer() async throws {
        let fixture = try await Fixture()
        let script = ModelScript(.status(500))
        let server = try await modelServer(script)
        defer { server.stop() }
        let patient = try ChatModel(spec: "openai:fake", url: server.url.absoluteString, timeout: 60, environment: [:])
        var configuration = ServiceConfiguration()
        configuration.token = Fixture.token
        configuration.chatModel = patient
        let turns = "[{\"role\": \"user\", \"content\": \"I live in Kyiv.\"}]"
        try await RetrievalService(kb: fixture.kb, configuration: configuration).application().test(.router) { client in
            let (status, json) = try await client.call(.post, "/v1/memories/extract", raw: "{\"user\": \"ada\", \"turns\": \(turns)}")
            #expect(status == 502)
            #expect(((json as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == "language_model")
        }
        // Without a model, the patterns answer.
        try await fixture.service().application().test(.router) { client in
            let (status, json) = try await client.call(.post, "/v1/memories/extract", raw: "{\"user\": \"ada\", \"apply\": true, \"turns\": \(turns)}")
            #expect(status == 200)
            let proposals = try #require((json as? [String: Any])?["proposals"] as? [[String: Any]])
            #expect(proposals.map { $0["content"] as? String } == ["Lives in Kyiv."] && proposals[0]["memory"] != nil)
            let empty = try await client.call(.post, "/v1/memories/extract", raw: "{\"user\": \"ada\", \"turns\": []}")
            #expect(empty.status == 400)
            let scoped = try await client.call(.post, "/v1/memories/extract", raw: "{\"user\": \"ada\", \"scope\": \"user:bob\", \"turns\": \(turns)}")
            #expect(scoped.status == 400)
        }
    }
}

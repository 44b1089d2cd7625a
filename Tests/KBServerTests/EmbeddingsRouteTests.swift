import Foundation
import KBCore
import KBEmbed
import KBKit
import KBServer
import KBStubServers
import KBTestSupport
import Testing

/// `POST /v1/embeddings` serves what the in-process model gives, to kb's own HTTP embedder.
@Suite struct EmbeddingsRouteTests {
    @Test func kbServesEmbeddingsThatEqualTheInProcessModel() async throws {
        guard let local = try? await EmbedderChoice.local.make() else {
            Issue.record("the local model is not installed; run scripts/install-model.sh")
            return
        }
        let fixture = try await Fixture()
        let server = try await LiveServer.start(fixture.service(token: nil).router())
        defer { server.stop() }
        var configuration = HTTPEmbedder.Configuration(model: "all-MiniLM-L6-v2", baseURL: server.url)
        configuration.encoding = "base64"
        let remote = try await HTTPEmbedder.connect(configuration)
        let texts = ["Venus rules love.", "Saturn returns every 29 years.", "Сатурн", "a much longer passage " + String(repeating: "about the houses ", count: 20)]
        #expect(try await remote.embed(texts, role: .passage) == (try await local.embed(texts, role: .passage)))
        configuration.encoding = "float"
        let floats = try await HTTPEmbedder.connect(configuration, dimension: 384)
        // /v1/embeddings embeds passages (OpenAI's request has no role, and MiniLM no prompts, so
        // a query sent there is its text): the in-process passage vectors, bit for bit. (In-process
        // queries may be int8 under `auto` in kb serve's mode: `BERTEmbedder.queryPrecision`.)
        #expect(try await floats.embed(texts, role: .query) == (try await local.embed(texts, role: .passage)))
    }
}

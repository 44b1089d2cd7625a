import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import KBCore
import KBEmbed
import KBStubServers
import NIOCore
import Testing

/// The OpenAI-compatible embedder against a stub server that answers as each test scripts it:
/// batching, order, retries, timeouts, errors that name their fix, cancellation.
@Suite(.serialized) struct HTTPEmbedderTests {
    @Test func batchesKeepBothLimitsAndTheOrder() {
        #expect(HTTPEmbedder.batches([1, 1, 1, 1, 1], maxInputs: 2, maxTokens: 100) == [0..<2, 2..<4, 4..<5])
        #expect(HTTPEmbedder.batches([60, 60, 10, 200, 5], maxInputs: 10, maxTokens: 100) == [0..<1, 1..<3, 3..<4, 4..<5])
        #expect(HTTPEmbedder.batches([], maxInputs: 2, maxTokens: 10).isEmpty)
    }

    @Test func vectorsComeBackInInputOrderAcrossConcurrentBatches() async throws {
        let script = FaultScript()
        let server = try await faultServer(script)
        defer { server.stop() }
        var configuration = quickConfiguration(server.url)
        configuration.maxInputsPerRequest = 3
        let embedder = try await HTTPEmbedder.connect(configuration)
        #expect(embedder.dimension == 384)
        let texts = (0..<20).map { "text number \($0)" }
        let vectors = try await embedder.embed(texts, role: .passage)
        #expect(vectors == texts.map(HashingEmbedder().vector))
        // 1 probe + 7 batches of at most 3 (more only if a busy machine made one time out and retry).
        #expect(await script.requests >= 1 + 7)
        #expect(Set(await script.inputs).isSuperset(of: texts))
        #expect(await script.authorization.allSatisfy { $0 == "Bearer sk-test-secret" })
        #expect(embedder.tokensUsed >= 60)   // the probe was made by another instance
    }

    @Test func retriesHonourRetryAfterAndRecoverFromServerErrors() async throws {
        let script = FaultScript([.status(429, retryAfter: "0"), .status(500, retryAfter: nil), .status(503, retryAfter: nil), .ok])
        let server = try await faultServer(script)
        defer { server.stop() }
        let embedder = try await HTTPEmbedder.connect(quickConfiguration(server.url), dimension: 384)
        let vectors = try await embedder.embed(["one", "two"], role: .passage)
        #expect(vectors == ["one", "two"].map(HashingEmbedder().vector))
        #expect(await script.requests == 4)
    }

    @Test func slowAnswersTimeOutAndAreRetriedThenReported() async throws {
        let script = FaultScript([.slow(seconds: 4), .slow(seconds: 4)])
        let server = try await faultServer(script)
        defer { server.stop() }
        let embedder = try await HTTPEmbedder.connect(quickConfiguration(server.url, attempts: 2, timeout: 1), dimension: 384)
        // Each try ends at its 1 s timeout, not at the 4 s answer (which would have succeeded):
        // the error says so. (No wall-clock bound here: a loaded machine stretches any.)
        let error = await #expect(throws: KBError.self) { try await embedder.embed(["one"], role: .passage) }
        #expect(error?.message.contains("failed 2 times") == true)
        #expect(error?.message.contains("timeout") == true)
        // The server saw the first try; on a loaded machine the second may time out before its
        // request is read (the message above already says both tries were made).
        #expect((1...2).contains(await script.requests))
    }

    @Test(arguments: [
        (401, "KB_EMBEDDINGS_API_KEY"), (403, "permissions"), (404, "model name (test-model)"), (400, "embeddings model"),
    ])
    func clientErrorsAreNotRetriedAndSayWhatToCheck(status: Int, hint: String) async throws {
        let script = FaultScript([.status(status, retryAfter: nil)])
        let server = try await faultServer(script)
        defer { server.stop() }
        let embedder = try await HTTPEmbedder.connect(quickConfiguration(server.url), dimension: 384)
        let error = await #expect(throws: KBError.self) { try await embedder.embed(["one"], role: .passage) }
        #expect(error?.message.contains(hint) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("sk-test-secret") == false)
        #expect(await script.requests == 1)
    }

    @Test(arguments: [
        (FaultScript.Reply.malformed, "malformed JSON"), (.dimension(100), "100-dim"), (.fewer, "1 vectors for 2 inputs"),
    ])
    func badAnswersAreRefused(reply: FaultScript.Reply, message: String) async throws {
        let script = FaultScript([reply])
        let server = try await faultServer(script)
        defer { server.stop() }
        let embedder = try await HTTPEmbedder.connect(quickConfiguration(server.url), dimension: 384)
        let error = await #expect(throws: KBError.self) { try await embedder.embed(["one", "two"], role: .passage) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func anUnreachableEndpointIsNamed() async throws {
        var configuration = quickConfiguration(URL(string: "http://127.0.0.1:9/v1")!, attempts: 2)
        configuration.timeout = 2
        let error = await #expect(throws: KBError.self) { try await HTTPEmbedder.connect(configuration) }
        #expect(error?.message.contains("127.0.0.1:9") == true)
    }

    /// Cancelling a request as its answer arrives deadlocked URLSession.data(for:) on Linux
    /// (swift-corelibs-foundation#5412); dataCancellingSafely must finish every time, with the
    /// answer or URLError(.cancelled).
    @Test func cancellingRequestsAsTheyFinishNeverHangs() async throws {
        let router = Router()
        router.get("/v1/wait/:micros") { _, context -> String in
            try await Task.sleep(nanoseconds: UInt64(context.parameters.get("micros", as: Int.self) ?? 0) * 1000)
            return "done"
        }
        let server = try await LiveServer.start(router)
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral)
        var answered = 0, cancelled = 0
        for round in 0..<300 {
            let url = server.url.appendingPathComponent("wait/\(round % 7 * 150)")
            let call = Task { try await session.dataCancellingSafely(from: url) }
            try await Task.sleep(nanoseconds: UInt64(round % 5) * 200_000)
            call.cancel()
            do {
                let (data, _) = try await call.value
                #expect(String(decoding: data, as: UTF8.self) == "done")
                answered += 1
            } catch let error as URLError {
                #expect(error.code == .cancelled)
                cancelled += 1
            }
        }
        #expect(answered + cancelled == 300)
        // A request the server never answers in time ends when cancelled.
        let slow = Task { try await session.dataCancellingSafely(from: server.url.appendingPathComponent("wait/2000000")) }
        try await Task.sleep(nanoseconds: 50_000_000)
        slow.cancel()
        await #expect(throws: URLError.self) { try await slow.value }
    }
}

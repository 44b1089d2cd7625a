import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import Logging
import KBCore
import KBEmbed
import KBIngest
import KBKit
import KBServer
import KBTestSupport
import NIOCore
import ServiceLifecycle
import Testing

/// A real HTTP server on 127.0.0.1 (a free port), for client tests.
struct LiveServer {
    let url: URL
    let group: ServiceGroup
    let task: Task<Void, any Error>

    static func start<Context: RequestContext>(_ router: Router<Context>) async throws -> LiveServer where Context.Source == ApplicationRequestContextSource {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical   // stopping a test server logs "already closed"; not news
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "test"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = stream.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        return LiveServer(url: URL(string: "http://127.0.0.1:\(port)/v1")!, group: group, task: task)
    }

    /// Shuts the server down gracefully: connections in progress are finished and closed (a
    /// cancelled server task can drop an accepted connection unclosed, which NIO traps on).
    func stop() {
        let group = group
        Task { await group.triggerGracefulShutdown() }
    }
}

/// What the fault-injecting server does with each request, and what it saw.
actor FaultScript {
    enum Reply: Sendable {
        case ok
        case status(Int, retryAfter: String?)
        case slow(seconds: Double)
        case malformed
        case dimension(Int)
        case fewer
    }
    var replies: [Reply]
    var requests = 0
    var inputs: [String] = []
    var authorization: [String] = []
    /// Answer 500 to any batch holding a text with this word.
    var poison: String?

    init(_ replies: [Reply] = [], poison: String? = nil) {
        self.replies = replies
        self.poison = poison
    }

    func next(_ texts: [String], authorization header: String?) -> Reply {
        requests += 1
        authorization.append(header ?? "")
        if let poison, texts.contains(where: { $0.contains(poison) }) { return .status(500, retryAfter: nil) }
        if gone { return .status(404, retryAfter: nil) }
        inputs += texts
        return replies.isEmpty ? .ok : replies.removeFirst()
    }

    func clearPoison() { poison = nil }

    /// The endpoint has moved: every later request is a 404 (a stopped server may still be listening
    /// for a moment, and its port may go to another test's server).
    var gone = false
    func moveAway() { gone = true }
}

func faultServer(_ script: FaultScript, dimension: Int = 384) async throws -> LiveServer {
    let router = Router()
    let hashing = HashingEmbedder()
    router.post("/v1/embeddings") { request, _ -> Response in
        let body = try await request.body.collect(upTo: 1 << 22)
        let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
        let texts = json["input"] as? [String] ?? [(json["input"] as? String) ?? ""]
        let reply = await script.next(texts, authorization: request.headers[.authorization])
        var vectors = texts.map(hashing.vector)
        switch reply {
        case .ok: break
        case .status(let code, let retryAfter):
            var headers: HTTPFields = [.contentType: "application/json"]
            if let retryAfter { headers[.retryAfter] = retryAfter }
            return Response(status: .init(code: code), headers: headers,
                            body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"message":"scripted failure \#(code)"}}"#)))
        case .slow(let seconds):
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        case .malformed:
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{\"data\": [")))
        case .dimension(let d):
            vectors = vectors.map { Array($0.prefix(d)) }
        case .fewer:
            vectors.removeLast()
        }
        let data = vectors.enumerated().reversed().map { ["object": "embedding", "index": $0.offset, "embedding": $0.element] as [String: Any] }
        let answer: [String: Any] = ["object": "list", "data": data, "model": "hashing", "usage": ["prompt_tokens": texts.count * 3, "total_tokens": texts.count * 3]]
        return Response(status: .ok, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: answer))))
    }
    return try await LiveServer.start(router)
}

func quickConfiguration(_ url: URL, attempts: Int = 4, timeout: Double = 30) -> HTTPEmbedder.Configuration {
    var configuration = HTTPEmbedder.Configuration(model: "test-model", baseURL: url, apiKey: "sk-test-secret")
    configuration.maxAttempts = attempts
    configuration.initialBackoff = 0.01
    configuration.maxBackoff = 0.05
    configuration.timeout = timeout
    return configuration
}

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
        let started = Date()
        let error = await #expect(throws: KBError.self) { try await embedder.embed(["one"], role: .passage) }
        #expect(error?.message.contains("failed 2 times") == true)
        #expect(error?.message.contains("timeout") == true)
        // Each try waited for its 1 s timeout, not for the 4 s answer.
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 1.5 && elapsed < 7.5, "\(elapsed)")
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

    @Test func aFailedIngestLeavesUnfinishedSourcesAsTheyWereAndTheRerunDoesNotPayTwice() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-remote-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        for i in 0..<80 { try "# Note \(i)\n\nText of note number \(i).".write(to: notes.appendingPathComponent(String(format: "n%02d.md", i)), atomically: true, encoding: .utf8) }
        let script = FaultScript()
        let server = try await faultServer(script)
        defer { server.stop() }
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root))
        var configuration = quickConfiguration(server.url, attempts: 2)
        configuration.maxInputsPerRequest = 16
        configuration.maxConcurrentRequests = 1
        let embedder = try await HTTPEmbedder.connect(configuration, dimension: 384)
        let record = EmbedderChoice.record(for: embedder, choice: .openAI(model: "test-model", url: server.url.absoluteString))

        // Everything in once; then one note changes and the service fails on it.
        let first = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(first.added == 80 && first.failed.isEmpty)
        let before = try await kb.sources(as: .admin).map { "\($0.path) \($0.contentHash)" }
        let vectorsBefore = try await kb.status(as: .admin).vectors
        try "# Note 79\n\nChanged text, poison.".write(to: notes.appendingPathComponent("n79.md"), atomically: true, encoding: .utf8)
        for i in 100..<200 { try "# Note \(i)\n\nText of note number \(i).".write(to: notes.appendingPathComponent(String(format: "n%03d.md", i)), atomically: true, encoding: .utf8) }
        await script.setPoisonForTesting("poison")
        let failed = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(!failed.failed.isEmpty)
        // n79.md is as it was (old hash); nothing was half-written; the new notes are not in.
        let known = Set(before.map { $0.split(separator: " ")[0] })
        let after = try await kb.sources(as: .admin).filter { known.contains(Substring($0.path)) }.map { "\($0.path) \($0.contentHash)" }
        #expect(after == before)
        #expect(try await kb.status(as: .admin).vectors == vectorsBefore)
        #expect(try await kb.sources(as: .admin).count == 80)
        // The first 64 new texts were answered before the failure, and are kept.
        let cachedAfterFailure = try await kb.status(as: .admin).cachedVectors["openai:test-model"] ?? 0
        #expect(cachedAfterFailure == 80 + 64)

        // The service recovers: the re-run sends only texts it never answered.
        await script.clearPoison()
        let sentBefore = await script.inputs.count
        let rerun = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(rerun.failed.isEmpty)
        let sentOnRerun = await script.inputs.count - sentBefore
        #expect(sentOnRerun == 101 - 64)
        #expect(try await kb.status(as: .admin).vectors["openai:test-model"] == 180)
        #expect(try await kb.status(as: .admin).tokensUsed["openai:test-model"] ?? 0 > 0)
        // Re-ingesting the same texts into a fresh index through the same cache would cost nothing:
        let sentNow = await script.inputs.count
        try await kb.remove([notes.appendingPathComponent("n10.md").path], as: .admin)
        _ = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(await script.inputs.count == sentNow)
    }
}

extension FaultScript {
    func setPoisonForTesting(_ word: String) { poison = word }
}

@Suite(.serialized) struct ReindexTests {
    @Test func reindexFillsANewVectorSetResumesAfterAFailureAndSwitchesAtomically() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-reindex-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        for i in 0..<300 { try "# Note \(i)\n\nPlanet note number \(i) about Venus and time.".write(to: notes.appendingPathComponent(String(format: "n%03d.md", i)), atomically: true, encoding: .utf8) }
        try "# Last\n\nThe poison paragraph.".write(to: notes.appendingPathComponent("z.md"), atomically: true, encoding: .utf8)
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root))
        let (local, localRecord) = try await kb.embedder(.hashing)
        _ = try await kb.ingest([notes.path], options: IngestOptions(), embedder: local, record: localRecord, as: .admin)
        _ = try await kb.remember(MemoryDraft("Remember the poison-free fact."), as: .admin)

        let script = FaultScript(poison: "poison paragraph")
        let server = try await faultServer(script)
        defer { server.stop() }
        let choice = EmbedderChoice.openAI(model: "remote", url: server.url.absoluteString)
        setenv("KB_EMBEDDINGS_MAX_ATTEMPTS", "2", 1)
        setenv("KB_EMBEDDINGS_TIMEOUT", "30", 1)

        // The remote service fails on one snippet: the index still searches with the old vectors.
        await #expect(throws: KBError.self) { try await kb.reindex(to: choice, as: .admin) }
        var status = try await kb.status(as: .admin)
        #expect(status.embedder?.name == "hashing-384")
        let partial = status.vectors["openai:remote"] ?? 0
        #expect(partial >= 256 && partial < 302)
        var query = SearchQuery("Venus time")
        query.mode = .vector
        #expect(try await kb.search(query, as: .admin).embedder == "hashing-384")

        // It recovers: the rerun embeds only what is missing, then switches.
        await script.clearPoison()
        let sentBefore = await script.inputs.count
        let report = try await kb.reindex(to: choice, as: .admin)
        #expect(report.switched)
        #expect(report.embedded == 302 - partial)
        #expect(await script.inputs.count - sentBefore == 1 + (302 - partial))   // 1: the dimension probe
        status = try await kb.status(as: .admin)
        #expect(status.embedder?.name == "openai:remote")
        #expect(status.embedder?.spec == "openai:remote@\(server.url.absoluteString)")
        #expect(status.vectors == ["hashing-384": 302, "openai:remote": 302])
        let after = try await kb.search(query, as: .admin)
        #expect(after.embedder == "openai:remote")
        #expect(!after.hits.isEmpty)

        // Back to the old embedder: its vectors are still there, nothing is embedded again.
        let back = try await kb.reindex(to: .hashing, dropOld: true, as: .admin)
        #expect(back.embedded == 0 && back.switched)
        #expect(try await kb.status(as: .admin).vectors == ["hashing-384": 302])
        unsetenv("KB_EMBEDDINGS_MAX_ATTEMPTS")
        unsetenv("KB_EMBEDDINGS_TIMEOUT")
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

@Suite struct EmbedderPrefixTests {
    @Test func aRemoteEmbedderGetsItsPrefixesAndTheIndexRemembersThem() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-prefix-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        try "# Saturn\n\nSaturn returns after twenty-nine years.".write(to: notes.appendingPathComponent("saturn.md"), atomically: true, encoding: .utf8)
        let script = FaultScript()
        let server = try await faultServer(script)
        defer { server.stop() }
        let choice = try EmbedderChoice.with(.openAI(model: "test-model", url: server.url.absoluteString),
                                             queryPrefix: "search_query: ", passagePrefix: "search_document: ")
        #expect(try EmbedderChoice(choice.spec) == choice)
        let path = TestBackend.freshIndex(in: root)
        let kb = try KnowledgeBase.open(at: path)
        let (embedder, record) = try await kb.embedder(choice)
        #expect(record.name == #"openai:test-model [query: "search_query: ", passage: "search_document: "]"#)
        let report = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty)
        #expect(await script.inputs.contains("search_document: Saturn returns after twenty-nine years."))

        // A new process finds the prefixes in the index: queries get theirs.
        let reopened = try KnowledgeBase.open(at: path)
        #expect(try await reopened.status(as: .admin).embedder?.spec == choice.spec)
        var query = SearchQuery("when does Saturn return")
        query.mode = .vector
        let results = try await reopened.search(query, as: .admin)
        #expect(results.hits.first?.sourceTitle == "Saturn")
        #expect(await script.inputs.contains("search_query: when does Saturn return"))
        // Other prefixes are another embedder: the index refuses to mix them.
        let other = try EmbedderChoice.with(.openAI(model: "test-model", url: server.url.absoluteString), queryPrefix: "query: ", passagePrefix: nil)
        await #expect(throws: KBError.self) { _ = try await reopened.embedder(other) }
    }
}

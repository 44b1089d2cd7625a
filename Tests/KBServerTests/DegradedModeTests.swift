import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBRequests
import KBSQLite
import KBIngest
@testable import KBKit
import KBServer
import KBStubServers
import KBTestSupport
import Testing

/// Keeps answering when parts fail: keyword answers when the query cannot be embedded, recovery
/// without a restart, a moved endpoint, and errors that never show internals.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DegradedModeTests {
    static func notes() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-degraded-\(UUID().uuidString)")
        for (name, text) in [
            ("notes/venus.md", "# Venus\n\nVenus rules love, beauty and money. Venus in the tenth house favours the arts."),
            ("notes/saturn.md", "# Saturn\n\nSaturn rules discipline, time and the long climb of a career."),
            ("notes/bread.md", "# Bread\n\nBread needs flour, water, salt and time."),
        ] {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return root
    }

    static func body(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
    }

    @Test func aMissingModelDegradesToKeywordsAndTheServiceRecoversByItself() async throws {
        let root = try Self.notes()
        let path = TestBackend.freshIndex(in: root)
        let built = try KnowledgeBase.open(at: path)
        let (embedder, record) = try await built.embedder(.local)
        #expect(try await built.ingest([root.appendingPathComponent("notes").path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        var bot = BotRequest(name: "tutor")
        bot.sources = [root.appendingPathComponent("notes").path]
        _ = try await built.createBot(bot, as: .admin)

        // The same index in a process whose model folder is empty.
        let modelDir = root.appendingPathComponent("models/all-MiniLM-L6-v2")   // a model is known by its folder's name
        try FileManager.default.createDirectory(at: modelDir, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["KB_MODEL_DIR"] = modelDir.path
        let kb = try KnowledgeBase.open(at: path, create: false, environment: environment)
        kb.recoverEmbedderInBackground(first: 0.05, longest: 0.2)
        var service = ServiceConfiguration()
        service.token = nil
        try await RetrievalService(kb: kb, configuration: service).application().test(.router) { client in
            func post(_ path: String, _ json: [String: Any]) async throws -> (Int, [String: Any]) {
                try await client.execute(uri: path, method: .post, headers: [.contentType: "application/json"],
                                         body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))) { (Int($0.status.code), Self.body($0)) }
            }
            let (status, context) = try await post("/v1/context", ["bot": "tutor", "query": "discipline and a career"])
            #expect(status == 200)
            #expect(((context["degraded"] as? [String: Any])?["reason"] as? String)?.contains("not installed") == true)
            #expect((context["context"] as? String)?.contains("Saturn") == true)

            let (searchStatus, search) = try await post("/v1/search", ["query": "discipline"])
            #expect(searchStatus == 200)
            #expect(search["mode"] as? String == "keyword" && search["degraded"] != nil)
            #expect((search["hits"] as? [Any])?.isEmpty == false)

            // Vector mode has nothing to fall back to: 503, without the model's path.
            let (vectorStatus, vector) = try await post("/v1/search", ["query": "discipline", "mode": "vector"])
            #expect(vectorStatus == 503)
            let message = (vector["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("request") && !message.contains(modelDir.path))

            let statusBody = try await client.execute(uri: "/v1/status", method: .get) { Self.body($0) }
            let embedderStatus = try #require(statusBody["queryEmbedder"] as? [String: Any])
            #expect(embedderStatus["available"] as? Bool == false)
            #expect((embedderStatus["degradedAnswers"] as? Int ?? 0) >= 2)

            // The model comes back; the background probe notices without a restart. The test waits
            // for the probe's own event, however long a loaded machine takes to run it (no deadline:
            // the suite's time limit only guards against a probe that never runs).
            let (events, continuation) = AsyncStream.makeStream(of: EmbedderHealthEvent.self)
            kb.onEmbedderHealthChange { continuation.yield($0) }
            let installed = Locations.modelDirectory(ProcessInfo.processInfo.environment)
            let files = try FileManager.default.contentsOfDirectory(atPath: installed)
            // config.json last: a model folder counts as installed once it is there.
            for file in files.filter({ $0 != "config.json" }) + files.filter({ $0 == "config.json" }) {
                try FileManager.default.createSymbolicLink(atPath: modelDir.appendingPathComponent(file).path, withDestinationPath: installed + "/" + file)
            }
            for await event in events {
                if case .recovered = event { break }
            }
            #expect(kb.queryEmbedderStatus.available)
            #expect(kb.queryEmbedderStatus.recoveries == 1)
            let (_, recovered) = try await post("/v1/context", ["bot": "tutor", "query": "discipline and a career"])
            #expect(recovered["degraded"] == nil)
            let (_, hybrid) = try await post("/v1/search", ["query": "discipline"])
            #expect(hybrid["mode"] as? String == "hybrid" && hybrid["degraded"] == nil)
        }
    }

    @Test func aRemoteIndexIsSearchedThroughAMovedEndpoint() async throws {
        let root = try Self.notes()
        let path = TestBackend.freshIndex(in: root)
        let oldScript = FaultScript()
        let old = try await faultServer(oldScript)
        defer { old.stop() }
        let built = try KnowledgeBase.open(at: path)
        let (embedder, record) = try await built.embedder(.openAI(model: "test-model", url: old.url.absoluteString))
        #expect(try await built.ingest([root.appendingPathComponent("notes").path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        await oldScript.moveAway()

        let script = FaultScript()
        let moved = try await faultServer(script)
        defer { moved.stop() }
        var environment = ProcessInfo.processInfo.environment
        environment["KB_EMBEDDINGS_URL"] = nil
        let kb = try KnowledgeBase.open(at: path, create: false, environment: environment, embedderURL: moved.url.absoluteString)
        var query = SearchQuery("discipline and time")
        query.mode = .vector
        let results = try await kb.search(query, as: .admin)
        #expect(results.embedder == "openai:test-model" && results.degraded == nil)
        #expect(results.hits.first?.sourcePath.hasSuffix("saturn.md") == true)
        #expect(await script.inputs.contains("discipline and time"))
        // The index still records the old endpoint: without the override, hybrid degrades and vector fails.
        let stale = try KnowledgeBase.open(at: path, create: false, environment: environment)
        #expect(try await stale.search(SearchQuery("discipline"), as: .admin).degraded != nil)
        await #expect(throws: KBError.self) { try await stale.search(query, as: .admin) }
        // An endpoint given for an index that is not remote is a mistake, named.
        let local = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root, name: "other.sqlite"), environment: environment,
                                           embedderURL: moved.url.absoluteString)
        let (hashing, hashingRecord) = try await local.embedder(.hashing)
        _ = try await local.ingest([root.appendingPathComponent("notes").path], options: IngestOptions(), embedder: hashing, record: hashingRecord, as: .admin)
        let error = await #expect(throws: KBError.self) { try await local.search(SearchQuery("discipline"), as: .admin) }
        #expect(error?.message.contains("openai:MODEL") == true)
    }

    @Test(.enabled(if: TestBackend.isSQLite, "breaks the index with SQL on the file"))
    func aDatabaseErrorIsA500WithARequestIDAndNoInternals() async throws {
        let fixture = try await Fixture()
        try await (fixture.kb.store as! SQLiteStore).write { db in try db.execute(sql: "DROP TABLE bots") }
        try await fixture.service().application().test(.router) { client in
            let (status, header, body) = try await client.execute(uri: "/v1/bots", method: .get,
                                                                   headers: [.authorization: "Bearer \(Fixture.token)"]) {
                (Int($0.status.code), $0.headers[HTTPField.Name("X-Request-ID")!], String(buffer: $0.body))
            }
            #expect(status == 500)
            let id = try #require(header)
            #expect(body.contains(id))
            for secret in [fixture.kb.path, "SELECT", "sqlite", "SQLite", "no such table", "bots"] {
                #expect(!body.contains(secret), "the 500 body shows \(secret): \(body)")
            }
        }
    }

    @Test func everyResponseCarriesARequestIDAndTheBearerSchemeIsCaseInsensitive() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
                let status = try await client.execute(uri: "/v1/bots", method: .get, headers: [.authorization: "\(scheme) \(Fixture.token)"]) {
                    Int($0.status.code)
                }
                #expect(status == 200, "\(scheme)")
            }
            let given = try await client.execute(uri: "/v1/bots", method: .get,
                                                 headers: [.authorization: "Bearer \(Fixture.token)", HTTPField.Name("X-Request-ID")!: "trace-42"]) {
                $0.headers[HTTPField.Name("X-Request-ID")!]
            }
            #expect(given == "trace-42")
            let unauthorized = try await client.execute(uri: "/v1/bots", method: .get, headers: [.authorization: "Basic abc"]) {
                (Int($0.status.code), $0.headers[HTTPField.Name("X-Request-ID")!])
            }
            #expect(unauthorized.0 == 401 && unauthorized.1?.isEmpty == false)
            let missing = try await client.execute(uri: "/v1/nothing", method: .get, headers: [.authorization: "Bearer \(Fixture.token)"]) {
                $0.headers[HTTPField.Name("X-Request-ID")!]
            }
            #expect(missing?.isEmpty == false)
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import KBRequests
import KBServer
import MCP
import NIOCore
import Testing

/// `POST/GET/DELETE /v1/sources`, `GET /v1/jobs/{id}` and the MCP tools for sources.
@Suite struct SourcesAPITests {
    static let pdf = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("KBIngestTests/Fixtures/pdf/book.pdf")

    /// Sends raw bytes with a content type; the answer's status, JSON and headers.
    func send(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, bytes: Data?, type: String?,
              headers extra: HTTPFields = [:]) async throws -> (status: Int, json: [String: Any], headers: HTTPFields) {
        var headers: HTTPFields = [.authorization: "Bearer \(Fixture.token)"]
        if let type { headers[.contentType] = type }
        for field in extra { headers[field.name] = field.value }
        return try await client.execute(uri: uri, method: method, headers: headers, body: bytes.map { ByteBuffer(bytes: $0) }) { response in
            (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:],
             response.headers)
        }
    }

    @Test func sourcesAddedOverHTTPAndMCPAreCitedForTheirBotAndGoneOnceDeleted() async throws {
        let fixture = try await Fixture()
        let service = fixture.service()
        try await service.application().test(.router) { client in
            // A text (JSON), read at once.
            let text = try await client.call(.post, "/v1/sources",
                                             ["text": "# Tides\n\nThe tides follow the moon; spring tides come at new and full moon.",
                                              "id": "tides", "bots": ["astro"]])
            #expect(text.status == 201)
            // A PDF (its bytes), read in the background.
            let pdf = try await send(client, .post, "/v1/sources?id=book&title=The%20Book&bot=astro&tag=astronomy",
                                     bytes: try Data(contentsOf: Self.pdf), type: "application/pdf")
            #expect(pdf.status == 202)
            let job = try #require(pdf.json["job"] as? [String: Any])
            #expect(job["state"] as? String == "queued")
            let jobID = try #require(job["id"] as? String)
            #expect(pdf.headers[.location] == "/v1/jobs/\(jobID)")
            // A text through MCP.
            let server = try await MCPService(kb: fixture.kb).makeServer()
            let (clientTransport, serverTransport) = await InMemoryTransport.createConnectedPair()
            try await server.start(transport: serverTransport)
            let mcp = Client(name: "test", version: "1.0")
            _ = try await mcp.connect(transport: clientTransport)
            let added = try await mcp.callTool(name: "add_source", arguments: [
                "text": "# Eclipses\n\nA solar eclipse needs a new moon near a node.", "id": "eclipses", "bots": ["astro"]])
            #expect(added.isError != true)

            #expect(await fixture.kb.runQueuedJobs() == 1)
            let done = try await client.call(.get, "/v1/jobs/\(jobID)")
            #expect((done.json as? [String: Any])?["state"] as? String == "done")

            let context = try await client.call(.post, "/v1/context", ["bot": "astro", "query": "the moon, tides and eclipses", "budget": 3000])
            let citations = try #require((context.json as? [String: Any])?["citations"] as? [[String: Any]])
            let titles = Set(citations.compactMap { $0["title"] as? String })
            #expect(titles.isSuperset(of: ["Tides", "Eclipses", "The Book"]), "\(titles)")
            let page = try #require(citations.first { $0["title"] as? String == "The Book" })
            #expect(page["pages"] != nil && page["pageLabel"] != nil)

            let listed = try await client.call(.get, "/v1/sources?bot=astro&limit=50")
            let ids = ((listed.json as? [String: Any])?["sources"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(Set(ids).isSuperset(of: ["tides", "book", "eclipses"]))
            let detail = try await client.call(.get, "/v1/sources/book")
            #expect((detail.json as? [String: Any])?["bots"] as? [String] == ["astro"])

            #expect(try await client.call(.delete, "/v1/sources/book").status == 200)
            let removed = try await mcp.callTool(name: "remove_source", arguments: ["id": "eclipses"])
            #expect(removed.isError != true)
            let after = try await client.call(.post, "/v1/context", ["bot": "astro", "query": "the moon, tides and eclipses", "budget": 3000])
            let left = Set(((after.json as? [String: Any])?["citations"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String })
            #expect(left.contains("Tides") && !left.contains("Eclipses") && !left.contains("The Book"), "\(left)")
            await mcp.disconnect()
            await server.stop()
        }
    }

    @Test func badUploadsAreRefusedWithTheirStatusAndLeaveNothing() async throws {
        let fixture = try await Fixture()
        let before = try await fixture.kb.status(as: .admin)
        try await fixture.service().application().test(.router) { client in
            let pdf = try Data(contentsOf: Self.pdf)
            let cases: [(String, Data?, String?, HTTPFields, Int, String)] = [
                ("/v1/sources", pdf, "text/plain", [:], 415, "unsupported_media_type"),
                ("/v1/sources", Data("PK\u{3}\u{4}zip".utf8), "application/zip", [:], 415, "unsupported_media_type"),
                ("/v1/sources", Data("hello".utf8), nil, [:], 415, "unsupported_media_type"),
                ("/v1/sources", Data(), "text/plain", [:], 400, "invalid_argument"),
                ("/v1/sources?bot=nobody", Data("hello".utf8), "text/plain", [:], 404, "not_found"),
                ("/v1/sources?colour=red", Data("hello".utf8), "text/plain", [:], 400, "invalid_argument"),
                ("/v1/sources?id=no%20spaces", Data("hello".utf8), "text/plain", [:], 400, "invalid_argument"),
                ("/v1/sources?id=lease", Data(#"{"text": "hello"}"#.utf8), "application/json", [:], 400, "invalid_argument"),
            ]
            for (uri, bytes, type, headers, status, code) in cases {
                let answer = try await send(client, .post, uri, bytes: bytes, type: type, headers: headers)
                #expect(answer.status == status, "\(uri) \(type ?? "no type")")
                #expect((answer.json["error"] as? [String: Any])?["code"] as? String == code, "\(uri) \(type ?? "no type")")
            }
            #expect(try await client.call(.get, "/v1/jobs/00000000-0000-0000-0000-000000000000").status == 404)
            // A file's source, by its id percent-encoded as clients send it: shown, and not removable over HTTP.
            let listed = try await client.call(.get, "/v1/sources")
            let file = try #require(((listed.json as? [String: Any])?["sources"] as? [[String: Any]])?.first { $0["origin"] as? String == "file" })
            let id = try #require(file["id"] as? String)
            let encoded = "/v1/sources/" + id.replacingOccurrences(of: ":", with: "%3A")
            #expect((try await client.call(.get, encoded).json as? [String: Any])?["id"] as? String == id)
            let refused = try await client.call(.delete, encoded)
            #expect(refused.status == 409 && errorCode(refused.json) == "conflict")
            #expect(try await client.call(.delete, "/v1/sources?colour=red").status == 400)
        }
        // Over the upload limit: 413, whether the length is declared or found while streaming.
        var limits = Limits()
        limits.maxUploadBytes = 4096
        let small = try KnowledgeBase.open(at: fixture.kb.path, create: false, limits: limits)
        var configuration = ServiceConfiguration()
        configuration.token = Fixture.token
        try await RetrievalService(kb: small, configuration: configuration).application().test(.router) { client in
            let answer = try await send(client, .post, "/v1/sources", bytes: try Data(contentsOf: Self.pdf), type: "application/pdf")
            #expect(answer.status == 413)
            #expect((answer.json["error"] as? [String: Any])?["code"] as? String == "too_large")
        }
        #expect(await fixture.kb.runQueuedJobs() == 0)
        #expect(try await fixture.kb.status(as: .admin).sources == before.sources)
    }

    @Test func syncReadAndGrepOverHTTPAndAWatchedFolderInTheLogAndMetrics() async throws {
        let fixture = try await Fixture()
        var configuration = ServiceConfiguration()
        configuration.token = Fixture.token
        configuration.watch = WatchSettings(folders: [fixture.root.path + "/astro"])
        let service = RetrievalService(kb: fixture.kb, configuration: configuration)
        let rounds = LockedValue(0)
        let watcher = try #require(try await service.startWatching { _ in rounds.withLock { $0 += 1 } })
        try await until { rounds.withLock { $0 } >= 1 }
        try "# Mars\n\nMars rules the wombat.".write(toFile: fixture.root.path + "/astro/mars.md", atomically: false, encoding: .utf8)
        try await until { try await !fixture.kb.search({ var q = SearchQuery("wombat"); q.mode = .keyword; return q }(), as: .admin).hits.isEmpty }
        await watcher.stop()

        let venus = SourceInfo.fileID(fixture.root.path + "/astro/venus.md")
        try await service.application().test(.router) { client in
            var sync: [String: Any] = ["collection": "app", "items": [["id": "n1", "sha256": String(repeating: "0", count: 64), "title": "Note"]]]
            let first = try await client.call(.post, "/v1/sources/sync", sync)
            #expect(first.status == 200)
            #expect(((first.json as? [String: Any])?["upload"] as? [[String: Any]])?.first?["reason"] as? String == "new")
            #expect(try await client.call(.post, "/v1/sources", ["text": "# Note\n\nA note the app keeps.", "id": "n1", "collection": "app"]).status == 201)
            let listed = try await client.call(.get, "/v1/sources/n1")
            let sha = try #require((listed.json as? [String: Any])?["contentHash"] as? String)
            sync["items"] = [["id": "n1", "sha256": sha, "title": "Note"]]
            let second = try await client.call(.post, "/v1/sources/sync", sync)
            #expect((second.json as? [String: Any])?["unchanged"] as? [String] == ["n1"])

            let read = try await client.call(.get, "/v1/sources/\(venus)/text?maxCharacters=200")
            #expect(read.status == 200 && ((read.json as? [String: Any])?["text"] as? String)?.contains("Venus rules love") == true)
            #expect(try await client.call(.get, "/v1/sources/n1/text?pages=1").status == 422)
            #expect(try await client.call(.get, "/v1/sources/n1/text?colour=red").status == 400)
            let grep = try await client.call(.post, "/v1/sources/grep", ["pattern": "wom+bat"])
            #expect(((grep.json as? [String: Any])?["matches"] as? [[String: Any]])?.map { $0["sourcePath"] as? String } == [fixture.root.path + "/astro/mars.md"])
            #expect(try await client.call(.post, "/v1/sources/grep", ["pattern": "(a)\\1"]).status == 400)

            let metrics = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Fixture.token)"]) { String(buffer: $0.body) }
            #expect(metrics.contains("kb_watch_files_read_total 1") && metrics.contains("kb_watch_folders_count 1"), "\(metrics.suffix(1500))")
        }
        let log = try #require(service.log)
        try await log.flush()
        let routes = try await fixture.kb.usage(since: Date(timeIntervalSinceNow: -60), by: .route, as: .admin).rows.map(\.key)
        #expect(routes.contains("WATCH start") && routes.contains("WATCH change"), "\(routes)")
    }

    func until(_ condition: () async throws -> Bool) async throws {
        let end = Date().addingTimeInterval(300)   // generous: a loaded PostgreSQL run is slow, and this is no timing test
        while try await !condition() {
            guard Date() < end else { Issue.record("not within 300 s"); return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

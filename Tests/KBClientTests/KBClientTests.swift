import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KBCore
import KBIngest
import KBKit
import KBClient
import KBRequests
import KBServer
import KBTestSupport
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Testing
import KBLanguageModel

/// A live `kb serve` (a real port, on SQLite or, when scripts/test.sh says so, PostgreSQL)
/// driven through KBClient, the code generated from kb's OpenAPI document: every answer is
/// decoded by the generated types, whose objects are closed as the document's are, so an answer
/// whose shape changed without its document fails here (and in the service's own answer check).
@Suite struct KBClientTests {
    static let token = "client-test-token-0123456789abcdef"

    /// The committed document KBClient was generated from is the one kb serve serves, and the
    /// generated sources are those of this document.
    @Test func theDocumentIsWhatKBServeServesAndTheSourcesWereGeneratedFromIt() async throws {
        let committed = try Data(contentsOf: Self.repository.appendingPathComponent("Sources/KBClient/openapi.json"))
        let served = try await Self.withService { url, _ in
            var request = HTTPClientRequest(url: url.appendingPathComponent("openapi.json").absoluteString)
            request.headers.add(name: "Authorization", value: "Bearer \(Self.token)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            return Data(buffer: try await response.body.collect(upTo: 1 << 24))
        }
        #expect(served == committed, "GET /openapi.json is not Sources/KBClient/openapi.json: run scripts/generate-client.sh and commit what it changes.")
        let digest = SHA256.hash(data: committed).map { String(format: "%02x", $0) }.joined()
        #expect(digest == GeneratedFrom.documentSHA256,
                "Sources/KBClient/Generated was not generated from Sources/KBClient/openapi.json: run scripts/generate-client.sh.")
    }

    @Test func statusSourcesAndAFileAddedWithItsJobFollowed() async throws {
        try await Self.withService { url, folder in
            let kb = Client(url: url, token: Self.token, transport: AsyncHTTPClientTransport())
            let status = try await kb.status().ok.body.json
            #expect(status.sources == 4 && status.snippets == 4)   // three notes and ada's memory
            #expect(try await kb.listSources().ok.body.json.total == 3)

            let file = folder.appendingPathComponent("mars.md")
            try "# Mars\n\nMars rules war, courage and the drive to begin.".write(to: file, atomically: true, encoding: .utf8)
            let seen = LockedValue<[Components.Schemas.Job.StatePayload]>([])
            let job = try await kb.addFile(at: file, query: .init(tag: ["area:drive"], title: "Mars"), pollingEvery: .milliseconds(20)) { job in
                seen.withLock { $0.append(job.state) }
            }
            #expect(job.state == .done && seen.withLock { $0.last } == .done)
            let sources = try await kb.listSources(query: .init(tag: "area:drive")).ok.body.json
            #expect(sources.sources.map(\.title) == ["Mars"])
            // A file kb does not read is refused before anything is sent.
            #expect(throws: KBClientSetupError.self) { try Operations.AddSource.Input.Body(file: folder.appendingPathComponent("notes.xyz")) }
        }
    }

    @Test func searchAndContextForAFollowUpTurn() async throws {
        try await Self.withService { url, _ in
            let kb = Client(url: url, token: Self.token, transport: AsyncHTTPClientTransport())
            let results = try await kb.search(body: .json(.init(query: "Venus love beauty"))).ok.body.json
            #expect(results.hits.first?.sourcePath.hasSuffix("astro/venus.md") == true)

            // The follow-up ("what does it rule?") finds Venus through the conversation before it.
            let context = try await kb.context(body: .json(.init(
                bot: "astro", budget: 400,
                history: [.init(content: "Tell me about Venus.", role: .user), .init(content: "Venus is the planet of love.", role: .assistant)],
                query: "What does it rule?", user: "ada"))).ok.body.json
            #expect(context.bot == "astro")
            #expect(context.citations.contains { $0.path.hasSuffix("astro/venus.md") })
            #expect(!context.citations.contains { $0.path.contains("cooking") })
            #expect(context.citations.contains { $0.kind == .memory && $0.scope == "user:ada" })
        }
    }

    @Test func memoriesAddedRecalledAsOfADateAndFlagged() async throws {
        try await Self.withService { url, _ in
            let kb = Client(url: url, token: Self.token, transport: AsyncHTTPClientTransport())
            let kyiv = try await kb.addMemory(body: .json(.init(content: "Ada lives in Kyiv.", scope: "user:ada", validFrom: "2026-03-02"))).created.body.json
            #expect(kyiv.created && kyiv.memory.scope == "user:ada")
            let lviv = try await kb.addMemory(body: .json(.init(
                content: "Ada lives in Lviv.", scope: "user:ada", supersede: kyiv.memory.id, validFrom: "2026-06-01"))).created.body.json
            #expect(lviv.superseded == kyiv.memory.id)

            func recall(asOf: String?) async throws -> [String] {
                try await kb.searchMemories(body: .json(.init(asOf: asOf, query: "where does Ada live", scopes: ["user:ada"])))
                    .ok.body.json.hits.map(\.memory.content)
            }
            let now = try await recall(asOf: nil)
            #expect(now.contains("Ada lives in Lviv.") && !now.contains("Ada lives in Kyiv."), "\(now)")
            let then = try await recall(asOf: "2026-04-01")
            #expect(then.contains("Ada lives in Kyiv.") && !then.contains("Ada lives in Lviv."), "\(then)")

            let flagged = try await kb.memoryFeedback(path: .init(id: lviv.memory.id), body: .json(.init(feedback: .wrong, note: "moved again"))).ok.body.json
            #expect(flagged.memory.flaggedWrong == true && flagged.feedback.feedback == "wrong")
        }
    }

    @Test func botsAndChatAnswersPlainAndStreamedWithTheirCitations() async throws {
        try await Self.withService { url, _ in
            let kb = Client(url: url, token: Self.token, transport: AsyncHTTPClientTransport())
            let created = try await kb.createBot(body: .json(.init(name: "tutor", sources: ["tag:area:love"], systemPrompt: "You teach astrology."))).created.body.json
            #expect(created.name == "tutor")
            #expect(try await kb.listBots().ok.body.json.map(\.name).sorted() == ["astro", "chef", "tutor"])
            #expect(try await kb.getBot(path: .init(name: "astro")).ok.body.json.systemPrompt == "You are an astrology tutor.")

            let question = Components.Schemas.ChatCompletionRequest(
                kb: .init(user: "ada"), messages: [.user("What does Venus in the tenth house favour?")], model: "astro")
            let plain = try await kb.chatCompletions(body: .json(question)).ok.body.json
            #expect(plain.kb.bot == "astro" && plain.kb.unmatchedMarkers.isEmpty)
            let citations = try #require(plain.choices.first?.message?.citations)
            #expect(citations.first?.number == 1 && citations.first?.path.hasSuffix("astro/venus.md") == true)

            var text = ""
            var finished: Components.Schemas.ChatAnswerInfo?
            for try await event in try await kb.streamChat(question) {
                switch event {
                case .delta(let piece): text += piece
                case .finished(let info): finished = info
                }
            }
            #expect(text == StubModel.answer)
            #expect(finished?.citations?.first?.path.hasSuffix("astro/venus.md") == true)
            #expect(finished?.bot == "astro")
        }
    }

    @Test func errorsAreDecodedAsTheDocumentedErrorType() async throws {
        try await Self.withService { url, _ in
            let kb = Client(url: url, token: Self.token, transport: AsyncHTTPClientTransport())
            // 401: a wrong token.
            let stranger = Client(url: url, token: Self.token + "x", transport: AsyncHTTPClientTransport())
            let bots = try await stranger.listBots()
            guard case .unauthorized(let unauthorized) = bots else { Issue.record("not a 401"); return }
            #expect(try unauthorized.body.json.error.code == "unauthorized")
            #expect(KBServiceError(bots)?.status == 401 && KBServiceError(bots)?.error?.error.code == "unauthorized")
            #expect(KBServiceError(try await kb.listBots()) == nil)   // a success is no error
            // 403: a token scoped to one user may not make bots.
            let made = try await kb.createToken(body: .json(.init(bots: ["astro"], name: "ada-app", scopes: ["user:ada"]))).created.body.json
            let ada = Client(url: url, token: made.token, transport: AsyncHTTPClientTransport())
            let mine = try await ada.createBot(body: .json(.init(name: "mine")))
            guard case .forbidden(let forbidden) = mine else { Issue.record("not a 403"); return }
            #expect(try forbidden.body.json.error.code == "forbidden")
            #expect(KBServiceError(mine)?.status == 403)
            // 404: no such bot.
            let nobody = try await kb.getBot(path: .init(name: "nobody"))
            guard case .notFound(let missing) = nobody else { Issue.record("not a 404"); return }
            #expect(try missing.body.json.error.message.contains("nobody"))
            #expect(KBServiceError(nobody)?.status == 404)
            // 413: a body over kb serve's limit.
            let long = String(repeating: "Saturn rules time. ", count: 4_000)
            let added = try await kb.addSource(body: .json(.init(text: long)))
            guard case .contentTooLarge(let tooLarge) = added else { Issue.record("not a 413"); return }
            #expect(try tooLarge.body.json.error.code == "too_large")
            #expect(KBServiceError(added)?.status == 413)
            // 422: pages of a note, which has none.
            let venus = try #require(try await kb.listSources().ok.body.json.sources.first { $0.path?.hasSuffix("venus.md") == true })
            let pages = try await kb.readSource(path: .init(id: venus.id), query: .init(pages: "1"))
            guard case .unprocessableContent(let unprocessable) = pages else { Issue.record("not a 422"); return }
            #expect(try unprocessable.body.json.error.code == "unprocessable")
            #expect(KBServiceError(pages)?.status == 422)
            // The convenience layer throws the same error, with its status.
            let refused = await #expect(throws: KBServiceError.self) { _ = try await stranger.streamChat(.init(messages: [.user("hi")], model: "astro")) }
            #expect(refused?.status == 401 && refused?.error?.error.code == "unauthorized")
        }
    }

    // MARK: - The service

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `body` with the URL of a live kb serve (a bearer token, a 64 KiB body limit, the stub chat model) over two folders of notes with a bot
    /// each and a memory of ada's, and the notes' folder.
    static func withService<T: Sendable>(_ body: @Sendable @escaping (URL, URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = [
            "astro/venus.md": "---\ntags: [area:love]\n---\n# Venus\n\nVenus rules love, beauty and money. Venus in the tenth house favours the arts.",
            "astro/saturn.md": "---\ntags: [area:career]\n---\n# Saturn\n\nSaturn rules discipline, time and the long climb of a career.",
            "cooking/bread.md": "# Bread\n\nBread needs flour, water, salt and time. Knead the dough until it is smooth.",
        ]
        for (name, text) in notes {
            let url = folder.appendingPathComponent("notes/" + name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: folder), environment: ProcessInfo.processInfo.environment)
        let (embedder, record) = try await kb.embedder(.hashing)
        _ = try await kb.ingest([folder.appendingPathComponent("notes").path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        for (name, prompt, notes) in [("astro", "You are an astrology tutor.", "astro"), ("chef", "You are a baker.", "cooking")] {
            var bot = BotRequest(name: name)
            bot.systemPrompt = prompt
            bot.sources = [folder.appendingPathComponent("notes").path + "/\(notes)/"]
            _ = try await kb.createBot(bot, as: .admin)
        }
        _ = try await kb.remember(MemoryDraft("Ada has Venus in the tenth house and loves bread.", scope: try .user("ada")), as: .admin)

        let jobs = kb.startJobRunner()   // as kb serve does: uploads are read in the background
        defer { Task { await jobs.stop() } }
        return try await StubModel.application().test(.live) { stub in
            var configuration = ServiceConfiguration()
            configuration.token = Self.token
            configuration.maxBodyBytes = 64 << 10
            // The generated decoders are the check here: kb's own answer check (which would turn an
            // undocumented field into a 500 first) is off.
            configuration.checksAnswers = false
            configuration.chatModel = ChatModel(model: "stub", baseURL: URL(string: "http://127.0.0.1:\(stub.port!)/v1")!)
            return try await RetrievalService(kb: kb, configuration: configuration).application().test(.live) { client in
                try await body(URL(string: "http://127.0.0.1:\(client.port!)")!, folder)
            }
        }
    }
}

/// The upstream chat model of these tests: OpenAI's chat completions on loopback, one fixed answer
/// as a JSON completion or as Server-Sent Events in three pieces; a request for a JSON object
/// (kb learning memories from the turn) gets no memories.
enum StubModel {
    static let answer = "Venus in the tenth house favours the arts [1]."

    static func application() -> some ApplicationProtocol {
        let router = Router()
        router.post("v1/chat/completions") { request, _ -> Response in
            let sent = try await request.body.collect(upTo: 1 << 20)
            let fields = (try? JSONSerialization.jsonObject(with: Data(buffer: sent))) as? [String: Any] ?? [:]
            let content = fields["response_format"] != nil ? #"{"memories": []}"# : answer
            if fields["stream"] as? Bool == true {
                let pieces = ["Venus in the tenth house ", "favours the arts ", "[1]."]
                let events = pieces.map { piece in
                    let chunk: [String: Any] = ["id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1, "model": "stub",
                                                "choices": [["index": 0, "delta": ["content": piece], "finish_reason": NSNull()]]]
                    return "data: " + String(decoding: try! JSONSerialization.data(withJSONObject: chunk), as: UTF8.self) + "\n\n"
                }.joined() + "data: [DONE]\n\n"
                return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: .init(byteBuffer: ByteBuffer(string: events)))
            }
            let completion: [String: Any] = [
                "id": "chatcmpl-stub", "object": "chat.completion", "created": 1, "model": "stub",
                "choices": [["index": 0, "message": ["role": "assistant", "content": content], "finish_reason": "stop"]],
            ]
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: completion))))
        }
        return Application(router: router)
    }
}

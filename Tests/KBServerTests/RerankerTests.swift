import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBEmbed
import KBIngest
@testable import KBKit
import KBRetrieval
import KBServer
import KBTestSupport
import NIOCore
import Testing

/// What the stub `/v1/rerank` server answers, and what it was asked.
actor RerankScript {
    enum Reply: Sendable {
        case ok
        case status(Int)
        case slow(seconds: Double)
        case malformed
        case indexOutOfRange
        case repeatedIndex
        case leavesOneOut
        case noScore
    }
    /// One request as it came.
    struct Seen: Sendable {
        var model: String?
        var query: String?
        var documents: [String]
        var topN: Int?
    }
    var replies: [Reply]
    var requests: [Seen] = []

    init(_ replies: [Reply] = []) { self.replies = replies }

    func next(_ body: [String: Any]) -> Reply {
        requests.append(Seen(model: body["model"] as? String, query: body["query"] as? String,
                             documents: body["documents"] as? [String] ?? [], topN: body["top_n"] as? Int))
        return replies.isEmpty ? .ok : replies.removeFirst()
    }

    var documentsSeen: [[String]] { requests.map(\.documents) }
}

/// The stub's relevance: how often the query's first word occurs in the document (a crude
/// model that disagrees with the first stage, which weighs every word), plus a thousandth per
/// character so that ties are rare.
func stubRelevance(_ query: String, _ document: String) -> Double {
    let word = query.lowercased().split(separator: " ").first.map(String.init) ?? ""
    return Double(document.lowercased().components(separatedBy: word).count - 1) + Double(document.count) / 1000
}

func rerankServer(_ script: RerankScript) async throws -> LiveServer {
    let router = Router()
    router.post("/v1/rerank") { request, _ -> Response in
        let body = try await request.body.collect(upTo: 1 << 22)
        let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
        let query = json["query"] as? String ?? ""
        let documents = json["documents"] as? [String] ?? []
        var results: [[String: Any]] = documents.enumerated().map { ["index": $0.offset, "relevance_score": stubRelevance(query, $0.element)] }
        switch await script.next(json) {
        case .ok: break
        case .status(let code):
            return Response(status: .init(code: code), headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"message":"scripted failure \#(code)"}}"#)))
        case .slow(let seconds): try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        case .malformed:
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{\"results\": [")))
        case .indexOutOfRange: results[0]["index"] = documents.count
        case .repeatedIndex: results[0]["index"] = 1
        case .leavesOneOut: results.removeLast()
        case .noScore: results[0].removeValue(forKey: "relevance_score")
        }
        // Best first, as servers answer.
        results.sort { ($0["relevance_score"] as? Double ?? 0) > ($1["relevance_score"] as? Double ?? 0) }
        return Response(status: .ok, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["model": "stub", "results": results]))))
    }
    return try await LiveServer.start(router)
}

func rerankConfiguration(_ url: URL, attempts: Int = 3, timeout: Double = 30) -> HTTPReranker.Configuration {
    var configuration = HTTPReranker.Configuration(model: "test-reranker", baseURL: url, apiKey: "sk-rerank-secret")
    configuration.maxAttempts = attempts
    configuration.initialBackoff = 0.01
    configuration.maxBackoff = 0.05
    configuration.timeout = timeout
    return configuration
}

@Suite(.serialized) struct RerankerTests {
    @Test func scoresComeBackInDocumentOrderAcrossBatches() async throws {
        let script = RerankScript()
        let server = try await rerankServer(script)
        defer { server.stop() }
        var configuration = rerankConfiguration(server.url)
        configuration.batchSize = 2
        let reranker = try HTTPReranker(configuration)
        let documents = ["saturn saturn", "venus", "saturn and time", "bread", "saturn"]
        let scores = try await reranker.relevance(of: documents, to: "saturn")
        #expect(scores == documents.map { stubRelevance("saturn", $0) })
        let requests = await script.requests
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.model == "test-reranker" && $0.query == "saturn" })
        #expect(requests.compactMap(\.topN).sorted() == [1, 2, 2])   // batches go out four at a time, in any order
        #expect(await script.documentsSeen.flatMap { $0 }.sorted() == documents.sorted())
        #expect(reranker.name == "rerank:test-reranker")
    }

    @Test func answersThatAreNotARankingOfTheDocumentsAreRefused() async throws {
        for (reply, words) in [(RerankScript.Reply.indexOutOfRange, "ranked document 3 of 3"), (.repeatedIndex, "twice"),
                               (.leavesOneOut, "left 1 of the 3"), (.noScore, "no finite relevance_score"),
                               (.malformed, "something other than a ranking"), (.status(404), "404"), (.status(401), "KB_RERANKER_API_KEY")] {
            let script = RerankScript([reply])
            let server = try await rerankServer(script)
            defer { server.stop() }
            let reranker = try HTTPReranker(rerankConfiguration(server.url))
            await #expect { try await reranker.relevance(of: ["a", "b", "c"], to: "a") } throws: { error in
                let message = (error as? KBError)?.message ?? ""
                return message.contains(words) && message.contains("/v1/rerank") && !message.contains("sk-rerank-secret")
            }
            #expect(await script.requests.count == 1)   // none of these is retried
        }
    }

    @Test func overloadIsRetriedAndADeadEndpointFailsClearly() async throws {
        let script = RerankScript([.status(503), .status(429)])
        let server = try await rerankServer(script)
        defer { server.stop() }
        let reranker = try HTTPReranker(rerankConfiguration(server.url))
        #expect(try await reranker.relevance(of: ["a b", "b"], to: "b") == [stubRelevance("b", "a b"), stubRelevance("b", "b")])
        #expect(await script.requests.count == 3)

        let failing = RerankScript([.status(500), .status(500), .status(500)])
        let down = try await rerankServer(failing)
        defer { down.stop() }
        await #expect { try await HTTPReranker(rerankConfiguration(down.url)).relevance(of: ["a", "b"], to: "a") } throws: { error in
            ((error as? KBError)?.message ?? "").contains("failed 3 times")
        }
        #expect(throws: KBError.self) { try HTTPReranker(.init(model: "m", baseURL: URL(string: "ftp://host/v1")!)) }
        #expect(throws: KBError.self) { try HTTPReranker(.init(model: "", baseURL: URL(string: "http://host/v1")!)) }
    }

    @Test func documentationExamples() async throws {
        let server = try await rerankServer(RerankScript())
        defer { server.stop() }
        let (kb, _) = try await Self.knowledgeBase()
        do {
            let url = server.url
            let reranker = try HTTPReranker(.init(model: "bge-reranker-v2-m3", baseURL: url))
            let scores = try await reranker.relevance(of: ["Saturn rules Capricorn.", "Mars rules Aries."], to: "ruler of capricorn")
            #expect(scores.count == 2)
            kb.useRetrievalStage(RerankingStage(reranker: reranker, depth: 40))   // reranker: an HTTPReranker, say
        }
        #expect(try await kb.search(SearchQuery("saturn"), as: .admin).secondStage == "rerank:bge-reranker-v2-m3")
    }

    /// Notes whose first-stage order the stub's relevance disagrees with.
    static func knowledgeBase(profile: RetrievalProfile = RetrievalProfile()) async throws -> (KnowledgeBase, URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-rerank-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        for index in 0..<8 {
            let text = "# Note \(index)\n\n" + String(repeating: "saturn ", count: 8 - index) + "rules time. " + String(repeating: "career ", count: index)
            try text.write(to: notes.appendingPathComponent("n\(index).md"), atomically: true, encoding: .utf8)
        }
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root), profile: profile)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        return (kb, root)
    }

    @Test func searchesBlendTheRerankersScoresWithTheFirstStageToTheDepth() async throws {
        let (kb, _) = try await Self.knowledgeBase()
        var search = SearchQuery("career saturn")
        search.mode = .keyword
        search.limit = 5
        let first = try await kb.search(search, as: .admin)
        #expect(first.hits.count == 5 && first.secondStage == nil)

        let script = RerankScript()
        let server = try await rerankServer(script)
        defer { server.stop() }
        kb.useRetrievalStage(RerankingStage(reranker: try HTTPReranker(rerankConfiguration(server.url)), depth: 6))
        let staged = try await kb.search(search, as: .admin)
        #expect(staged.secondStage == "rerank:test-reranker" && staged.degraded == nil)
        // The re-ranker saw the first six candidates (the depth, beyond the five hits), in order.
        let seen = await script.documentsSeen
        #expect(seen.count == 1 && seen[0].count == 6)
        var deeper = search
        deeper.limit = 6
        let firstSix = try await kb.search({ var q = deeper; q.secondStage = false; return q }(), as: .admin)
        #expect(seen[0] == firstSix.hits.map(\.snippet.text))
        // The answer is the blend of its scores with the first-stage ranks, cut to the hits.
        let blended = RerankingStage.blend(seen[0].map { stubRelevance("career saturn", $0) })
        #expect(staged.hits.map(\.snippetID) == blended.prefix(5).map { firstSix.hits[$0.index].snippetID })
        #expect(staged.hits.map(\.score) == blended.prefix(5).map(\.score))
        #expect(staged.hits.map(\.snippetID) != first.hits.map(\.snippetID))   // it did move something

        // A search that declines the second stage is the first stage's, and the server is not asked.
        var declined = search
        declined.secondStage = false
        #expect(try await kb.search(declined, as: .admin).hits.map(\.snippetID) == first.hits.map(\.snippetID))
        #expect(await script.requests.count == 1)
    }

    @Test func aSlowOrDeadRerankerLeavesTheFirstStageOrderMarkedDegraded() async throws {
        let (kb, _) = try await Self.knowledgeBase()
        var search = SearchQuery("career saturn")
        search.limit = 4
        let first = try await kb.search(search, as: .admin).hits.map(\.snippetID)

        let script = RerankScript([.slow(seconds: 4)])
        let server = try await rerankServer(script)
        defer { server.stop() }
        kb.useRetrievalStage(RerankingStage(reranker: try HTTPReranker(rerankConfiguration(server.url, attempts: 1, timeout: 1))))
        let slow = try await kb.search(search, as: .admin)
        #expect(slow.hits.map(\.snippetID) == first)
        #expect(slow.secondStage == nil)
        #expect(slow.degraded?.reason.contains("rerank:test-reranker") == true)
        #expect(slow.degraded?.reason.contains("no answer within the timeout") == true)

        // Nothing listens on port 9 (discard; below the ephemeral range, so no other test's server can
        // take it, as one could take a port a stopped server held while the tests run in parallel).
        let nowhere = URL(string: "http://127.0.0.1:9/v1")!
        kb.useRetrievalStage(RerankingStage(reranker: try HTTPReranker(rerankConfiguration(nowhere, attempts: 2))))
        let dead = try await kb.search(search, as: .admin)
        #expect(dead.hits.map(\.snippetID) == first)
        #expect(dead.degraded?.reason.contains("failed 2 times") == true)
    }

    @Test func theHTTPSearchRunsTheServersRerankerUnlessTheRequestDeclines() async throws {
        let (kb, _) = try await Self.knowledgeBase()
        let script = RerankScript()
        let server = try await rerankServer(script)
        defer { server.stop() }
        kb.useRetrievalStage(RerankingStage(reranker: try HTTPReranker(rerankConfiguration(server.url))))
        var service = ServiceConfiguration()
        service.token = nil
        try await RetrievalService(kb: kb, configuration: service).application().test(.router) { client in
            func secondStage(_ json: [String: Any]) async throws -> String? {
                try await client.execute(uri: "/v1/search", method: .post, headers: [.contentType: "application/json"],
                                         body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))) { response in
                    #expect(response.status == .ok)
                    let body = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
                    #expect((body["hits"] as? [Any])?.count == 3)
                    return body["secondStage"] as? String
                }
            }
            let staged = try await secondStage(["query": "career saturn", "k": 3])
            #expect(staged == "rerank:test-reranker")
            let declined = try await secondStage(["query": "career saturn", "k": 3, "rerank": false])
            #expect(declined == nil)
            #expect(await script.requests.count == 1)
        }
    }
}

import Foundation
import KBCore
import KBEmbed
import KBStubServers
import Testing

/// The OpenAI-style `/v1/rerank` client against a stub server: scores in document order across
/// batches, answers that are not a ranking refused, overload retried, a dead endpoint named.
@Suite(.serialized) struct HTTPRerankerTests {
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
}

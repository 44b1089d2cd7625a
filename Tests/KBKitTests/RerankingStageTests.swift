import Foundation
import KBCore
import KBEmbed
@testable import KBKit
import KBRetrieval
import KBStubServers
import KBTestSupport
import Testing

/// A re-ranker as the second stage of kb's searches (a stub `/v1/rerank` server): its scores blended
/// with the first stage's to the depth; a slow or dead one leaves the first stage's order, marked.
@Suite(.serialized) struct RerankingStageTests {
    @Test func documentationExamples() async throws {
        let server = try await rerankServer(RerankScript())
        defer { server.stop() }
        let (kb, _) = try await SampleIndexes.reranking()
        do {
            let url = server.url
            let reranker = try HTTPReranker(.init(model: "bge-reranker-v2-m3", baseURL: url))
            let scores = try await reranker.relevance(of: ["Saturn rules Capricorn.", "Mars rules Aries."], to: "ruler of capricorn")
            #expect(scores.count == 2)
            kb.useRetrievalStage(RerankingStage(reranker: reranker, depth: 40))   // reranker: an HTTPReranker, say
        }
        #expect(try await kb.search(SearchQuery("saturn"), as: .admin).secondStage == "rerank:bge-reranker-v2-m3")
    }

    @Test func searchesBlendTheRerankersScoresWithTheFirstStageToTheDepth() async throws {
        let (kb, _) = try await SampleIndexes.reranking()
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
        let (kb, _) = try await SampleIndexes.reranking()
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
}

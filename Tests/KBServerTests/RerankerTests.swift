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
import KBStubServers
import KBTestSupport
import NIOCore
import Testing

/// kb serve's searches run the server's re-ranker unless a request declines it.
@Suite(.serialized) struct RerankerTests {
    @Test func theHTTPSearchRunsTheServersRerankerUnlessTheRequestDeclines() async throws {
        let (kb, _) = try await SampleIndexes.reranking()
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

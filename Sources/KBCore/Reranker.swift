/// A second-stage model that scores how well each document answers a query (a cross-encoder
/// behind a `/v1/rerank` endpoint, say): higher is more relevant; scores are comparable within
/// one call, not across queries.
public protocol Reranker: Sendable {
    /// How answers name it (`rerank:MODEL`).
    var name: String { get }
    /// One relevance score per document, in the documents' order.
    func relevance(of documents: [String], to query: String) async throws -> [Double]
}

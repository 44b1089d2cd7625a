public import Foundation
import Hummingbird
public import KBEmbed
import NIOCore

/// What the stub `/v1/rerank` server answers, and what it was asked.
public actor RerankScript {
    public enum Reply: Sendable {
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
    public struct Seen: Sendable {
        public var model: String?
        public var query: String?
        public var documents: [String]
        public var topN: Int?
    }
    public var replies: [Reply]
    public var requests: [Seen] = []

    public init(_ replies: [Reply] = []) { self.replies = replies }

    public func next(_ body: [String: Any]) -> Reply {
        requests.append(Seen(model: body["model"] as? String, query: body["query"] as? String,
                             documents: body["documents"] as? [String] ?? [], topN: body["top_n"] as? Int))
        return replies.isEmpty ? .ok : replies.removeFirst()
    }

    public var documentsSeen: [[String]] { requests.map(\.documents) }
}

/// The stub's relevance: how often the query's first word occurs in the document (a crude
/// model that disagrees with the first stage, which weighs every word), plus a thousandth per
/// character so that ties are rare.
public func stubRelevance(_ query: String, _ document: String) -> Double {
    let word = query.lowercased().split(separator: " ").first.map(String.init) ?? ""
    return Double(document.lowercased().components(separatedBy: word).count - 1) + Double(document.count) / 1000
}

public func rerankServer(_ script: RerankScript) async throws -> LiveServer {
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

public func rerankConfiguration(_ url: URL, attempts: Int = 3, timeout: Double = 30) -> HTTPReranker.Configuration {
    var configuration = HTTPReranker.Configuration(model: "test-reranker", baseURL: url, apiKey: "sk-rerank-secret")
    configuration.maxAttempts = attempts
    configuration.initialBackoff = 0.01
    configuration.maxBackoff = 0.05
    configuration.timeout = timeout
    return configuration
}

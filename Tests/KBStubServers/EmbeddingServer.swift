public import Foundation
import Hummingbird
public import KBEmbed
import NIOCore

/// What the fault-injecting server does with each request, and what it saw.
public actor FaultScript {
    public enum Reply: Sendable {
        case ok
        case status(Int, retryAfter: String?)
        case slow(seconds: Double)
        case malformed
        case dimension(Int)
        case fewer
    }
    public var replies: [Reply]
    public var requests = 0
    public var inputs: [String] = []
    public var authorization: [String] = []
    /// Answer 500 to any batch holding a text with this word.
    public var poison: String?

    public init(_ replies: [Reply] = [], poison: String? = nil) {
        self.replies = replies
        self.poison = poison
    }

    public func next(_ texts: [String], authorization header: String?) -> Reply {
        requests += 1
        authorization.append(header ?? "")
        if let poison, texts.contains(where: { $0.contains(poison) }) { return .status(500, retryAfter: nil) }
        if gone { return .status(404, retryAfter: nil) }
        inputs += texts
        return replies.isEmpty ? .ok : replies.removeFirst()
    }

    public func clearPoison() { poison = nil }

    /// The endpoint has moved: every later request is a 404 (a stopped server may still be listening
    /// for a moment, and its port may go to another test's server).
    public var gone = false
    public func moveAway() { gone = true }
}

public func faultServer(_ script: FaultScript, dimension: Int = 384) async throws -> LiveServer {
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

public func quickConfiguration(_ url: URL, attempts: Int = 4, timeout: Double = 30) -> HTTPEmbedder.Configuration {
    var configuration = HTTPEmbedder.Configuration(model: "test-model", baseURL: url, apiKey: "sk-test-secret")
    configuration.maxAttempts = attempts
    configuration.initialBackoff = 0.01
    configuration.maxBackoff = 0.05
    configuration.timeout = timeout
    return configuration
}

extension FaultScript {
    public func setPoisonForTesting(_ word: String) { poison = word }
}

import Foundation
import Hummingbird
import NIOCore

/// What the stub chat model answers to each request, and what it was asked.
public actor RewriterScript {
    public enum Reply: Sendable {
        case content(String)
        case status(Int)
    }
    public var replies: [Reply]
    public var prompts: [String] = []

    public init(_ replies: [Reply]) { self.replies = replies }

    public func next(_ prompt: String) -> Reply {
        prompts.append(prompt)
        return replies.count > 1 ? replies.removeFirst() : replies[0]
    }
}

public func chatModelServer(_ script: RewriterScript) async throws -> LiveServer {
    let router = Router()
    router.post("/v1/chat/completions") { request, _ -> Response in
        let body = try await request.body.collect(upTo: 1 << 20)
        let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
        let prompt = ((json["messages"] as? [[String: Any]])?.last?["content"] as? String) ?? ""
        switch await script.next(prompt) {
        case .status(let code):
            return Response(status: .init(code: code), headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        case .content(let content):
            let answer: [String: Any] = ["choices": [["index": 0, "message": ["role": "assistant", "content": content], "finish_reason": "stop"]]]
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: answer))))
        }
    }
    return try await LiveServer.start(router)
}

/// What a fake chat model answers, and what it was asked.
public actor ModelScript {
    public enum Reply: Sendable {
        /// The proposals, as JSON text; `EXISTING` stands for the first existing memory's id.
        case proposals(String)
        case text(String)
        case status(Int)
        case slow(seconds: Double)
    }
    public var reply: Reply
    public var asked: [String] = []
    public var authorization: String?

    public init(_ reply: Reply) { self.reply = reply }
    public func set(_ reply: Reply) { self.reply = reply }
    public func record(_ body: String, _ authorization: String?) {
        asked.append(body)
        self.authorization = authorization
    }
}

/// A fake OpenAI-compatible chat model that answers as `script` says (memory extraction's tests).
public func modelServer(_ script: ModelScript) async throws -> LiveServer {
    let router = Router()
    router.post("v1/chat/completions") { request, _ -> Response in
        let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
        await script.record(body, request.headers[.authorization])
        let content: String
        switch await script.reply {
        case .status(let code): return Response(status: .init(code: code))
        case .slow(let seconds):
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            content = "{\"memories\": []}"
        case .text(let text): content = text
        case .proposals(let json):
            // The existing memories kb sent, as the model would read them.
            let outer = try JSONSerialization.jsonObject(with: Data(body.utf8)) as! [String: Any]
            let messages = outer["messages"] as! [[String: Any]]
            let data = try JSONSerialization.jsonObject(with: Data((messages[1]["content"] as! String).utf8)) as! [String: Any]
            let existing = (data["existing_memories"] as! [[String: Any]]).first?["id"] as? String ?? "none"
            content = json.replacingOccurrences(of: "EXISTING", with: existing)
        }
        let reply: [String: Any] = ["choices": [["index": 0, "message": ["role": "assistant", "content": content]]]]
        return Response(status: .ok, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: reply))))
    }
    return try await LiveServer.start(router)
}

import Foundation
import Hummingbird
import HummingbirdTesting
import KBChat
import KBCore
import KBKit
import KBLanguageModel
import KBRequests
import KBTestSupport
import NIOCore
import Testing

/// A streamed chat turn through `ChatSession` itself, against an upstream model on loopback: the
/// deltas as the upstream writes them, kb's chunk of citations before `[DONE]`, Stop closing the
/// upstream's request, and an upstream that stalls mid-answer ending the stream with an error event.
@Suite struct ChatSessionTests {
    /// What the upstream saw: whether a streamed answer's client went away before its end.
    final class Seen: Sendable {
        let clientLeft = LockedValue(false)
        let requests = LockedValue(0)
        /// Set once a test has what it needs: a stalled upstream then ends its answer.
        let released = LockedValue(false)
    }

    /// OpenAI's chat completions, streamed: the question decides how. "slowly" — a piece every
    /// 50 ms for a minute, or until the client goes; "stall" — one piece, then nothing until the test
    /// releases it (at most a minute);
    /// otherwise three pieces and `[DONE]`.
    static func upstream(_ seen: Seen) -> some ApplicationProtocol {
        let router = Router()
        router.post("v1/chat/completions") { request, _ -> Response in
            seen.requests.withLock { $0 += 1 }
            let sent = try await request.body.collect(upTo: 1 << 20)
            let messages = ((try? JSONSerialization.jsonObject(with: Data(buffer: sent))) as? [String: Any])?["messages"] as? [[String: Any]] ?? []
            let question = messages.last?["content"] as? String ?? ""
            @Sendable func event(_ piece: String) -> ByteBuffer {
                let chunk: [String: Any] = ["id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1, "model": "stub",
                                            "choices": [["index": 0, "delta": ["content": piece], "finish_reason": NSNull()]]]
                return ByteBuffer(string: "data: " + String(decoding: try! JSONSerialization.data(withJSONObject: chunk), as: UTF8.self) + "\n\n")
            }
            let body = ResponseBody { writer in
                if question.contains("slowly") {
                    do {
                        for n in 0..<1200 {
                            try await writer.write(event("word\(n) "))
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    } catch {
                        seen.clientLeft.withLock { $0 = true }
                        throw error
                    }
                } else if question.contains("stall") {
                    try await writer.write(event("Venus "))
                    // Past the session's timeout: nothing more until the test has its frames.
                    for _ in 0..<1200 where !seen.released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(50)) }
                } else {
                    for piece in ["Venus in the tenth house ", "favours the arts ", "[1]."] { try await writer.write(event(piece)) }
                    try await writer.write(ByteBuffer(string: "data: [DONE]\n\n"))
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: body)
        }
        return Application(router: router)
    }

    static func session(_ fixture: (root: URL, kb: KnowledgeBase), port: Int, question: String, timeout: TimeInterval = 30) async throws -> ChatSession {
        var model = ChatModel(model: "stub", baseURL: URL(string: "http://127.0.0.1:\(port)/v1")!)
        model.timeout = timeout
        let body: [String: Any] = ["model": "astro", "stream": true, "messages": [["role": "user", "content": question]]]
        let request = try ChatCompletionRequest(json: try JSONSerialization.data(withJSONObject: body), limits: fixture.kb.limits)
        return try await ChatSession(request, on: fixture.kb, model: model, as: .admin)
    }

    /// The JSON of a frame's `data:` line (nil for `[DONE]`).
    static func data(_ frame: String) -> [String: Any]? {
        guard let line = frame.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }), line != "data: [DONE]" else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
    }

    @Test func aStreamedTurnGivesTheDeltasThenItsCitationsThenDone() async throws {
        let fixture = try await SampleIndexes.astrology()
        let seen = Seen()
        try await Self.upstream(seen).test(.live) { stub in
            let session = try await Self.session(fixture, port: stub.port!, question: "Which career does Venus in the tenth house favour?")
            guard case .stream(let stream) = try await session.answer() else { Issue.record("the answer was not streamed"); return }
            var frames: [String] = []
            for try await frame in stream.frames { frames.append(frame) }
            let deltas = frames.compactMap { ((Self.data($0)?["choices"] as? [[String: Any]])?.first?["delta"] as? [String: Any])?["content"] as? String }
            #expect(deltas == ["Venus in the tenth house ", "favours the arts ", "[1]."])
            #expect(frames.last?.hasSuffix("data: [DONE]\n\n") == true)
            let summaries = frames.compactMap { Self.data($0)?["kb"] as? [String: Any] }
            let kb = try #require(summaries.last)
            let citations = try #require(kb["citations"] as? [[String: Any]])
            #expect((citations.first?["path"] as? String)?.hasSuffix("astro/venus.md") == true, "\(citations)")
            #expect(kb["bot"] as? String == "astro" && (kb["unmatchedMarkers"] as? [Int]) == [])
            #expect(stream.completed)
            #expect(seen.requests.withLock { $0 } == 1)
        }
    }

    @Test func stopClosesTheUpstreamsRequestMidAnswer() async throws {
        let fixture = try await SampleIndexes.astrology()
        let seen = Seen()
        try await Self.upstream(seen).test(.live) { stub in
            let session = try await Self.session(fixture, port: stub.port!, question: "Tell me about Venus, slowly.")
            guard case .stream(let stream) = try await session.answer() else { Issue.record("the answer was not streamed"); return }
            var iterator = stream.frames.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.contains("word0") == true)
            stream.stop()
            // The upstream notices once a write fails on the closed connection (it writes every 50 ms).
            for _ in 0..<600 where !seen.clientLeft.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(50)) }
            #expect(seen.clientLeft.withLock { $0 }, "the upstream went on writing to kb after Stop")
            #expect(!stream.completed)
        }
    }

    @Test func anUpstreamThatStallsMidAnswerEndsTheStreamWithAnErrorEvent() async throws {
        let fixture = try await SampleIndexes.astrology()
        let seen = Seen()
        try await Self.upstream(seen).test(.live) { stub in
            // 5 s, not kb's least (1 s): a loaded machine can take a second to send the first piece, and
            // that wait counts too (it would end the turn before its stream, with a thrown error).
            let session = try await Self.session(fixture, port: stub.port!, question: "Venus, then stall.", timeout: 5)
            guard case .stream(let stream) = try await session.answer() else { Issue.record("the answer was not streamed"); return }
            var frames: [String] = []
            for try await frame in stream.frames { frames.append(frame) }
            seen.released.withLock { $0 = true }
            #expect(frames.first?.contains("Venus ") == true)
            let error = try #require(Self.data(frames.last ?? "")?["error"] as? [String: Any])
            #expect(error["code"] as? String == "upstream_timeout" && error["type"] as? String == "upstream_error")
            #expect((error["message"] as? String)?.contains("--llm-timeout") == true)
            #expect(!frames.contains { $0.contains("[DONE]") } && !stream.completed)
        }
    }
}

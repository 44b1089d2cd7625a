import Foundation
import Hummingbird
import HummingbirdTesting
import KBCore
@testable import KBKit
import KBRequests
import Testing
@testable import KBServer

/// Memories over time through HTTP: turn times in extraction, asOf in recall and context,
/// feedback and consolidation routes, with a scoped token's rights.
@Suite struct MemoryTimeRoutesTests {
    @Test func extractionAsOfFeedbackAndConsolidationOverHTTP() async throws {
        let fixture = try await Fixture()
        let admin = try await fixture.kb.createToken({ var t = TokenRequest(name: "ada-app"); t.scopes = ["user:ada"]; t.bots = ["astro"]; return t }(), as: .admin)
        try await fixture.service().application().test(.router) { client in
            // Two turns a week apart: the move supersedes the old home from its turn's time.
            let turns: [[String: Any]] = [
                ["role": "user", "content": "I live in Kyiv, near the river.", "time": "2026-03-02T09:00:00Z"],
                ["role": "user", "content": "We've finally settled in Lviv! And I'm in Lisbon through Sunday.", "time": "2026-06-01T09:00:00Z"],
            ]
            let first = try await client.call(.post, "/v1/memories/extract", ["user": "ada", "apply": true, "turns": [turns[0]]])
            #expect(first.status == 200)
            let second = try await client.call(.post, "/v1/memories/extract", ["user": "ada", "apply": true, "turns": [turns[1]]])
            let proposals = try #require((second.json as? [String: Any])?["proposals"] as? [[String: Any]])
            #expect(proposals.first?["action"] as? String == "supersede" && proposals.first?["validFrom"] as? String != nil, "\(proposals)")

            func recall(_ body: [String: Any]) async throws -> [String] {
                let (status, json) = try await client.call(.post, "/v1/memories/search", body.merging(["scopes": ["user:ada"]]) { a, _ in a })
                #expect(status == 200, "\(String(describing: json))")
                return ((json as? [String: Any])?["hits"] as? [[String: Any]] ?? []).compactMap { ($0["memory"] as? [String: Any])?["content"] as? String }
            }
            let now = try await recall(["query": "where does ada live"])
            #expect(now.contains("Lives in Lviv.") && !now.contains("Lives in Kyiv, near the river."), "\(now)")
            let then = try await recall(["query": "where does ada live", "asOf": "2026-04-01"])
            #expect(then.contains("Lives in Kyiv, near the river.") && !then.contains("Lives in Lviv."), "\(then)")
            let bad = try await client.call(.post, "/v1/memories/search", ["query": "x", "scopes": ["user:ada"], "asOf": "last spring"])
            #expect(bad.status == 400)
            let badTurn = try await client.call(.post, "/v1/memories/extract", ["user": "ada", "turns": [["role": "user", "content": "hi", "time": "soon"]]])
            #expect(badTurn.status == 400)

            let context = try await client.call(.post, "/v1/context", ["bot": "astro", "user": "ada", "query": "where do I live?", "asOf": "2026-04-01"])
            #expect(((context.json as? [String: Any])?["context"] as? String)?.contains("Kyiv") == true)

            // Feedback: a scoped token for ada may flag ada's memory; the log names it.
            let lviv = try #require(proposals.first?["memory"] as? String)
            let flagged = try await client.call(.post, "/v1/memories/\(lviv)/feedback", ["feedback": "wrong", "note": "typo"], token: admin.token)
            #expect(flagged.status == 200)
            #expect(((flagged.json as? [String: Any])?["memory"] as? [String: Any])?["flaggedWrong"] as? Bool == true)
            #expect(!(try await recall(["query": "where does ada live"])).contains("Lives in Lviv."))
            let shown = try await client.call(.get, "/v1/memories/\(lviv)")
            let log = try #require((shown.json as? [String: Any])?["feedback"] as? [[String: Any]])
            #expect(log.map { $0["caller"] as? String } == ["token:ada-app"] && log.first?["note"] as? String == "typo")
            let bob = try #require(try await fixture.kb.memories(scopes: [try .user("bob")]).first?.id)
            #expect(try await client.call(.post, "/v1/memories/\(bob)/feedback", ["feedback": "wrong"], token: admin.token).status == 403)
            #expect(try await client.call(.post, "/v1/memories/\(lviv)/feedback", ["feedback": "maybe"]).status == 400)
            #expect(try await client.call(.post, "/v1/memories/\(lviv)/feedback", ["feedback": "confirmed"]).status == 200)

            // Consolidation: the Lisbon stay expired after Sunday 7 June; proposed, then applied.
            let proposed = try await client.call(.post, "/v1/memories/consolidate", ["scope": "user:ada"])
            let changes = try #require((proposed.json as? [String: Any])?["changes"] as? [[String: Any]])
            #expect(changes.map { $0["action"] as? String } == ["retire"], "\(changes)")
            let applied = try await client.call(.post, "/v1/memories/consolidate", ["scope": "user:ada", "apply": true], token: admin.token)
            #expect(((applied.json as? [String: Any])?["changes"] as? [[String: Any]])?.first?["applied"] as? Bool == true)
            #expect(try await client.call(.post, "/v1/memories/consolidate", ["scope": "user:bob", "apply": true], token: admin.token).status == 403)
        }
    }
}

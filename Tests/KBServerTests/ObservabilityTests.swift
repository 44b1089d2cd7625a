import Foundation
import Hummingbird
import HummingbirdTesting
import KBCore
@testable import KBKit
import KBRequests
@testable import KBServer
import KBStore
import KBTestSupport
import Testing

/// The request log (`kb usage`) and `/metrics` count what the service answered. Runs on SQLite
/// and (scripts/test.sh) on PostgreSQL.
@Suite struct ObservabilityTests {
    @Test func theRequestLogAndTheMetricsCountWhatWasAnswered() async throws {
        let fixture = try await Fixture()
        let template = try ReportTemplate.parse("sections:\n  - name: Love\n    query: love and beauty\n    share: 1\n", name: "love")
        let service = fixture.service(reports: ["love": template])
        var request = TokenRequest(name: "ada-app")
        request.scopes = ["user:ada"]
        request.bots = ["astro"]
        let scoped = try await fixture.kb.createToken(request, as: .admin).token
        let counted = try await service.application().test(.router) { client -> (context: Int, report: Int) in
            var contextTokens = 0
            for _ in 0..<3 {
                let (status, json) = try await client.call(.post, "/v1/context", ["bot": "astro", "user": "ada", "query": "secret question venus"])
                #expect(status == 200)
                contextTokens += (json as? [String: Any])?["tokens"] as? Int ?? 0
            }
            let report = try await client.call(.post, "/v1/context", ["report": "love"])
            let reportTokens = (report.json as? [String: Any])?["tokens"] as? Int ?? 0
            #expect(try await client.call(.post, "/v1/search", ["query": "venus", "bot": "astro"], token: scoped).status == 200)
            #expect(try await client.call(.post, "/v1/search", ["query": "venus", "bot": "chef"], token: scoped).status == 403)
            #expect(try await client.call(.post, "/v1/context", ["bot": "nobody", "query": "x"]).status == 404)
            #expect(try await client.call(.get, "/v1/bots").status == 200)   // not a logged route

            let metrics = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Fixture.token)"]) {
                ($0.status.code, String(buffer: $0.body))
            }
            #expect(metrics.0 == 200)
            #expect(metrics.1.contains(#"kb_http_requests_total{route="POST /v1/context",status="200"} 4"#), "\(metrics.1.prefix(3000))")
            #expect(metrics.1.contains(#"kb_http_requests_total{route="POST /v1/search",status="403"} 1"#))
            #expect(metrics.1.contains(#"kb_http_requests_total{route="GET /v1/bots",status="200"} 1"#))
            #expect(metrics.1.contains("kb_http_request_duration_seconds_bucket{route=\"POST /v1/context\""))
            #expect(metrics.1.contains("kb_query_embedder_available 1") && metrics.1.contains("kb_snippets_count 5"))
            #expect(metrics.1.contains(#"kb_jobs_count{state="queued"} 0"#))
            // The same turn three times: embedded once, then twice from the query cache.
            #expect(metrics.1.contains("kb_query_cache_hits_total 2") && metrics.1.contains("kb_query_cache_entries "), "\(metrics.1)")
            #expect(try await client.call(.get, "/metrics", token: scoped).status == 403)
            #expect(try await client.call(.get, "/metrics", token: nil).status == 401)
            return (contextTokens, reportTokens)
        }
        let (contextTokens, reportTokens) = counted
        let log = try #require(service.log)
        try await log.flush()
        let routes = try await fixture.kb.usage(since: Date(timeIntervalSinceNow: -60), by: .route, as: .admin).rows
        #expect(routes.map(\.key) == ["POST /v1/context", "POST /v1/search"])
        #expect(routes[0].requests == 5 && routes[0].errors == 1 && routes[0].tokens == contextTokens + reportTokens)
        #expect(routes[1].requests == 2 && routes[1].errors == 1)
        let reports = try await fixture.kb.usage(since: Date(timeIntervalSinceNow: -60), by: .report, as: .admin).rows
        #expect(reports.first { $0.key == "love" }?.tokens == reportTokens)
        let bots = try await fixture.kb.usage(since: Date(timeIntervalSinceNow: -60), by: .bot, as: .admin).rows
        #expect(bots.first { $0.key == "astro" }?.requests == 4)   // 3 contexts and the allowed search
        // No query text, no user id: only a salted hash, the same for the same user.
        let rows = try await fixture.kb.store.snapshot { snapshot in try snapshot.usage(since: .distantPast, by: .day) }
        #expect(rows.count == 1 && rows[0].requests == 7)
        try await Self.expectNoRawText(fixture.kb, ["secret question", "\"ada\""])
        let hash = try await log.userHash("ada")
        let again = try await log.userHash("ada"), bob = try await log.userHash("bob")
        #expect(hash.count == 16 && hash != "ada" && again == hash && bob != hash)
        #expect(hash.allSatisfy { "0123456789abcdef".contains($0) })

        // Old rows go.
        var old = RequestLogEntry(at: Date(timeIntervalSinceNow: -40 * 86_400), route: "POST /v1/search", status: 200, requestID: "old",
                                  latencyMilliseconds: 1)
        old.caller = "admin"
        try await fixture.kb.store.appendRequestLog([old])
        #expect(try await log.prune() == 1)
    }

    @Test func usageGivesNearestRankPercentilesPerGroup() async throws {
        let fixture = try await Fixture()
        // 100 searches taking 1…100 ms (shuffled), 3 contexts taking 5, 7 and 30 ms.
        var entries = (1...100).shuffled().map { ms in
            var entry = RequestLogEntry(at: Date(), route: "POST /v1/search", status: 200, requestID: "s\(ms)", latencyMilliseconds: Double(ms))
            entry.caller = "admin"
            return entry
        }
        for ms in [30.0, 5, 7] {
            var entry = RequestLogEntry(at: Date(), route: "POST /v1/context", status: ms == 30 ? 500 : 200, requestID: "c\(ms)", latencyMilliseconds: ms)
            entry.caller = "admin"
            entries.append(entry)
        }
        try await fixture.kb.store.appendRequestLog(entries)
        let rows = try await fixture.kb.usage(since: Date(timeIntervalSinceNow: -60), by: .route, as: .admin).rows
        let search = try #require(rows.first { $0.key == "POST /v1/search" })
        #expect(search.requests == 100 && search.p50LatencyMilliseconds == 50 && search.p99LatencyMilliseconds == 99 && search.maxLatencyMilliseconds == 100)
        #expect(abs(search.meanLatencyMilliseconds - 50.5) < 1e-9)
        let context = try #require(rows.first { $0.key == "POST /v1/context" })
        #expect(context.requests == 3 && context.errors == 1 && context.p50LatencyMilliseconds == 7 && context.p99LatencyMilliseconds == 30)
        let day = try #require(try await fixture.kb.usage(since: Date(timeIntervalSinceNow: -60), by: .day, as: .admin).rows.first)
        #expect(day.requests == 103 && day.p50LatencyMilliseconds == 49)   // rank 52 of 103: 1…49 and the three contexts
    }

    /// The log's rows hold none of these strings.
    static func expectNoRawText(_ kb: KnowledgeBase, _ needles: [String]) async throws {
        let report = try await kb.usage(since: .distantPast, by: .route, as: .admin)
        let text = String(decoding: try KBJSON.encode(report), as: UTF8.self)
        for needle in needles { #expect(!text.contains(needle)) }
        let entries = try await kb.requestLogEntries(as: .admin)
        #expect(!entries.isEmpty)
        for entry in entries {
            #expect(entry.query == nil && entry.userHash != "ada")
            #expect(!entry.requestID.isEmpty && entry.caller != nil)
        }
    }

    @Test func metricsCanBePublicAndTheLogCanBeOff() async throws {
        let fixture = try await Fixture()
        var configuration = ServiceConfiguration()
        configuration.token = Fixture.token
        configuration.metricsPublic = true
        configuration.requestLog = nil
        let service = RetrievalService(kb: fixture.kb, configuration: configuration)
        #expect(service.log == nil)
        try await service.application().test(.router) { client in
            let metrics = try await client.call(.get, "/metrics", token: nil)
            let status = try await client.call(.get, "/v1/status", token: nil)
            #expect(metrics.status == 200 && status.status == 401)
        }
    }
}

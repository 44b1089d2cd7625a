import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KBTestSupport
import Testing

/// Several `kb serve` processes on one PostgreSQL database see each other's writes at once.
/// The replicas are alive and must answer, so requests wait as long as a loaded machine needs
/// (the suite runs in parallel on two cores; a short timeout would test the machine).
@Suite(.enabled(if: TestBackend.isPostgres, "needs the PostgreSQL backend (scripts/test.sh runs it)"))
struct ReplicaTests {
    @Test func twoReplicasServeEachOthersMemoriesAndBotsInTheNextRequest() async throws {
        let cli = try CLI()
        try cli.write("notes/venus.md", "# Venus\n\nVenus in the tenth house favours a career in the arts.")
        try cli.write("notes/bread.md", "# Bread\n\nBread needs flour, water, salt and time.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "notes").status == 0)
        let a = try await CrashTests.Server.start(cli)
        defer { a.kill() }
        let b = try await CrashTests.Server.start(cli)
        defer { b.kill() }

        // A memory added through one replica is recalled through the other, in the next request.
        let (added, memory) = try await CrashTests.send(a.base, "POST", "v1/memories",
                                                         ["content": "Ada keeps bees on her roof.", "scope": "user:ada"], patient: true)
        #expect(added == 201 || added == 200)
        let id = try #require((memory["memory"] as? [String: Any])?["id"] as? String)
        let (recalled, recall) = try await CrashTests.send(b.base, "POST", "v1/memories/search", ["query": "bees roof", "scopes": ["user:ada"]], patient: true)
        #expect(recalled == 200)
        #expect(((recall["hits"] as? [[String: Any]]) ?? []).compactMap { ($0["memory"] as? [String: Any])?["id"] as? String } == [id])

        // A bot made through one is served by the other.
        let (created, _) = try await CrashTests.send(a.base, "POST", "v1/bots",
                                                    ["name": "baker", "systemPrompt": "You bake.", "sources": [cli.workdir.path + "/notes/bread.md"]], patient: true)
        #expect(created == 201 || created == 200)
        let (served, context) = try await CrashTests.send(b.base, "POST", "v1/context", ["bot": "baker", "query": "flour water", "user": "ada"], patient: true)
        #expect(served == 200)
        let paths = ((context["citations"] as? [[String: Any]]) ?? []).compactMap { $0["path"] as? String }
        #expect(paths.contains { $0.hasSuffix("notes/bread.md") })
        #expect(!paths.contains { $0.hasSuffix("notes/venus.md") })

        // Identical adds racing through both replicas collapse into one memory.
        let ids = try await withThrowingTaskGroup(of: String?.self) { group in
            for i in 0..<16 {
                let base = i % 2 == 0 ? a.base : b.base
                group.addTask {
                    let (_, body) = try await CrashTests.send(base, "POST", "v1/memories", ["content": "Ada is allergic to peanuts.", "scope": "user:ada"], patient: true)
                    return (body["memory"] as? [String: Any])?["id"] as? String
                }
            }
            return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(ids.count == 1 && ids.first! != nil, "\(ids)")
        let (_, found) = try await CrashTests.send(b.base, "POST", "v1/memories/search",
                                                   ["query": "allergic peanuts", "scopes": ["user:ada"], "mode": "keyword"], patient: true)
        #expect(((found["hits"] as? [[String: Any]]) ?? []).count == 1)
    }
}

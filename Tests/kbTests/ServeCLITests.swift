import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KBEmbed
import Testing

@Suite struct ServeCLITests {
    @Test func aChatClientGetsABotsContextWithOneHTTPCall() async throws {
        let cli = try CLI()
        try cli.write("notes/venus.md", "# Venus\n\nVenus in the tenth house favours a career in the arts.")
        try cli.write("private/diary.md", "# Diary\n\nA secret about the tenth house.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "notes", "private").status == 0)
        #expect(try await cli.run("bot", "create", "--db", "kb.sqlite", "astro", "--system-prompt", "Be kind.", "--source", "notes").status == 0)
        let served = try await ServedIndex(cli, token: "cli-test-token-0123456789")
        defer { served.stop() }

        let (status, body) = try await served.post("v1/context", ["bot": "astro", "query": "tenth house career", "budget": 300])
        #expect(status == 200)
        let citations = try #require(body?["citations"] as? [[String: Any]])
        #expect(citations.count == 1)
        #expect((citations.first?["path"] as? String)?.hasSuffix("notes/venus.md") == true)
        #expect((body?["context"] as? String)?.contains("career in the arts") == true)
        let (unauthorized, error) = try await served.post("v1/context", ["bot": "astro", "query": "x"], authorized: false)
        #expect(unauthorized == 401)
        #expect((error?["error"] as? [String: Any])?["code"] as? String == "unauthorized")
    }

    /// SIGTERM shuts `kb serve` down gracefully: the server stops taking requests, then the
    /// request log writes what it still holds (the last second's requests were lost before).
    @Test func aGracefulStopKeepsTheLastRequestsInTheLog() async throws {
        let cli = try CLI()
        try cli.write("notes/venus.md", "# Venus\n\nVenus in the tenth house favours a career in the arts.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "none", "notes").status == 0)
        let served = try await ServedIndex(cli, token: nil)
        let (status, _) = try await served.post("v1/search", ["query": "tenth house career", "k": 2])
        #expect(status == 200)
        served.stop()
        let usage = try await cli.run("usage", "--db", "kb.sqlite", "--by", "route", "--json")
        let rows = try #require((usage.json as? [String: Any])?["rows"] as? [[String: Any]], "\(usage.stdout) \(usage.stderr)")
        #expect(rows.contains { $0["key"] as? String == "POST /v1/search" && $0["requests"] as? Int == 1 }, "\(rows)")
    }

    /// A debug build (scripts/setup.sh's) says at its start that its PostgreSQL client is
    /// unoptimised — on a PostgreSQL index only; a release build never does (docs/postgresql.md).
    @Test func aDebugBuildSaysSoOnPostgreSQLOnly() async throws {
        let cli = try CLI()
        try cli.write("notes/venus.md", "# Venus\n\nVenus rules love.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "none", "notes").status == 0)
        let served = try await ServedIndex(cli, token: nil)
        served.stop()
        let noted = served.printed.contains("is a debug build")
        #if DEBUG
        #expect(noted == cli.index.hasPrefix("postgres"), "\(served.printed)")
        #else
        #expect(!noted, "\(served.printed)")
        #endif
    }

    @Test func serveRefusesAPublicAddressWithoutAToken() async throws {
        let cli = try CLI()
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "none", ".").status != 64)
        let result = try await cli.run("serve", "--db", "kb.sqlite", "--host", "0.0.0.0", environment: ["KB_API_TOKEN": ""])
        #expect(result.status == 1)
        #expect(result.stderr.contains("without a token"))
    }

    @Test func contextAndBotCommandsWorkFromTheCommandLine() async throws {
        let cli = try CLI()
        try cli.write("notes/saturn.md", "---\ntags: [area:career]\n---\n# Saturn\n\nSaturn rules discipline and the long climb of a career.")
        try cli.write("report.yaml", "title: Outlook\nsections:\n  - name: Career\n    query: career discipline\n    tags: [area:career]\n    snippets: 2\n    share: 1\n")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "notes").status == 0)
        #expect(try await cli.run("bot", "create", "--db", "kb.sqlite", "tutor").status == 0)
        let empty = try await cli.run("context", "--db", "kb.sqlite", "--bot", "tutor", "career")
        #expect(empty.stdout.contains("No reference material was found"))
        #expect(try await cli.run("bot", "add-source", "--db", "kb.sqlite", "tutor", "tag:area:career").status == 0)
        let context = try await cli.run("context", "--db", "kb.sqlite", "--bot", "tutor", "--budget", "300", "--json", "career")
        let json = try #require(context.json as? [String: Any])
        #expect((json["citations"] as? [Any])?.count == 1)
        #expect((json["tokens"] as? Int ?? 999) <= 300)
        let report = try await cli.run("context", "--db", "kb.sqlite", "--report", "report.yaml")
        #expect(report.stdout.contains("<section name=\"Career\">"))
        let missing = try await cli.run("context", "--db", "kb.sqlite", "--bot", "nobody", "x")
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("No bot is named nobody"))
        let remove = try await cli.run("bot", "remove-source", "--db", "kb.sqlite", "tutor", "tag:area:career")
        #expect(remove.status == 0)
        #expect(try await cli.run("bot", "delete", "--db", "kb.sqlite", "tutor").status == 0)
        #expect(try await cli.run("bot", "show", "--db", "kb.sqlite", "tutor").status == 1)
    }
}

@Suite struct RemoteEmbedderCLITests {
    @Test func ingestingThroughKbServeGivesTheSameSearchResultsAsTheLocalModel() async throws {
        let cli = try CLI()
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("corpus"), to: cli.workdir.appendingPathComponent("corpus"))
        #expect(try await cli.run("ingest", "--db", "server.sqlite", "--embedder", "none", "corpus/README.md").status == 0)
        let served = try await ServedIndex(cli, index: "server.sqlite", token: nil)
        defer { served.stop() }
        let url = served.base.appendingPathComponent("v1").absoluteString
        let remote = try await cli.run("ingest", "--db", "remote.sqlite", "--embedder", "openai:all-MiniLM-L6-v2", "--embedder-url", url, "corpus")
        #expect(remote.status == 0, "\(remote.stderr)")
        #expect(try await cli.run("ingest", "--db", "local.sqlite", "corpus").status == 0)
        let status = try #require(try await cli.run("status", "--db", "remote.sqlite", "--json").json as? [String: Any])
        let embedder = try #require(status["embedder"] as? [String: Any])
        #expect(embedder["name"] as? String == "openai:all-MiniLM-L6-v2")
        #expect(embedder["spec"] as? String == "openai:all-MiniLM-L6-v2@\(url)")
        #expect(((status["tokensUsed"] as? [String: Int])?["openai:all-MiniLM-L6-v2"] ?? 0) > 0)
        for query in ["getting a PhD", "my mum", "wedding", "when does Saturn return"] {
            for mode in ["vector", "hybrid"] {
                // No --embedder flag: the index remembers its endpoint.
                let a = try #require(try await cli.run("search", "--db", "remote.sqlite", "--mode", mode, "--json", query).json as? [String: Any])
                let b = try #require(try await cli.run("search", "--db", "local.sqlite", "--mode", mode, "--json", query).json as? [String: Any])
                let pathsA = (a["hits"] as? [[String: Any]] ?? []).map { $0["sourcePath"] as? String }
                let pathsB = (b["hits"] as? [[String: Any]] ?? []).map { $0["sourcePath"] as? String }
                #expect(!pathsA.isEmpty && pathsA == pathsB, "\(mode) \(query)")
            }
        }
        // A second ingest of the same files into a new index reuses nothing (new file), but an
        // unchanged re-run sends nothing at all.
        let rerun = try await cli.run("ingest", "--db", "remote.sqlite", "--json", "corpus")
        #expect((rerun.json as? [String: Any])?["unchanged"] as? Int == 27)
    }
}

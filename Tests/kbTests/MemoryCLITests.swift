import Foundation
import Testing

@Suite struct MemoryCLITests {
    func add(_ cli: CLI, _ arguments: String...) async throws -> [String: Any] {
        let result = try await cli.run(["memory", "add", "--db", "kb.sqlite", "--embedder", "hashing", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(result.json as? [String: Any])
    }

    @Test func addListSearchUpdateShowDeleteFromTheBinary() async throws {
        let cli = try CLI()
        let first = try await add(cli, "--scope", "user:ada", "--tag", "preference", "--title", "Units", "Prefers metric units.")
        #expect(first["created"] as? Bool == true)
        let id = try #require((first["memory"] as? [String: Any])?["id"] as? String)
        let again = try await add(cli, "--scope", "user:ada", "Prefers   metric units.")
        #expect(again["created"] as? Bool == false)
        #expect((again["memory"] as? [String: Any])?["id"] as? String == id)
        _ = try await add(cli, "--scope", "user:bob", "Is allergic to peanuts.")

        let list = try await cli.run("memory", "list", "--db", "kb.sqlite", "--scope", "user:ada", "--json")
        #expect((list.json as? [[String: Any]])?.count == 1)
        let text = try await cli.run("memory", "list", "--db", "kb.sqlite")
        #expect(text.stdout.contains(String(id.prefix(8))) && text.stdout.contains("2 memories."))

        let found = try await cli.run("memory", "search", "--db", "kb.sqlite", "--scope", "user:bob", "--json", "peanuts")
        let hits = try #require((found.json as? [String: Any])?["hits"] as? [[String: Any]])
        #expect(hits.count == 1)
        let none = try await cli.run("memory", "search", "--db", "kb.sqlite", "--scope", "user:ada", "peanuts", "--mode", "keyword")
        #expect(none.stdout.contains("No memories match"))

        let update = try await cli.run("memory", "update", "--db", "kb.sqlite", String(id.prefix(6)), "--content", "Prefers metric units and Celsius.")
        #expect(update.status == 0)
        #expect(update.stdout.contains("version 2"))
        let show = try await cli.run("memory", "show", "--db", "kb.sqlite", id, "--history")
        #expect(show.stdout.contains("Prefers metric units and Celsius."))
        #expect(show.stdout.contains("--- version 1"))
        #expect(show.stdout.contains("Prefers metric units."))

        let delete = try await cli.run("memory", "delete", "--db", "kb.sqlite", id)
        #expect(delete.status == 0)
        let gone = try await cli.run("memory", "show", "--db", "kb.sqlite", id)
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("No memory has the id"))
        let search = try await cli.run("memory", "search", "--db", "kb.sqlite", "Celsius", "--mode", "keyword")
        #expect(search.stdout.contains("No memories match"))
    }

    @Test func knowledgeSearchShowsMemoriesOnlyWithKindMemory() async throws {
        let cli = try CLI()
        try cli.write("notes/units.md", "# Units\n\nThe metric system uses grams.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "notes").status == 0)
        _ = try await add(cli, "Prefers metric grams.")
        let plain = try #require(try await cli.run("search", "--db", "kb.sqlite", "--json", "metric grams").json as? [String: Any])
        #expect((plain["hits"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["note"])
        let memories = try await cli.run("search", "--db", "kb.sqlite", "--kind", "memory", "metric grams")
        #expect(memories.stdout.contains("Prefers **metric** **grams**."))
        #expect(memories.stdout.contains("memory "))
        let sources = try await cli.run("sources", "--db", "kb.sqlite")
        #expect(!sources.stdout.contains("memory:"))
    }

    @Test func exportImportRoundTripsAndBadLinesExit1WithTheirNumbers() async throws {
        let cli = try CLI()
        let a = try await add(cli, "--scope", "bot:chef", "Answers in French.")
        let id = try #require((a["memory"] as? [String: Any])?["id"] as? String)
        #expect(try await cli.run("memory", "update", "--db", "kb.sqlite", id, "--tag", "language").status == 0)
        _ = try await add(cli, "--scope", "user:ada", "Likes tea.")
        let export = try await cli.run("memory", "export", "--db", "kb.sqlite")
        #expect(export.stdout.split(separator: "\n").count == 2)
        try cli.write("memories.jsonl", export.stdout + "{\"id\": 3}\n")

        let first = try await cli.run("memory", "import", "--db", "copy.sqlite", "--embedder", "hashing", "memories.jsonl")
        #expect(first.status == 1)
        #expect(first.stderr.contains("memories.jsonl:3:"))
        #expect(first.stdout.contains("Imported 2 new"))
        let second = try await cli.run("memory", "import", "--db", "copy.sqlite", "--json", "memories.jsonl")
        let report = try #require(second.json as? [String: Any])
        #expect(report["unchanged"] as? Int == 2)
        #expect(report["added"] as? Int == 0)
        #expect(try await cli.run("memory", "export", "--db", "copy.sqlite").stdout == export.stdout)
    }

    /// A bad request (a value its checks refuse) is bad usage, 64; a request that fails on the
    /// index's contents is a failure, 1. Either way nothing changes.
    @Test(arguments: [
        (["memory", "add", "--db", "kb.sqlite", "--embedder", "hashing", "  "], "empty", 64),
        (["memory", "add", "--db", "kb.sqlite", "--embedder", "hashing", "--max-size", "4", "too long"], "limit is 4", 64),
        (["memory", "add", "--db", "kb.sqlite", "--embedder", "hashing", "--scope", "team:x", "hi"], "user:ID", 64),
        (["memory", "show", "--db", "kb.sqlite", "0123abcd"], "No memory has the id 0123abcd", 1),
        (["memory", "delete", "--db", "kb.sqlite", "not-an-id!"], "not a memory id", 64),
        (["memory", "search", "--db", "kb.sqlite", "--half-life", "soon", "x"], "not a half-life", 64),
        (["memory", "import", "--db", "kb.sqlite", "missing.jsonl"], "No such file: missing.jsonl", 1),
    ])
    func badInputExitsWithAMessageThatNamesIt(arguments: [String], message: String, status: Int32) async throws {
        let cli = try CLI()
        _ = try await add(cli, "seed memory")
        let result = try await cli.run(arguments)
        #expect(result.status == status, "\(result.stdout)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect((try await cli.run("memory", "list", "--db", "kb.sqlite", "--json").json as? [[String: Any]])?.count == 1)
    }
}

import Foundation
import Testing

@Suite struct MemoryCLITests {
    func add(_ cli: CLI, _ arguments: String...) async throws -> [String: Any] {
        let result = try await cli.run(["memory", "add", "--db", "kb.sqlite", "--embedder", "hashing", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(result.json as? [String: Any])
    }

    @Test func memoriesAreLearnedFromAConversationFileAndAFollowUpFindsItsSubject() async throws {
        let cli = try CLI()
        try cli.write("chat.json", #"[{"role": "user", "content": "I'm allergic to peanuts, by the way."}, {"role": "assistant", "content": "Noted."}]"#)
        let shown = try await cli.run("memory", "extract", "--db", "kb.sqlite", "--embedder", "hashing", "--user", "ada", "chat.json")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("add [en]: Allergic to peanuts.") && shown.stdout.contains("Nothing stored; run again with --apply"))
        let applied = try await cli.run("memory", "extract", "--db", "kb.sqlite", "--user", "ada", "--apply", "--json", "-",
                                        input: #"{"user": "bob", "turns": [{"role": "user", "content": "I live in Kyiv."}]}"#)
        let extraction = try #require(applied.json as? [String: Any])
        #expect(extraction["scope"] as? String == "user:ada" && extraction["applied"] as? Bool == true)   // --user wins over the file
        let list = try await cli.run("memory", "list", "--db", "kb.sqlite", "--scope", "user:ada", "--json")
        #expect((list.json as? [[String: Any]])?.map { $0["content"] as? String } == ["Lives in Kyiv."])
        let bad = try await cli.run("memory", "extract", "--db", "kb.sqlite", "chat.json")
        #expect(bad.status != 0 && bad.stderr.contains("--user"))
        let badModel = try await cli.run("memory", "extract", "--db", "kb.sqlite", "--user", "ada", "--llm", "gpt-4o", "chat.json")
        #expect(badModel.status != 0 && badModel.stderr.contains("openai:MODEL"))

        try cli.write("notes/saturn.md", "# Saturn\n\nSaturn, the planet of structure, limits and duty, returns to its natal place every twenty-nine years.")
        try cli.write("notes/jupiter.md", "# Jupiter\n\nJupiter comes back to its natal place every twelve years.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "notes").status == 0)
        #expect(try await cli.run("bot", "create", "astro", "--db", "kb.sqlite", "--source", "notes").status == 0)
        try cli.write("history.json", #"[{"role": "user", "content": "What does Saturn stand for?"}, {"role": "assistant", "content": "Structure and limits."}]"#)
        let context = try await cli.run("context", "--db", "kb.sqlite", "--bot", "astro", "--history", "history.json", "--json",
                                        "And when does it come back to its natal place?")
        let response = try #require(context.json as? [String: Any], "\(context.stderr)")
        #expect(((response["citations"] as? [[String: Any]])?.first)?["title"] as? String == "Saturn")
        #expect(((response["retrieval"] as? [String: Any])?["queries"] as? [Any])?.count == 2)
        try cli.write("bad.json", #"[{"role": "system", "content": "x"}]"#)
        let refused = try await cli.run("context", "--db", "kb.sqlite", "--bot", "astro", "--history", "bad.json", "and then?")
        #expect(refused.status != 0 && refused.stderr.contains("bad.json"))
    }

    @Test func tokensUsageAndErasureFromTheBinary() async throws {
        let cli = try CLI()
        _ = try await add(cli, "--scope", "user:ada", "Ada's locker is 41.")
        _ = try await add(cli, "--scope", "user:bob", "Bob's locker is 7.")
        #expect(try await cli.run("bot", "create", "astro", "--db", "kb.sqlite").status == 0)
        let created = try await cli.run("token", "create", "ada-app", "--db", "kb.sqlite", "--scope", "user:ada", "--bot", "astro", "--expires", "30d")
        #expect(created.status == 0 && created.stdout.hasPrefix("kb_") && created.stderr.contains("shown this once"))
        let listed = try await cli.run("token", "list", "--db", "kb.sqlite")
        #expect(listed.stdout.contains("ada-app") && listed.stdout.contains("scopes: user:ada") && !listed.stdout.contains(created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let bad = try await cli.run("token", "create", "x", "--db", "kb.sqlite", "--scope", "bot:*")
        #expect(bad.status != 0 && bad.stderr.contains("token scope"))
        #expect(try await cli.run("token", "revoke", "ada-app", "--db", "kb.sqlite").stdout.contains("Revoked"))
        let usage = try await cli.run("usage", "--db", "kb.sqlite", "--by", "report")
        #expect(usage.status == 0 && usage.stdout.contains("No requests logged"))
        #expect(try await cli.run("usage", "--db", "kb.sqlite", "--by", "week").status != 0)

        let erased = try await cli.run("memory", "erase", "--db", "kb.sqlite", "--scope", "user:ada", "--json")
        #expect((erased.json as? [String: Any])?["memories"] as? Int == 1)
        let left = try await cli.run("memory", "list", "--db", "kb.sqlite", "--json")
        #expect((left.json as? [[String: Any]])?.map { $0["content"] as? String } == ["Bob's locker is 7."])
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

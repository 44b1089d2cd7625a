import Foundation
import KBCore
import KBTestSupport
import Testing

@Suite struct EndToEndTests {
    func populated() async throws -> CLI {
        let cli = try CLI()
        try cli.write("notes/venus.md", """
            ---
            title: Venus
            tags: [planet:venus]
            area: love
            ---
            # Venus

            Venus rules love, beauty and money.

            ## In the tenth house

            Venus in the tenth house brings grace to a public career.
            """)
        try cli.write("notes/saturn.md", "# Saturn\n\nSaturn teaches discipline and patience.\n")
        try cli.write("notes/plain.txt", "A plain text note about the Moon.\n")
        return cli
    }

    @Test func ingestThenSearchFromTheBinary() async throws {
        let cli = try await populated()
        let ingest = try await cli.run("ingest", "--db", "kb.sqlite", "notes")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(ingest.stdout.contains("3 added, 0 updated, 0 unchanged, 0 removed, 0 failed"))
        #expect(ingest.stderr.isEmpty, "piped stderr must carry no progress bar: \(ingest.stderr)")

        let search = try await cli.run("search", "--db", "kb.sqlite", "career", "in", "public")
        #expect(search.status == 0)
        #expect(search.stdout.hasPrefix("1. Venus"))
        #expect(search.stdout.contains("notes/venus.md › Venus › In the tenth house"))
        #expect(search.stdout.contains("**career**"))

        let again = try await cli.run("ingest", "--db", "kb.sqlite", "notes")
        #expect(again.stdout.contains("0 added, 0 updated, 3 unchanged"))
    }

    /// Passages ingested in one precision and queries embedded in another rank alike (the README
    /// says precisions may be mixed); an unknown precision is bad usage, naming the choices.
    @Test func precisionsMixInOneIndexAndAnUnknownOneIsBadUsage() async throws {
        let cli = try await populated()
        let ingest = try await cli.run("ingest", "--db", "kb.sqlite", "--precision", "fp32", "notes")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        for precision in ["fp32", "auto", "bf16", "int8"] {
            let search = try await cli.run("search", "--db", "kb.sqlite", "--precision", precision, "career", "in", "public")
            if search.stderr.contains("instructions for --precision") { continue }   // this CPU lacks them
            #expect(search.status == 0, "\(precision): \(search.stderr)")
            #expect(search.stdout.hasPrefix("1. Venus"), "\(precision): \(search.stdout)")
        }
        let bad = try await cli.run("search", "--db", "kb.sqlite", "--precision", "fp16", "venus")
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("Use auto, fp32, bf16 or int8"))
        let badEnvironment = try await cli.run("search", "--db", "kb.sqlite", "venus", environment: ["KB_PRECISION": "half"])
        #expect(badEnvironment.status == 1)
        #expect(badEnvironment.stderr.contains("Unknown precision 'half'"))
    }

    @Test func theDatabaseComesFromKB_DBWhenNoFlagIsGiven() async throws {
        let cli = try await populated()
        try await cli.run("ingest", "notes", environment: ["KB_DB": cli.workdir.appendingPathComponent("env.sqlite").path])
        #expect(FileManager.default.fileExists(atPath: cli.workdir.appendingPathComponent("env.sqlite").path))
        try await cli.run("ingest", "notes")
        #expect(FileManager.default.fileExists(atPath: cli.workdir.appendingPathComponent("xdg/kb/kb.sqlite").path))
    }

    @Test func jsonShapesStayStable() async throws {
        let cli = try await populated()
        let ingest = try await cli.run("ingest", "--db", "kb.sqlite", "--json", "notes")
        try Snapshot.check(Snapshot.shape(ingest.jsonValue), named: "ingest.json.shape")
        let search = try await cli.run("search", "--db", "kb.sqlite", "--json", "venus")
        try Snapshot.check(Snapshot.shape(search.jsonValue), named: "search.json.shape")
        let sources = try await cli.run("sources", "--db", "kb.sqlite", "--json")
        try Snapshot.check(Snapshot.shape(sources.jsonValue), named: "sources.json.shape")
        let status = try await cli.run("status", "--db", "kb.sqlite", "--json")
        try Snapshot.check(Snapshot.shape(status.jsonValue), named: "status.json.shape")
        let inspect = try await cli.run("inspect", "--json", "notes/venus.md")
        try Snapshot.check(Snapshot.shape(inspect.jsonValue), named: "inspect.json.shape")
        let remove = try await cli.run("remove", "--db", "kb.sqlite", "--json", "notes/saturn.md")
        try Snapshot.check(Snapshot.shape(remove.jsonValue), named: "remove.json.shape")
    }

    @Test func jsonValuesSayWhatHappened() async throws {
        let cli = try await populated()
        let ingest = try #require(try await cli.run("ingest", "--db", "kb.sqlite", "--json", "notes").json as? [String: Any])
        #expect(ingest["added"] as? Int == 3)
        let status = try #require(try await cli.run("status", "--db", "kb.sqlite", "--json").json as? [String: Any])
        #expect(status["sources"] as? Int == 3)
        // The precision the new index's passages were embedded in: what its searches embed queries in.
        #expect(["int8", "bf16", "fp32"].contains((status["embedder"] as? [String: Any])?["precision"] as? String ?? "none"))
        #expect(status["schemaVersion"] as? Int == (TestBackend.isSQLite ? 15 : 14))   // each backend numbers its own migrations
        let search = try #require(try await cli.run("search", "--db", "kb.sqlite", "--json", "--tag", "area:love", "venus").json as? [String: Any])
        let hits = try #require(search["hits"] as? [[String: Any]])
        #expect(hits.count == 2)
    }

    @Test func helpTextStaysStable() async throws {
        let cli = try CLI()
        for command in [[], ["ingest"], ["search"], ["inspect"], ["memory"]] {
            let result = try await cli.run(command + ["--help"], environment: ["COLUMNS": "100"])
            #expect(result.status == 0)
            try Snapshot.check(result.stdout, named: "help-\(command.first ?? "kb").txt")
        }
    }

    /// Every command's and subcommand's help, found by walking the SUBCOMMANDS of each: no line
    /// shows a source line's continuation backslash.
    @Test func noHelpTextShowsALineContinuation() async throws {
        let cli = try CLI()
        var pending: [[String]] = [[]]
        var seen = 0
        while let command = pending.popLast() {
            let help = try await cli.run(command + ["--help"], environment: ["COLUMNS": "100"]).stdout
            seen += 1
            #expect(!help.components(separatedBy: "\n").contains { $0.hasSuffix("\\") }, "kb \(command.joined(separator: " ")) --help")
            guard let section = help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first else { continue }
            // Subcommands are listed lower case; the section ends with "See 'kb help …'".
            for line in section.components(separatedBy: "\n") where line.hasPrefix("  ") && !line.hasPrefix("   ") && command.count < 3 {
                let name = line.trimmingCharacters(in: .whitespaces).components(separatedBy: " ")[0]
                if name.range(of: "^[a-z][a-z-]*$", options: .regularExpression) != nil, name != "help" { pending.append(command + [name]) }
            }
        }
        #expect(seen > 25)
    }

    @Test(.enabled(if: TestBackend.isSQLite, "about index files"))
    func searchingWithoutAnIndexSaysHowToMakeOne() async throws {
        let cli = try CLI()
        let result = try await cli.run("search", "--db", "missing.sqlite", "venus")
        #expect(result.status == 1)
        #expect(result.stderr.contains("No index at"))
        #expect(result.stderr.contains("kb ingest"))
        #expect(!FileManager.default.fileExists(atPath: cli.workdir.appendingPathComponent("missing.sqlite").path))
    }

    @Test(.enabled(if: TestBackend.isSQLite, "about index files"))
    func aFileThatIsNotAnIndexIsNamedInTheError() async throws {
        let cli = try CLI()
        try cli.write("foo.sqlite", String(repeating: "not sqlite ", count: 200))
        let result = try await cli.run("status", "--db", "foo.sqlite")
        #expect(result.status == 1)
        #expect(result.stderr.contains("Not a kb index"))
        #expect(result.stderr.contains("foo.sqlite"))
    }

    @Test(arguments: [["search", "-k", "0", "venus"], ["ingest"], ["frobnicate"], ["search", "--mode", "fuzzy", "x"],
                      ["ingest", "--chunk-size", "10", "notes"]])
    func badUsageExitsWith64(arguments: [String]) async throws {
        let cli = try CLI()
        let result = try await cli.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }

    @Test func aFailedFileMakesTheRunExit1AndNamesTheFile() async throws {
        let cli = try await populated()
        try cli.write("notes/bad.md", "---\ntitle: [oops\n---\nbody")
        let result = try await cli.run("ingest", "--db", "kb.sqlite", "notes")
        #expect(result.status == 1)
        #expect(result.stdout.contains("3 added"))
        #expect(result.stderr.contains("notes/bad.md: front matter is not valid YAML"))
    }

    @Test func inspectPrintsSnippetsWithoutMakingAnIndex() async throws {
        let cli = try await populated()
        let result = try await cli.run("inspect", "--chunk-size", "60", "notes/venus.md")
        #expect(result.status == 0)
        #expect(result.stdout.contains("#0 ["))
        #expect(result.stdout.contains("Venus › In the tenth house"))
        #expect(!FileManager.default.fileExists(atPath: cli.workdir.appendingPathComponent("xdg/kb/kb.sqlite").path))
    }

    @Test func removeTakesSourcesOutOfSearch() async throws {
        let cli = try await populated()
        try await cli.run("ingest", "--db", "kb.sqlite", "notes")
        #expect(try await cli.run("remove", "--db", "kb.sqlite", "notes/saturn.md").status == 0)
        #expect(try await cli.run("search", "--db", "kb.sqlite", "--mode", "keyword", "discipline").stdout.hasPrefix("No matches"))
        #expect(!(try await cli.run("search", "--db", "kb.sqlite", "discipline").stdout.contains("saturn.md")))
        #expect(try await cli.run("remove", "--db", "kb.sqlite", "notes/saturn.md").status == 1)
    }

    @Test func textOnStandardInputBecomesASourceThatSourcesRemoveTakesOut() async throws {
        let cli = try await populated()
        try await cli.run("ingest", "--db", "kb.sqlite", "notes")
        let added = try await cli.run("ingest", "--db", "kb.sqlite", "--json", "--title", "Pluto", "--id", "pluto-notes", "-",
                                      input: "# Pluto\n\nPluto transforms whatever it touches, slowly and for good.\n")
        #expect(added.status == 0, "\(added.stderr)")
        let source = try #require((added.json as? [String: Any])?["source"] as? [String: Any])
        #expect(source["id"] as? String == "pluto-notes")

        let listed = try await cli.run("sources", "--db", "kb.sqlite")
        #expect(listed.stdout.contains("Pluto — upload:pluto-notes"), "\(listed.stdout)")
        #expect(listed.stdout.contains("4 source(s)"))
        let search = try await cli.run("search", "--db", "kb.sqlite", "--mode", "keyword", "transforms")
        #expect(search.stdout.hasPrefix("1. Pluto"), "\(search.stdout)")

        // Read again from the original kept with the index.
        let reread = try await cli.run("sources", "reread", "--db", "kb.sqlite", "pluto-notes")
        #expect(reread.status == 0 && reread.stdout == "pluto-notes: read again, 1 snippet.\n", "\(reread.stdout)\(reread.stderr)")
        #expect(try await cli.run("sources", "reread", "--db", "kb.sqlite", "no-such-source").status == 1)

        let removed = try await cli.run("sources", "remove", "--db", "kb.sqlite", "pluto-notes")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("Removed the source pluto-notes."))
        #expect(try await cli.run("search", "--db", "kb.sqlite", "--mode", "keyword", "transforms").stdout.hasPrefix("No matches"))
        let again = try await cli.run("sources", "remove", "--db", "kb.sqlite", "pluto-notes")
        #expect(again.status == 1 && again.stderr.contains("pluto-notes"), "\(again.stderr)")
        // A file's source is removed with `kb remove PATH`, and the error says so.
        let file = try await cli.run("sources", "remove", "--db", "kb.sqlite", "notes/saturn.md")
        #expect(file.status != 0, "\(file.stdout)")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "-", input: "   ").status != 0)
    }

    /// `kb ingest - < folder` (a read the system refuses) is an error naming standard input, not a crash.
    @Test func standardInputThatCannotBeReadIsAnErrorAndChangesNothing() async throws {
        let cli = try await populated()
        try await cli.run("ingest", "--db", "kb.sqlite", "notes")
        let before = try await cli.run("sources", "--db", "kb.sqlite").stdout
        for arguments in [["ingest", "--db", "kb.sqlite", "-"], ["memory", "add", "--db", "kb.sqlite", "-"],
                          ["context", "--db", "kb.sqlite", "--history", "-", "saturn"]] {
            let refused = try await cli.run(arguments, inputFrom: "notes")
            #expect(refused.status == 1, "\(arguments): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains("Cannot read standard input (Is a directory)"), "\(arguments): \(refused.stderr)")
        }
        #expect(try await cli.run("sources", "--db", "kb.sqlite").stdout == before)
        #expect(try await cli.run("memory", "list", "--db", "kb.sqlite").stdout.contains("No memories"))
    }
}

@Suite struct EmbeddingEndToEndTests {
    @Test func ingestStores384DimVectorsFromTheLocalModel() async throws {
        let cli = try CLI()
        try cli.write("notes/a.md", "# A\n\nThe Moon rules the home.\n")
        let ingest = try await cli.run("ingest", "--db", "kb.sqlite", "notes")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let status = try await cli.run("status", "--db", "kb.sqlite")
        #expect(status.stdout.contains("Embedder: all-MiniLM-L6-v2 (384-dim, 1 vectors)"))
    }

    @Test func embedPrintsTheReferenceVector() async throws {
        let cli = try CLI()
        let result = try await cli.run("embed", "--json", "--precision", "fp32", "Hello world")   // the reference is fp32
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let vectors = object?["vectors"] as? [[Double]]
        #expect(object?["dimension"] as? Int == 384)
        #expect(abs((vectors?.first?.first ?? 0) - (-0.0344772562)) < 1e-4)
    }

    @Test func aMissingModelNamesTheInstallCommand() async throws {
        let cli = try CLI()
        try cli.write("notes/a.md", "text")
        let result = try await cli.run("ingest", "--db", "kb.sqlite", "notes", environment: ["KB_MODEL_DIR": "/nonexistent"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("scripts/install-model.sh"))
        #expect(!FileManager.default.fileExists(atPath: cli.workdir.appendingPathComponent("kb.sqlite").path))
    }
}

/// Hybrid search on the sample corpus with the real model: paraphrases that share no word with
/// the answer, and exact names.
@Suite struct CorpusSearchTests {
    /// The corpus, ingested once for the whole suite.
    static let prepared = Task {
        let cli = try CLI()
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("corpus"), to: cli.workdir.appendingPathComponent("corpus"))
        _ = try await cli.run("ingest", "--db", "kb.sqlite", "--tags-from", "corpus/tags.yaml", "corpus")
        return cli
    }

    @Test(arguments: [
        ("getting a PhD", "corpus/planets/jupiter.md"),
        ("my mum", "corpus/planets/moon.md"),
        ("wedding", "corpus/areas/love.md"),
        ("morning star", "corpus/planets/venus.md"),
        ("Uranus opposition", "corpus/planets/uranus.md"),
        ("sudden upheaval and rebellion", "corpus/planets/uranus.md"),
    ])
    func theRightNoteComesFirst(query: String, expected: String) async throws {
        let result = try await Self.prepared.value.run("search", "--db", "kb.sqlite", "--json", "-k", "3", query)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["mode"] as? String == "hybrid")
        #expect(object["embedder"] as? String == "all-MiniLM-L6-v2")
        let first = (object["hits"] as? [[String: Any]])?.first?["sourcePath"] as? String
        #expect(first?.hasSuffix(expected) == true, "\(query): first hit \(first ?? "none")")
    }

    @Test func tagFiltersReturnKHitsWhenThatManyExist() async throws {
        let result = try await Self.prepared.value.run("search", "--db", "kb.sqlite", "--json", "-k", "5", "--tag", "area:career", "--mode", "vector", "love and beauty")
        let hits = try #require((try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["hits"] as? [[String: Any]])
        #expect(hits.count == 4)   // career.md has exactly four snippets
        #expect(hits.allSatisfy { ($0["sourcePath"] as? String)?.hasSuffix("career.md") == true })
    }

    @Test func withoutTheModelASearchAnswersFromKeywordsAndSaysSo() async throws {
        let cli = try await Self.prepared.value
        let missing = ["KB_MODEL_DIR": "/nonexistent/all-MiniLM-L6-v2"]
        let human = try await cli.run(["search", "--db", "kb.sqlite", "when does Saturn return"], environment: missing)
        #expect(human.status == 0)
        #expect(human.stdout.contains("Saturn"))
        #expect(human.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }.count == 1)
        #expect(human.stderr.contains("keyword results only") && human.stderr.contains("not installed"))
        let json = try #require(try await cli.run(["search", "--db", "kb.sqlite", "--json", "when does Saturn return"], environment: missing).json
            as? [String: Any])
        #expect(json["mode"] as? String == "keyword")
        #expect((json["degraded"] as? [String: Any])?["reason"] as? String != nil)
        #expect((json["hits"] as? [Any])?.isEmpty == false)
        // Vector mode has nothing to fall back to.
        let vector = try await cli.run(["search", "--db", "kb.sqlite", "--mode", "vector", "Saturn"], environment: missing)
        #expect(vector.status == 1)
        #expect(vector.stderr.contains("scripts/install-model.sh"))
    }

    @Test func groupBySourceKeepsOneSnippetPerSource() async throws {
        let result = try await Self.prepared.value.run("search", "--db", "kb.sqlite", "--json", "-k", "6", "--group-by", "source", "Venus")
        let hits = try #require((try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["hits"] as? [[String: Any]])
        let paths = hits.compactMap { $0["sourcePath"] as? String }
        #expect(paths.count == 6)
        #expect(Set(paths).count == paths.count)
    }
}

@Suite struct EvalEndToEndTests {
    func tinyDataset(_ cli: CLI) async throws {
        try cli.write("tiny/corpus.jsonl", """
            {"_id": "venus", "title": "Venus", "text": "Venus rules love, beauty and money."}
            {"_id": "saturn", "title": "Saturn", "text": "Saturn rules discipline, time and limits."}
            {"_id": "mars", "title": "Mars", "text": "Mars rules courage, conflict and drive."}
            """)
        try cli.write("tiny/queries.jsonl", """
            {"_id": "1", "text": "love and money"}
            {"_id": "2", "text": "discipline and limits"}
            {"_id": "3", "text": "nothing relevant"}
            """)
        try cli.write("tiny/qrels/test.tsv", "query-id\tcorpus-id\tscore\n1\tvenus\t2\n2\tsaturn\t1\n3\tmars\t0\n")
    }

    @Test func evalReportsMetricsWritesRunFilesAndReportsAndGates() async throws {
        let cli = try CLI()
        try await tinyDataset(cli)
        let result = try await cli.run("eval", "tiny", "--mode", "all", "--embedder", "hashing", "--json",
                                 "--run-file", "run.txt", "--report", "report", "--db", "eval.sqlite")
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["queries"] as? Int == 2 && object["skippedQueries"] as? Int == 1)
        let modes = try #require(object["modes"] as? [[String: Any]])
        #expect(modes.map { $0["mode"] as? String } == ["hybrid", "vector", "keyword"])
        #expect(modes.allSatisfy { (($0["metrics"] as? [String: Double])?["ndcg@10"] ?? 0) == 1 })
        let run = try String(contentsOf: cli.workdir.appendingPathComponent("run.txt.keyword"), encoding: .utf8)
        #expect(run.hasPrefix("1 Q0 venus 1 "))
        #expect(FileManager.default.fileExists(atPath: cli.workdir.appendingPathComponent("report/report.md").path))
        #expect(FileManager.default.fileExists(atPath: cli.workdir.appendingPathComponent("report/ndcg.svg").path))

        // A re-run reuses the index; a baseline shows deltas; the gate fails the run.
        try result.stdout.write(to: cli.workdir.appendingPathComponent("base.json"), atomically: true, encoding: .utf8)
        let gated = try await cli.run("eval", "tiny", "--mode", "keyword", "--db", "eval.sqlite", "--baseline", "base.json",
                                "--fail-below", "ndcg@10=1.01")
        #expect(gated.status == 1)
        #expect(gated.stdout.contains("1.0000 (+0.0000)"))
        #expect(gated.stderr.contains("below threshold: keyword: ndcg@10 = 1.0000 is below 1.0100"))
    }

    @Test func transcriptsAreSearchedOneConversationAtATimeAndJudgedByTurn() async throws {
        let cli = try CLI()
        // Two conversations that both talk of painting; each question is about its own.
        try cli.write("talks/corpus.jsonl", """
            {"_id": "a/1", "title": "8 May", "text": "Ada: What did you paint this week?", "conversation": "a", "position": 0, "speaker": "Ada", "time": "2023-05-08T13:56:00"}
            {"_id": "a/2", "title": "8 May", "text": "Bo: A sunset over the lake, in oils.", "conversation": "a", "position": 1, "speaker": "Bo", "time": "2023-05-08T13:57:00"}
            {"_id": "a/3", "title": "9 May", "text": "Ada: My cat knocked the easel over.", "conversation": "a", "position": 2, "speaker": "Ada"}
            {"_id": "b/1", "title": "1 June", "text": "Cy: I paint portraits of my neighbours.", "conversation": "b", "position": 0, "speaker": "Cy"}
            {"_id": "b/2", "title": "1 June", "text": "Di: Do they sit still for you?", "conversation": "b", "position": 1, "speaker": "Di"}
            """)
        try cli.write("talks/queries.jsonl", """
            {"_id": "q1", "text": "What did Bo paint?", "conversation": "a"}
            {"_id": "q2", "text": "What does Cy paint?", "conversation": "b"}
            """)
        try cli.write("talks/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\ta/2\t1\nq2\tb/1\t1\n")
        let result = try await cli.run("eval", "talks", "--mode", "keyword", "--embedder", "hashing", "--json", "--run-file", "run.txt", "--db", "talks.sqlite")
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["documents"] as? Int == 5)
        let run = try String(contentsOf: cli.workdir.appendingPathComponent("run.txt"), encoding: .utf8)
        let ranked = run.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        // Each question ranks its own conversation's turns only, named by turn id.
        #expect(ranked.filter { $0[0] == "q1" }.allSatisfy { $0[2].hasPrefix("a/") })
        #expect(ranked.filter { $0[0] == "q2" }.allSatisfy { $0[2].hasPrefix("b/") })
        // "paint" is in a/1, not in its answer a/2: the turn after the question is found through it.
        #expect(ranked.filter { $0[0] == "q1" }.map { $0[2] }.contains("a/2"))
        #expect(ranked.first { $0[0] == "q2" }?[2] == "b/1")
        // The conversations are sources of kind conversation, with their turns' speakers as tags.
        let sources = try await cli.run("sources", "--db", "talks.sqlite", "--json")
        #expect(sources.stdout.contains("\"conversation\""), "\(sources.stdout)")
        let bo = try await cli.run("search", "--db", "talks.sqlite", "--json", "--mode", "keyword", "--tag", "speaker:bo", "sunset")
        #expect(bo.stdout.contains("A sunset over the lake"))
    }

    @Test func evalWritesToTheIndexKBDBNames() async throws {
        let cli = try CLI()
        try await tinyDataset(cli)
        let index = cli.index(named: "from-env.sqlite")
        let result = try await cli.run(["eval", "tiny", "--mode", "keyword", "--embedder", "hashing", "--json"], environment: ["KB_DB": index])
        #expect(result.status == 0, "\(result.stderr)")
        let status = try #require(try await cli.run(["status", "--json"], environment: ["KB_DB": index]).json as? [String: Any])
        #expect(status["sources"] as? Int == 3)
        // --db still wins over $KB_DB.
        let named = try await cli.run(["eval", "tiny", "--mode", "keyword", "--embedder", "hashing", "--db", "named.sqlite"],
                                      environment: ["KB_DB": index])
        #expect(named.status == 0, "\(named.stderr)")
        #expect((try await cli.run("status", "--db", "named.sqlite", "--json").json as? [String: Any])?["sources"] as? Int == 3)
    }

    @Test func aMissingDatasetIsAClearError() async throws {
        let cli = try CLI()
        let result = try await cli.run("eval", "nowhere", "--embedder", "hashing")
        #expect(result.status == 1)
        #expect(result.stderr.contains("No qrels for split 'test'"))
    }
}

/// The project's own labelled set stays above a quality floor.
@Suite struct OwnEvaluationSetTests {
    @Test func hybridRetrievalOnTheSampleCorpusStaysAboveTheFloor() async throws {
        let cli = try CLI()
        let dataset = CLI.packageRoot.appendingPathComponent("evaluation/astrology").path
        let result = try await cli.run("eval", dataset, "--mode", "hybrid", "--fail-below", "ndcg@10=0.70", "--fail-below", "recall@10=0.90")
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("astrology (test): 54 queries, 27 documents"))
    }
}

@Suite struct PDFEndToEndTests {
    func fixtures(_ cli: CLI) async throws {
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("Tests/KBIngestTests/Fixtures/pdf"),
                                         to: cli.workdir.appendingPathComponent("books"))
    }

    @Test func ingestingBooksIndexesTheGoodOnesAndNamesEveryFailure() async throws {
        let cli = try CLI()
        try await fixtures(cli)
        let result = try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "books")
        #expect(result.status == 1)
        #expect(result.stdout.contains("9 added, 0 updated, 0 unchanged, 0 removed, 3 failed"))
        #expect(result.stderr.contains("books/encrypted.pdf is encrypted. Pass its password with --password."))
        #expect(result.stderr.contains("books/truncated.pdf is damaged or truncated"))
        // The scans hold a drawing without words: OCR reads them and finds nothing.
        #expect(result.stderr.contains("books/scanned.pdf: no text found on any of its 1 pages, neither in a text layer nor by OCR (eng)"))
        #expect(result.stderr.contains("warning: books/partly-scanned.pdf: OCR found no text on page 2 (blank?)."))
        let sources = try await cli.run("sources", "--db", "kb.sqlite", "--json")
        #expect(!sources.stdout.contains("encrypted.pdf") && !sources.stdout.contains("/scanned.pdf\""))

        let unlocked = try await cli.run("ingest", "--db", "kb.sqlite", "--password", "secret", "books/encrypted.pdf")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")

        // Without OCR, scans are refused as before, saying how to read them.
        let never = try await cli.run("ingest", "--db", "other.sqlite", "--embedder", "hashing", "--ocr", "never", "books/scanned.pdf", "books/partly-scanned.pdf")
        #expect(never.status == 1)
        #expect(never.stderr.contains("books/scanned.pdf: no text layer on 1 of 1 pages (scanned? OCR is off (--ocr never); run with --ocr auto to read the pages)."))
        #expect(never.stderr.contains("warning: books/partly-scanned.pdf: no text on 1 of 3 pages (2); images only? OCR is off (--ocr never)."))
    }

    @Test func searchCitesThePrintedPageLabel() async throws {
        let cli = try CLI()
        try await fixtures(cli)
        _ = try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "books/book.pdf")
        let human = try await cli.run("search", "--db", "kb.sqlite", "--mode", "keyword", "zebra quartz")
        #expect(human.stdout.contains("books/book.pdf › 1 Chapter One › 1.2 The Known Page, p. 2"))
        let json = try await cli.run("search", "--db", "kb.sqlite", "--json", "--kind", "pdf", "zebra quartz")
        let hit = try #require(((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["hits"] as? [[String: Any]])?.first)
        let pages = try #require((hit["snippet"] as? [String: Any])?["pages"] as? [String: Any])
        #expect(pages["start"] as? Int == 4 && pages["startLabel"] as? String == "2")
    }

    @Test func sourcesAreReadGreppedAndSyncedFromTheCommandLine() async throws {
        let cli = try CLI()
        try await fixtures(cli)
        _ = try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "books/book.pdf")
        let page = try await cli.run("sources", "read", "--db", "kb.sqlite", "books/book.pdf", "--labels", "2")
        #expect(page.status == 0 && page.stdout.hasPrefix("The Fixture Book, p. 2 — 1 Chapter One › 1.2 The Known Page"), "\(page.stderr)")
        #expect(page.stdout.contains("The zebra quartz phrase lives on the fourth physical page"))
        let grep = try await cli.run("sources", "grep", "--db", "kb.sqlite", "-i", "ZEBRA quartz")
        #expect(grep.stdout.contains("The Fixture Book, p. 2 — 1 Chapter One › 1.2 The Known Page") && grep.stdout.contains("1 match in 1 source"))
        let refused = try await cli.run("sources", "grep", "--db", "kb.sqlite", "(a)\\1")
        #expect(refused.status == 64 && refused.stderr.contains("back-reference"))

        try cli.write("list.json", #"{"collection": "app", "items": [{"id": "n1", "sha256": "\#(String(repeating: "0", count: 64))"}]}"#)
        let sync = try await cli.run("sources", "sync", "--db", "kb.sqlite", "list.json")
        #expect(sync.status == 0 && sync.stdout.contains("upload   n1 (new)") && sync.stdout.contains("app: 1 to upload, 0 unchanged"), "\(sync.stderr)")
        let missing = try await cli.run("sources", "sync", "--db", "kb.sqlite", "missing.json")
        #expect(missing.status != 0 && missing.stderr.contains("Cannot read missing.json"))
    }

    @Test func inspectShowsPagesWithoutWritingAnything() async throws {
        let cli = try CLI()
        try await fixtures(cli)
        let result = try await cli.run("inspect", "books/book.pdf")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("The Fixture Book  (pdf,"))
        #expect(result.stdout.contains("— p. 2"))
    }
}

/// The models scripts/install-model.sh installed on this machine.
enum InstalledModels {
    /// kb's real data folder's parent, where scripts/install-model.sh puts the models.
    static let dataHome = ProcessInfo.processInfo.environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
        ?? (ProcessInfo.processInfo.environment["HOME"] ?? "/root") + "/.local/share"
    static var multilingual: Bool {
        FileManager.default.fileExists(atPath: dataHome + "/kb/models/" + Locations.multilingualModelName + "/config.json")
    }
}

/// A new index with no model or language flag, as a user gets it: multilingual-e5-small and each
/// word by its script's rules. Notes in Arabic, Ukrainian and English are found by a question in
/// their own language and by one in English.
@Suite(.enabled(if: InstalledModels.multilingual || ProcessInfo.processInfo.environment["CI"] == "true",
                "multilingual-e5-small is not installed (scripts/install-model.sh multilingual-e5-small)"))
struct MultilingualDefaultTests {
    /// No model named anywhere: the default, found where the install script put it.
    static let defaults = ["KB_MODEL_DIR": "", "XDG_DATA_HOME": InstalledModels.dataHome]

    static let prepared = Task {
        let cli = try CLI()
        try cli.write("notes/nile.md", """
            # النيل

            نهر النيل أطول أنهار أفريقيا، ينبع من البحيرات الاستوائية ويصب في البحر الأبيض المتوسط، وعلى ضفافه قامت حضارة مصر القديمة.
            """)
        try cli.write("notes/kyiv.md", """
            # Київ

            Київ — столиця України, розташована на берегах Дніпра. Місто відоме Києво-Печерською лаврою та золотими банями соборів.
            """)
        try cli.write("notes/volcano.md", """
            # Volcanoes

            A volcano erupts when molten rock, ash and gases escape from a magma chamber beneath the crust of the Earth.
            """)
        try cli.write("notes/bread.md", """
            # Bread

            Sourdough bread rises slowly with wild yeast; the dough is folded, rested overnight and baked in a hot oven.
            """)
        let ingest = try await cli.run(["ingest", "--db", "kb.sqlite", "notes"], environment: defaults)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        return cli
    }

    @Test func aNewIndexIsMultilingualAndSaysSo() async throws {
        let cli = try await Self.prepared.value
        let status = try #require(try await cli.run(["status", "--db", "kb.sqlite", "--json"], environment: Self.defaults).json as? [String: Any])
        #expect((status["embedder"] as? [String: Any])?["name"] as? String == Locations.multilingualModelName)
        // Both engines analyse a new index's keywords by each word's script (PostgreSQL: KB_TEXT_SEARCH=auto).
        #expect(status["keywordLanguage"] as? String == "auto")
        let languages = try #require(status["languages"] as? [String: Int])
        #expect(languages["ar"] == 1 && languages["uk"] == 1 && languages["en"] == 2)
        #expect(status["languageWarning"] == nil)
    }

    @Test(arguments: [
        ("ما هو أطول نهر في أفريقيا؟", "nile.md"),
        ("Which is the longest river in Africa?", "nile.md"),
        ("Яке місто є столицею України?", "kyiv.md"),
        ("What is the capital city of Ukraine?", "kyiv.md"),
        ("Why does a volcano erupt?", "volcano.md"),
        ("Чому вивергається вулкан?", "volcano.md"),
    ])
    func eachNoteIsFoundInItsLanguageAndInEnglish(question: String, expected: String) async throws {
        let cli = try await Self.prepared.value
        let result = try await cli.run(["search", "--db", "kb.sqlite", "--json", "-k", "2", question], environment: Self.defaults)
        #expect(result.status == 0, "\(result.stderr)")
        let hits = try #require((result.json as? [String: Any])?["hits"] as? [[String: Any]])
        let first = hits.first?["sourcePath"] as? String
        #expect(first?.hasSuffix(expected) == true, "\(question): first hit \(first ?? "none")")
    }
}

import Foundation
import KBCore
import KBIngest
import KBPostgres
import KBRequests
import KBRetrieval
import KBSQLite
import KBStore
import KBTestSupport
import Testing
@testable import KBKit
import KBLanguageModel

/// Every Swift example in KBKit's, KBRetrieval's and KBLanguageModel's documentation — doc comments and the DocC
/// articles — in README and in the manual (`docs/*.md`) runs, line for line, in the tests or in
/// `Examples/embed-kb` (built and run by scripts/test.sh), and a test checks that no example is
/// left out: an example that stops compiling fails the build, one that stops working fails its
/// test, and one written without a test fails `everyExampleInTheDocumentationIsATest`.
@Suite struct DocumentationExampleTests {
    /// A knowledge base with the notes of a workspace ingested with the hashing embedder.
    func knowledgeBase(_ ws: Workspace) async throws -> KnowledgeBase {
        try ws.write("venus.md", "---\ntags: [area:career]\n---\n# Venus in the tenth house\nVenus in the tenth house favours careers in art and diplomacy.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty)
        return kb
    }

    @Test func theKnowledgeBaseOverview() async throws {
        let ws = try Workspace()
        try ws.write("venus.md", "# Venus in the tenth house\nVenus in the tenth house favours careers in art.")
        let (path, notes) = (ws.dbPath, ws.notes.path)
        let kb = try KnowledgeBase.open(at: path)
        let (embedder, record) = try await kb.embedder(nil)
        let report = try await kb.ingest([notes], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        let results = try await kb.search(SearchQuery("venus in the tenth house"), as: .admin)
        #expect(report.added == 1 && results.hits.first?.sourceTitle == "Venus in the tenth house")
    }

    @Test func aPostgreSQLIndexOnceItsEngineIsRegistered() throws {
        KnowledgeBase.register(PostgresEngine())
        let kb = try KnowledgeBase.open(at: "postgres://kb@db.internal:5432/kb")
        // The store is made at once; it connects at its first transaction.
        #expect(kb.path == "postgres://kb@db.internal:5432/kb" && !(kb.store is SQLiteStore))
        #expect(KnowledgeBase.registeredSchemes == ["postgres", "postgresql"])
        // A scheme no engine opens is an error naming those that are, without the password.
        let error = #expect(throws: KBError.self) { try KnowledgeBase.open(at: "mysql://kb:secret@db/kb") }
        #expect(error?.code == .unsupportedMode && error?.message.contains("postgres://") == true)
        #expect(error?.message.contains("secret") == false && error?.message.contains("mysql://kb@db/kb") == true)
        // A file path is SQLite's, whatever is registered.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("kb-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try KnowledgeBase.open(at: file).store is SQLiteStore)
    }

    @Test func cachingEmbedder() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let (chosen, record) = try await kb.embedder(nil)
        let (embedder, store, texts) = (try #require(chosen), kb.store, ["alpha", "beta"])
        let vectors = try await CachingEmbedder(embedder, record: record, store: store).embed(texts)
        #expect(vectors.count == 2 && vectors.allSatisfy { $0.count == record.dimension })
    }

    @Test func aRetrieverAndAStage() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let (store, embeddings) = (kb.store, kb.embedders)
        let retriever = Retriever(store: store, encoding: embeddings)
        let results = try await retriever.search(SearchQuery("saturn return"))
        #expect(results.query == "saturn return")

        struct Reversed: RetrievalStage {
            let name = "reversed"
            func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] {
                candidates.reversed()
            }
        }
        kb.useRetrievalStage(Reversed())
        #expect(kb.retriever.stage.name == "reversed")
    }

    @Test func checkedRequests() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let checked = try SearchRequest(query: "saturn return").checked(kb.limits)
        let results = try await kb.search(checked, as: .admin)
        #expect(results.query == "saturn return")
        #expect(throws: KBError.self) { try SearchRequest(query: "").checked(kb.limits) }
    }

    @Test func limits() throws {
        let ws = try Workspace()
        let path = ws.dbPath
        var limits = Limits()
        limits.maxResults = 50
        let kb = try KnowledgeBase.open(at: path, limits: limits)
        #expect(kb.limits.maxResults == 50)
    }

    @Test func searchRequest() async throws {
        let kb = try await knowledgeBase(try Workspace())
        var request = SearchRequest(query: "saturn return")
        request.k = 3
        let results = try await kb.search(request, as: .admin)
        #expect(results.hits.count <= 3)
    }

    @Test func botAndContextRequests() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        do {
            var request = BotRequest(name: "astro")
            request.sources = ["tag:area:career", "/home/ada/notes"]
            let bot = try await kb.createBot(request, as: .admin)
            #expect(bot.sources.count == 2)
        }
        do {
            var request = ContextRequest(bot: "astro", query: "what does Venus in my tenth house mean?")
            request.user = "ada"
            let context = try await kb.context(request, as: .admin)
            #expect(context.citations.first?.title == "Venus in the tenth house")
        }
    }

    @Test func memoryExtraction() async throws {
        let kb = try await knowledgeBase(try Workspace())
        var request = MemoryExtractRequest(user: "ada", turns: [ConversationTurn(.user, "I'm allergic to peanuts, by the way.")])
        request.apply = true
        let extraction = try await kb.extractMemories(request, as: .admin)
        #expect(extraction.proposals.map(\.content) == ["Allergic to peanuts."] && extraction.proposals[0].memory != nil)
        do {
            _ = try await kb.createBot(BotRequest(name: "astro"), as: .admin)
            var request = TokenRequest(name: "ada-app")
            request.scopes = ["user:ada"]
            request.bots = ["astro"]
            let created = try await kb.createToken(request, as: .admin)   // created.token is shown once
            #expect(created.info.scopes == ["user:ada"])
        }
        do {
            let log = RequestLog(kb: kb)
            let running = Task { await log.run() }   // cancel it to stop; it flushes once more
            running.cancel()
            await running.value
        }
        let erased = try await kb.erase(EraseRequest(scope: "user:ada"), as: .admin)
        #expect(erased.memories == 1)
        let model = try ChatModel(spec: "openai:llama3.1", url: "http://127.0.0.1:11434/v1", environment: [:])
        #expect(model.name == "openai:llama3.1" && model.apiKey == nil)
    }

    @Test func memoryRequests() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let stored: Memory
        do {
            var request = RememberRequest(content: "Ada is allergic to peanuts.")
            request.scope = "user:ada"
            let result = try await kb.remember(request, as: .admin)
            stored = result.memory
        }
        do {
            var request = RecallRequest(query: "diet")
            request.scopes = ["user:ada"]
            let results = try await kb.recall(request, as: .admin)
            #expect(results.hits.allSatisfy { $0.memory.scope.name == "user:ada" })
        }
        do {
            var request = MemoryChangeRequest(id: stored.id)
            request.content = "Ada is allergic to peanuts and tree nuts."
            let memory = try await kb.changeMemory(request, as: .admin)
            #expect(memory.version == 2)
        }
        let draft = MemoryDraft("Prefers metric units", scope: try .user("ada"), tags: ["preference"])
        let result = try await kb.remember(MemoryDraft("Allergic to peanuts", scope: try .user("ada")), as: .admin)
        #expect(try await kb.remember(draft, as: .admin).created && result.created)
        do {
            let result = try await kb.memoryFeedback(MemoryFeedbackRequest(id: stored.id, feedback: "outdated"), as: .admin)
            #expect(!result.memory.isCurrent && result.feedback.caller == "admin")
        }
        do {
            var request = MemoryConsolidateRequest(scope: "user:ada")
            request.apply = true
            let report = try await kb.consolidateMemories(request, as: .admin)
            #expect(report.applied && report.examined == 2)
        }
    }

    @Test func sourcesAndTheJobRunner() async throws {
        let kb = try await knowledgeBase(try Workspace())
        var request = SourceRequest(text: "# Lease\nThe rent is due on the first of the month.")
        request.id = "ada-lease"
        request.user = "ada"
        let added = try await kb.addSource(request, as: .admin)
        #expect(added.job.state == .done)
        let runner = kb.startJobRunner()
        // … serve requests; uploads are read as they come …
        await runner.stop()
    }

    @Test func requestsAsJSON() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let body = Data(#"{"query": "venus"}"#.utf8)
        let request = try KBJSON.decode(SearchRequest.self, from: body)
        let data = try KBJSON.encode(try await kb.search(request, as: .admin))
        #expect(!data.isEmpty)
    }

    @Test func requestFields() {
        let limits = Limits()
        let field = RequestField.integer("k", "How many hits to return.", default: 8, range: 1...limits.maxResults)
        #expect(field.name == "k")
    }

    @Test func reindexing() async throws {
        let ws = try Workspace()
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        try ws.write("a.md", "alpha")
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        let report = try await kb.reindex(to: .hashing, as: .admin)
        // or an endpoint: .openAI(model: "nomic-embed-text", url: "http://127.0.0.1:11434/v1")
        #expect(report.switched)
    }

    @Test func localEmbeddings() async throws {
        let (vectors, tokens) = try await LocalEmbeddings.shared.embed(["a question"])
        #expect(vectors.count == 1 && tokens > 0)
    }

    // MARK: - Every example is here

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The manual's pages: `docs/*.md`.
    static func manualPages() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: root.appendingPathComponent("docs"), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
    }

    /// The Swift examples (```swift blocks) of KBKit's, KBRetrieval's and KBLanguageModel's doc comments, KBKit's
    /// DocC articles, README and the manual's pages.
    static func documentedExamples() throws -> [(place: String, lines: [String])] {
        var examples: [(String, [String])] = []
        let sources = ["Sources/KBKit", "Sources/KBRetrieval", "Sources/KBLanguageModel"].flatMap { folder in
            FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL } ?? []
        }
        let files = sources.sorted { $0.path < $1.path } + [root.appendingPathComponent("README.md")] + (try manualPages())
        for file in files where ["swift", "md"].contains(file.pathExtension) {
            let isArticle = file.pathExtension == "md"
            var block: [String]?
            for (number, line) in try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n").enumerated() {
                var text = line.trimmingCharacters(in: .whitespaces)
                if !isArticle {
                    guard text.hasPrefix("///") else { block = nil; continue }
                    text = String(text.dropFirst(3)).trimmingCharacters(in: .whitespaces)
                }
                if text.hasPrefix("```") {
                    if let lines = block {
                        examples.append(("\(file.lastPathComponent):\(number + 1)", lines))
                        block = nil
                    } else if text == "```swift" {
                        block = []
                    }
                } else if block != nil, !text.isEmpty {
                    block!.append(text)
                }
            }
        }
        return examples
    }

    /// README is the way in: every page of the manual is linked from it, and every link of
    /// README and the manual to a file of the repository finds one.
    @Test func everyPageOfTheManualIsReachableFromREADMEAndEveryLinkFindsItsFile() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let pages = try Self.manualPages()
        #expect(pages.count >= 10)
        for page in pages { #expect(readme.contains("(docs/\(page.lastPathComponent))"), "README does not link \(page.lastPathComponent)") }
        #expect(readme.components(separatedBy: "\n").count <= 200, "README is over 200 lines")
        for file in [Self.root.appendingPathComponent("README.md")] + pages {
            let text = try String(contentsOf: file, encoding: .utf8)
            let links = text.matches(of: /\]\(([^)#:]+\.md)(#[^)]*)?\)/).map { String($0.output.1) }
            for link in links {
                let target = file.deletingLastPathComponent().appendingPathComponent(link).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: target.path), "\(file.lastPathComponent) links \(link), which is not there")
            }
        }
    }

    /// Every script README and the manual tell people to run works as written: one named on its
    /// own (`scripts/eval/eval.sh`, not `python3 scripts/…`) starts with `#!` and is executable in
    /// the repository (a clone keeps the mode), and every script with `#!` is executable.
    @Test func everyScriptTheManualNamesRunsAsWritten() throws {
        var named = Set<String>()
        for file in [Self.root.appendingPathComponent("README.md")] + (try Self.manualPages()) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /(python3 |bash |sh )?(scripts\/[A-Za-z0-9_.\/-]+\.(sh|py))/) where match.output.1 == nil {
                named.insert(String(match.output.2))
            }
        }
        #expect(named.count >= 20)
        // Setup and test at the top of scripts/, benchmarks, evaluations, fixture makers and studies in folders.
        let folder = Self.root.appendingPathComponent("scripts")
        let all = (FileManager.default.subpaths(atPath: folder.path) ?? []).filter { !$0.hasPrefix("openapi-generator") }.map { "scripts/" + $0 }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count <= 25, "scripts/ holds more than 25 entries at its top")
        for script in named.union(all) where script.hasSuffix(".sh") || script.hasSuffix(".py") {
            let path = Self.root.appendingPathComponent(script).path
            guard FileManager.default.fileExists(atPath: path) else {
                Issue.record("\(script) is named by the manual and is not there")
                continue
            }
            let hasShebang = try String(contentsOfFile: path, encoding: .utf8).hasPrefix("#!")
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            if named.contains(script) { #expect(hasShebang, "\(script) is named as a command and has no #! line") }
            if hasShebang { #expect(mode & 0o100 != 0, "\(script) is not executable (git update-index --chmod=+x \(script))") }
        }
    }

    @Test func sourcesForAppsAndAgents() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        let notes = ws.notes.path
        let (embedder, record) = try await kb.embedder(nil)
        do {
            var sync = SourceSyncRequest(collection: "handbook", items: [
                SourceSyncItem(id: "onboarding", sha256: String(repeating: "0", count: 64), title: "Onboarding"),
            ])
            sync.prune = true
            let answer = try await kb.syncSources(sync, as: .admin)
            #expect(answer.upload.map(\.id) == ["onboarding"])
        }
        let missing = await #expect(throws: KBError.self) {
            var read = SourceReadRequest(source: "file:0123456789abcdef")
            read.pages = "212-213"
            let part = try await kb.readSource(read, as: .admin)
            _ = part
        }
        #expect(missing?.code == .notFound)
        do {
            var grep = SourceGrepRequest(pattern: "rent is due")
            grep.literal = true
            let found = try await kb.grepSources(grep, as: .admin)
            #expect(found.matches.isEmpty)
        }
        do {
            let watcher = try kb.watch(WatchSettings(folders: [notes]), embedder: embedder, record: record, as: .admin) { report in
                print(report.cause, report.read)
            }
            await watcher.stop()
        }
    }

    @Test func everyExampleInTheDocumentationIsATest() throws {
        let examples = try Self.documentedExamples()
        #expect(examples.count >= 15)
        // The tests, and the apps in Examples/embed-kb and Examples/kb-client, which scripts/test.sh builds and runs.
        let testFiles = FileManager.default.enumerator(at: Self.root.appendingPathComponent("Tests"), includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        let files = testFiles + ["embed-kb", "kb-client"].flatMap { app in
            [Self.root.appendingPathComponent("Examples/\(app)/Sources/\(app)/main.swift"), Self.root.appendingPathComponent("Examples/\(app)/Package.swift")]
        }
        let tests = try files.flatMap { try String(contentsOf: $0, encoding: .utf8).components(separatedBy: "\n") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        for (place, lines) in examples {
            let found = lines.isEmpty || tests.indices.contains { start in
                start + lines.count <= tests.count && Array(tests[start..<start + lines.count]) == lines
            }
            #expect(found, "the example at \(place) is not a test in DocumentationExampleTests:\n\(lines.joined(separator: "\n"))")
        }
    }
}

import Foundation
import KBCore
import KBIngest
@testable import KBKit
import KBRequests
import KBRetrieval
import KBStubServers
import KBTestSupport
import Testing
import KBLanguageModel

@Suite(.serialized) struct RewriterTests {
    /// Notes on three planets; the history never names the one the follow-up is about.
    static func knowledgeBase() async throws -> KnowledgeBase {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-rewrite-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        for (name, text) in [
            ("saturn.md", "# Saturn\n\nThe Saturn return arrives every twenty-nine years and tests what was built."),
            ("venus.md", "# Venus\n\nVenus rules love, beauty and the pleasures of the table."),
            ("mars.md", "# Mars\n\nMars rules drive, courage and quarrels."),
        ] {
            try text.write(to: notes.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root))
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        return kb
    }

    static func followUp() -> SearchQuery {
        var query = SearchQuery("and when does that happen again?")
        query.mode = .keyword
        query.limit = 3
        query.history = [ConversationTurn(.user, "People say life changes near thirty."),
                         ConversationTurn(.assistant, "Many traditions mark a turning point then.")]
        return query
    }

    static func model(_ server: LiveServer) -> ChatModel {
        var model = ChatModel(model: "stub", baseURL: server.url)
        model.timeout = 30
        return model
    }

    @Test func aRewrittenFollowUpIsFusedWithTheOwnPlanBelowItsHeaviestQuery() async throws {
        let kb = try await Self.knowledgeBase()
        let script = RewriterScript([.content(#"{"standalone": "When does the Saturn return arrive?", "expansions": ["Saturn return age"]}"#)])
        let server = try await chatModelServer(script)
        defer { server.stop() }

        let plain = try await kb.search(Self.followUp(), as: .admin)
        #expect(plain.hits.first?.sourcePath.hasSuffix("saturn.md") != true)   // kb's own plan cannot know
        kb.useQueryRewriter(ChatRewriter(model: Self.model(server)))
        let rewritten = try await kb.search(Self.followUp(), as: .admin)
        #expect(rewritten.degraded == nil)
        let plan = try #require(rewritten.queries)
        let heaviest = plain.queries?.map(\.weight).max() ?? 1
        #expect(Array(plan.prefix(plain.queries?.count ?? 1)) == (plain.queries ?? []))
        #expect(plan.suffix(2).map(\.text) == ["When does the Saturn return arrive?", "Saturn return age"])
        #expect(plan.suffix(2).map(\.weight) == [0.75 * heaviest, 0.5 * heaviest])
        #expect(rewritten.hits.first?.sourcePath.hasSuffix("saturn.md") == true)
        // The model saw the conversation and the turn; the same conversation again is answered from memory.
        _ = try await kb.search(Self.followUp(), as: .admin)
        let prompts = await script.prompts
        #expect(prompts.count == 1)
        #expect(prompts[0].contains("life changes near thirty") && prompts[0].contains("and when does that happen again?"))
        // A turn without a history is not rewritten.
        var alone = Self.followUp()
        alone.history = []
        #expect(try await kb.search(alone, as: .admin).queries == nil)
        #expect(await script.prompts.count == 1)
    }

    /// A bot's context reports the queries its retrieval searched — the rewriter's among them —
    /// not a plan made again without them.
    @Test func aContextAnswerReportsTheQueriesItSearched() async throws {
        let kb = try await Self.knowledgeBase()
        let script = RewriterScript([.content(#"{"standalone": "When does the Saturn return arrive?", "expansions": ["Saturn return age"]}"#)])
        let server = try await chatModelServer(script)
        defer { server.stop() }
        var bot = BotRequest(name: "astro")
        bot.sources = ["kind:note"]
        _ = try await kb.createBot(bot, as: .admin)
        kb.useQueryRewriter(ChatRewriter(model: Self.model(server)))
        var request = ContextRequest(bot: "astro", query: Self.followUp().text)
        request.history = Self.followUp().history
        let answer = try await kb.context(request, as: .admin)
        let searched = try await kb.search({ var query = Self.followUp(); query.mode = .hybrid; return query }(), as: .admin).queries
        let reported = try #require(answer.retrieval?.queries)
        #expect(reported.suffix(2).map(\.text) == ["When does the Saturn return arrive?", "Saturn return age"])
        #expect(reported == searched)
    }

    @Test func aFailingOrBabblingModelLeavesTheOwnPlanAndSaysWhy() async throws {
        let kb = try await Self.knowledgeBase()
        let plain = try await kb.search(Self.followUp(), as: .admin)
        for (reply, words) in [(RewriterScript.Reply.status(500), "HTTP 500"), (.content("Sure! Here is a query."), "JSON object"),
                               (.content(#"{"expansions": ["x"]}"#), "standalone"),
                               (.content(#"{"standalone": "q", "expansions": "not a list"}"#), "expansions")] {
            let server = try await chatModelServer(RewriterScript([reply]))
            defer { server.stop() }
            kb.useQueryRewriter(ChatRewriter(model: Self.model(server)))
            let results = try await kb.search(Self.followUp(), as: .admin)
            #expect(results.hits.map(\.snippetID) == plain.hits.map(\.snippetID))
            #expect(results.queries == plain.queries)
            let reason = results.degraded?.reason ?? ""
            #expect(reason.contains("rewriter:openai:stub") && reason.contains(words), "\(reason)")
        }
        kb.useQueryRewriter(nil)
        #expect(try await kb.search(Self.followUp(), as: .admin).degraded == nil)
    }

    @Test func documentationExamples() async throws {
        let kb = try await Self.knowledgeBase()
        struct Standalone: QueryRewriter {
            let name = "standalone"
            func rewrite(_ turn: String, history: [ConversationTurn]) async throws -> [String] { ["When does Saturn return?"] }
        }
        kb.useQueryRewriter(Standalone())
        #expect(try await kb.search(Self.followUp(), as: .admin).queries?.last?.text == "When does Saturn return?")
        kb.useQueryRewriter(ChatRewriter(model: try ChatModel(spec: "openai:llama3.1", url: "http://127.0.0.1:11434/v1", environment: [:])))
        #expect(kb.retriever.rewriter?.name == "rewriter:openai:llama3.1")
    }

    @Test func theRewrittenQueriesAreCheckedAsData() {
        #expect(QueryRewrites.plan([PlannedQuery("turn", weight: 1), PlannedQuery("pairing", weight: 4)],
                                   adding: ["  Standalone?  ", "", "TURN", "a", "b", "c"]) ==
                [PlannedQuery("turn", weight: 1), PlannedQuery("pairing", weight: 4), PlannedQuery("Standalone?", weight: 3),
                 PlannedQuery("a", weight: 2), PlannedQuery("b", weight: 2)])
        #expect(QueryRewrites.plan([PlannedQuery("turn", weight: 1)], adding: [String(repeating: "x", count: 5000)])[1].text.count == 1000)
    }
}

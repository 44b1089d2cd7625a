import Foundation
import KBCore
import KBIngest
import KBRequests
import KBTestSupport
import NIOCore
import Testing
@testable import KBKit

/// Chat completion requests as kb reads them: the bot and upstream model, the turn and its
/// conversation, kb's fields, what goes upstream, and the markers of an answer. Runs on SQLite
/// and (scripts/test.sh) on PostgreSQL.
@Suite struct ChatTests {
    func request(_ json: String, limits: Limits = Limits()) throws -> ChatCompletionRequest {
        try ChatCompletionRequest(json: Data(json.utf8), limits: limits)
    }

    @Test func theModelNamesTheBotAndPerhapsTheUpstreamModel() throws {
        let plain = try request(#"{"model": "astro", "messages": [{"role": "user", "content": "Hi"}]}"#)
        #expect(plain.bot == "astro" && plain.upstreamModel == nil && !plain.stream)
        let named = try request(#"{"model": "astro/meta-llama/Llama-3.1", "stream": true, "messages": [{"role": "user", "content": "Hi"}]}"#)
        #expect(named.bot == "astro" && named.upstreamModel == "meta-llama/Llama-3.1" && named.stream)
        for bad in [#""model": "astro/""#, #""model": "no bot!""#, #""model": """#, #""model": 3"#] {
            #expect(throws: KBError.self) { try request("{\(bad), \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}") }
        }
    }

    @Test func theLastUserTurnIsTheQueryAndTheTurnsBeforeItTheHistory() throws {
        let chat = try request("""
            {"model": "astro", "user": "ada", "messages": [
              {"role": "system", "content": "Be brief."},
              {"role": "user", "content": "Tell me about Saturn."},
              {"role": "assistant", "content": "Structure and limits."},
              {"role": "tool", "content": "ignored", "tool_call_id": "x"},
              {"role": "user", "content": [{"type": "text", "text": "When does it"}, {"type": "image_url", "image_url": {"url": "data:,"}}, {"type": "text", "text": "come back?"}]}
            ], "kb": {"budget": 900, "tags": ["chart:ada"], "kinds": ["note"]}}
            """)
        let context = chat.contextRequest(limits: Limits())
        #expect(context.bot == "astro" && context.query == "When does it\ncome back?" && context.user == "ada")
        #expect(context.history == [ConversationTurn(.user, "Tell me about Saturn."), ConversationTurn(.assistant, "Structure and limits.")])
        #expect(context.budget == 900 && context.tags == ["chart:ada"] && context.kinds == ["note"])
        // kb.user wins over OpenAI's user.
        let other = try request(#"{"model": "astro", "user": "ada", "kb": {"user": "bob"}, "messages": [{"role": "user", "content": "Hi"}]}"#)
        #expect(other.user == "bob")
        // A report's context: its sections, no history.
        let report = try request(#"{"model": "astro", "kb": {"report": "natal"}, "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "Write it."}]}"#)
        #expect(report.contextRequest(limits: Limits()).report == "natal" && report.contextRequest(limits: Limits()).history == nil)
    }

    @Test func theUpstreamGetsTheClientsBodyWithKBsSystemMessageFirst() throws {
        let json = #"{"model": "astro/x", "temperature": 0.25, "max_tokens": 7, "stop": ["\n"], "tools": [{"type": "function", "function": {"name": "f"}}], "seed": 4, "kb": {"budget": 800}, "messages": [{"role": "system", "content": "Mine."}, {"role": "user", "content": "Hi"}]}"#
        let chat = try request(json)
        guard case .object(let sent) = chat.upstreamBody(model: "llama3.1", system: "SYSTEM") ,
              case .object(var original) = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) else {
            Issue.record("not objects"); return
        }
        #expect(sent["kb"] == nil && sent["model"] == "llama3.1")
        guard case .array(let messages)? = sent["messages"], case .array(let theirs)? = original["messages"] else { Issue.record("no messages"); return }
        #expect(messages.first == ["role": "system", "content": "SYSTEM"])
        #expect(Array(messages.dropFirst()) == theirs)
        for key in ["kb", "model", "messages"] { original[key] = nil }
        for (key, value) in original { #expect(sent[key] == value, "\(key)") }
    }

    @Test func badRequestsNameTheFieldAndTheLimit() throws {
        var limits = Limits()
        limits.maxChatMessages = 3
        limits.maxChatMessageCharacters = 10
        let cases: [(String, String)] = [
            (#"{"model": "astro", "messages": []}"#, "\"messages\" is missing or empty"),
            (#"{"model": "astro", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "user", "content": "c"}, {"role": "user", "content": "d"}]}"#, "at most 3"),
            (#"{"model": "astro", "messages": [{"role": "user", "content": "far too many characters"}]}"#, "at most 10 per message"),
            (#"{"model": "astro", "messages": [{"role": "wizard", "content": "a"}]}"#, "wizard"),
            (#"{"model": "astro", "messages": [{"role": "assistant", "content": "a"}]}"#, "no user message"),
            (#"{"model": "astro", "messages": [{"role": "user", "content": "a"}], "kb": {"colour": "red"}}"#, "Unknown field \"colour\""),
            (#"{"model": "astro", "messages": [{"role": "user", "content": "a"}], "kb": {"learn": "always"}}"#, "learn"),
            (#"{"model": "astro", "messages": [{"role": "user", "content": "a"}], "kb": {"budget": 1}}"#, "budget"),
            (#"{"model": "astro", "messages": [{"role": "user", "content": "a"}], "stream": "yes"}"#, "stream"),
            ("not json", "JSON object"),
        ]
        for (json, says) in cases {
            let error = #expect(throws: KBError.self) { try request(json, limits: limits) }
            #expect(error?.code == .invalidArgument || error?.code == .unprocessable, "\(json)")
            #expect(error?.message.contains(says) == true, "\(json): \(error?.message ?? "")")
        }
    }

    @Test func markersAreReadAndThoseWithoutACitationListed() {
        #expect(CitationMarkers.numbers(in: "A [1], B [2, 3] and C [1][4]; not [x], [] or [12345] or [1.5].") == [1, 2, 3, 4])
        let citations = [Citation(number: 1, kind: .note, title: "a", path: "/a"), Citation(number: 2, kind: .note, title: "b", path: "/b")]
        #expect(CitationMarkers.unmatched(in: "See [2] and [7], then [1] and [7] again.", citations: citations) == [7])
        #expect(CitationMarkers.unmatched(in: "No markers.", citations: citations).isEmpty)
    }

    @Test func aTurnHasTheBotsPromptThenItsContextAndLearnsWhenAsked() async throws {
        let ws = try Workspace()
        try ws.write("bread.md", "# Bread\n\nSourdough bread needs flour, water, salt and a slow proof of twelve hours.")
        try ws.write("venus.md", "# Venus\n\nVenus rules love, beauty and partnership.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        var bot = BotRequest(name: "baker")
        bot.systemPrompt = "You bake."
        bot.sources = [ws.notes.path]
        _ = try await kb.createBot(bot, as: .admin)

        var options = ChatOptions()
        options.user = "ada"
        options.learn = "apply"
        let json: JSONValue = ["model": "baker", "messages": [["role": "user", "content": "I'm allergic to peanuts. What does sourdough need?"]],
                               "kb": .object(try JSONDecoder().decode([String: JSONValue].self, from: KBJSON.encode(options)))]
        let body = try KBJSON.encode(json)
        let request = try ChatCompletionRequest(json: body, limits: kb.limits)
        let turn = try await kb.chatTurn(request, as: .admin)
        let upstream = request.upstreamBody(model: "llama3.1", system: turn.system)
        #expect(turn.system.hasPrefix("You bake.\n\n<context>"))
        #expect(turn.context.citations.first?.path.hasSuffix("bread.md") == true)
        guard case .object(let sent) = upstream, case .array(let messages)? = sent["messages"] else { Issue.record("no messages"); return }
        #expect(messages.count == 2)

        // Learning: the stated fact is stored for ada, and only when asked.
        let learned = try #require(try await kb.learn(from: request, model: nil, as: .admin))
        #expect(learned.applied && learned.proposals.contains { $0.action == .add && $0.content.contains("peanuts") })
        #expect(try await kb.memories(scopes: [try .user("ada")]).contains { $0.content.contains("peanuts") })
        var quiet = request
        quiet.options.learn = nil
        #expect(try await kb.learn(from: quiet, model: nil, as: .admin) == nil)

        // A token for another bot may not chat with this one.
        _ = try await kb.createBot(BotRequest(name: "astro"), as: .admin)
        var other = TokenRequest(name: "other")
        other.bots = ["astro"]
        let token = try await kb.createToken(other, as: .admin)
        let error = await #expect(throws: KBError.self) { try await kb.chatTurn(request, as: .token(token.info)) }
        #expect(error?.code == .forbidden)
        // Nor through a report's context, which names no bot (even with the right to reports).
        let reports = ["bread": try ReportTemplate(name: "bread", title: "Bread", sections: [.init(name: "bread", query: "sourdough", share: 1)])]
        var report = request
        report.options.report = "bread"
        #expect(try await kb.chatTurn(report, reports: reports, as: .admin).system.hasPrefix("You bake.\n\n<context>"))
        other.name = "reporter"
        other.allow = ["reports"]
        let reporter = try await kb.createToken(other, as: .admin)
        let refused = await #expect(throws: KBError.self) { try await kb.chatTurn(report, reports: reports, as: .token(reporter.info)) }
        #expect(refused?.code == .forbidden && refused?.message.contains("baker") == true, "\(String(describing: refused))")
    }
}

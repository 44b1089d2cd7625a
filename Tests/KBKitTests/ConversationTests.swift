import Foundation
import KBContext
import KBCore
import KBIngest
import KBRequests
import KBTestSupport
import KBRetrieval
import Testing
@testable import KBKit

/// Context for a conversation: follow-ups, subject changes, tag and kind filters, and report
/// fallbacks. Runs on SQLite and (scripts/test.sh) on PostgreSQL.
@Suite struct ConversationTests {
    func knowledgeBase(_ ws: Workspace, embedder choice: EmbedderChoice = .hashing) async throws -> KnowledgeBase {
        try ws.write("saturn.md", "# Saturn\n\nSaturn, the planet of structure, limits and duty, returns to its natal place every twenty-nine years.")
        try ws.write("jupiter.md", "# Jupiter\n\nJupiter comes back to its natal place every twelve years.")
        try ws.write("venus.md", "# Venus\n\nVenus rules love, beauty and partnership.")
        try ws.write("ada/sun.md", "---\ntags: [chart:ada, placement:sun-aries]\n---\n# Sun in Aries\n\nA Sun in Aries wants to lead and to start things.")
        try ws.write("ada/moon.md", "---\ntags: [chart:ada, placement:moon-leo]\n---\n# Moon in Leo\n\nA Moon in Leo needs to be seen and praised.")
        try ws.write("ada/mars.md", "---\ntags: [chart:ada, placement:mars-virgo]\n---\n# Mars in Virgo\n\nA Mars in Virgo works hard at details.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(choice)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        var bot = BotRequest(name: "astro")
        bot.sources = [ws.notes.path]
        _ = try await kb.createBot(bot, as: .admin)
        return kb
    }

    func context(_ kb: KnowledgeBase, _ turn: String, history: [ConversationTurn]? = nil,
                 change: (inout ContextRequest) -> Void = { _ in }) async throws -> ContextResponse {
        var request = ContextRequest(bot: "astro", query: turn)
        request.history = history
        request.budget = 4000
        change(&request)
        return try await kb.context(request, as: .admin)
    }

    /// Chat apps resend the same questions and the whole history every turn: each query text is
    /// embedded once (`KnowledgeBase.queryCacheCounts`), and the answer is the same.
    @Test func aQueryTextAskedAgainIsNotEmbeddedAgain() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        let first = try await context(kb, "What does Saturn stand for?")
        #expect(kb.queryCacheCounts.misses == 1 && kb.queryCacheCounts.hits == 0)
        let again = try await context(kb, "What does Saturn stand for?")
        #expect(kb.queryCacheCounts.misses == 1 && kb.queryCacheCounts.hits == 1)
        #expect(again.citations.map(\.title) == first.citations.map(\.title))

        // A follow-up plans several queries; sent again with the same history, none is embedded again.
        let earlier = [ConversationTurn(.user, "What does Saturn stand for?"), ConversationTurn(.assistant, "Structure and limits.")]
        let before = kb.queryCacheCounts
        let followUp = try await context(kb, "And when does it come back to its natal place?", history: earlier)
        let planned = try #require(followUp.retrieval?.queries.count)
        let middle = kb.queryCacheCounts
        #expect(middle.misses + middle.hits == before.misses + before.hits + planned && middle.misses > before.misses)
        let resent = try await context(kb, "And when does it come back to its natal place?", history: earlier)
        #expect(kb.queryCacheCounts.misses == middle.misses && kb.queryCacheCounts.hits == middle.hits + planned)
        #expect(resent.citations.map(\.title) == followUp.citations.map(\.title))

        // Turned off (as kb eval does), every query is embedded and nothing is kept.
        kb.cachesQueryVectors = false
        let off = kb.queryCacheCounts
        _ = try await context(kb, "What does Saturn stand for?")
        #expect(kb.queryCacheCounts == off)
        kb.cachesQueryVectors = true

        // KB_QUERY_CACHE_MB=0 turns it off: every query is embedded.
        let uncached = try KnowledgeBase.open(at: ws.dbPath, environment: ["KB_QUERY_CACHE_MB": "0"])
        _ = try await context(uncached, "What does Saturn stand for?")
        _ = try await context(uncached, "What does Saturn stand for?")
        #expect(uncached.queryCacheCounts.hits == 0 && uncached.queryCacheCounts.misses == 2)

        // A value it does not take is an error naming it, and opening makes no index.
        let elsewhere = ws.root.appendingPathComponent("not-made.sqlite").path
        for wrong in ["64MB", "-1"] {
            let error = #expect(throws: KBError.self) { try KnowledgeBase.open(at: elsewhere, environment: ["KB_QUERY_CACHE_MB": wrong]) }
            #expect(error?.message.contains("KB_QUERY_CACHE_MB is '\(wrong)'") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: elsewhere))
    }

    @Test func aFollowUpFindsWhatItRefersToAndAChangeOfSubjectIsNotDraggedBack() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let earlier = [ConversationTurn(.user, "What does Saturn stand for?"), ConversationTurn(.assistant, "Structure and limits.")]
        let followUp = "And when does it come back to its natal place?"

        let alone = try await context(kb, followUp)
        #expect(alone.citations.first?.title == "Jupiter")   // the turn's own words point elsewhere
        #expect(alone.retrieval == nil)
        let withHistory = try await context(kb, followUp, history: earlier)
        #expect(withHistory.citations.first?.title == "Saturn")
        #expect(withHistory.retrieval?.queries.map(\.weight) == [1, ConversationPlan.pointing])
        #expect(withHistory.retrieval?.queries.last?.text.hasPrefix("What does Saturn stand for?\nStructure and limits.") == true)

        let change = try await context(kb, "What does Venus say about love and partnership?", history: earlier)
        #expect(change.citations.first?.title == "Venus")
        #expect(change.retrieval?.queries.map(\.weight) == [1, ConversationPlan.standing])
    }

    @Test func aHistoryIsCheckedAgainstItsLimits() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let tooMany = Array(repeating: ConversationTurn(.user, "hello"), count: kb.limits.maxHistoryTurns + 1)
        await #expect(throws: KBError.self) { try await context(kb, "and then?", history: tooMany) }
        let tooLong = [ConversationTurn(.user, String(repeating: "a", count: kb.limits.maxTurnCharacters + 1))]
        await #expect(throws: KBError.self) { try await context(kb, "and then?", history: tooLong) }
        await #expect(throws: KBError.self) { try await context(kb, "and then?", history: [ConversationTurn(.user, "  ")]) }
        var report = ContextRequest(report: "career")
        report.history = [ConversationTurn(.user, "hello")]
        await #expect(throws: KBError.self) { try await kb.context(report, as: .admin) }
        // Strict decoding: a turn takes a role of user or assistant and a content, nothing else.
        for turn: JSONValue in [["role": "system", "content": "x"], ["role": "user", "content": "x", "name": "bob"], "hello"] {
            #expect(throws: KBError.self) { try KBJSON.decode(ContextRequest.self, from: ["bot": "astro", "query": "q", "history": [turn]]) }
        }
        #expect(try KBJSON.decode(ContextRequest.self, from: ["bot": "astro", "query": "q", "history": [["role": "user", "content": "x"]]])
            .history == [ConversationTurn(.user, "x")])
    }

    @Test func contextCanBeNarrowedToAnyOfSeveralTagsAndToKinds() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let placements = try await context(kb, "what does this placement mean") {
            $0.tags = ["chart:ada"]
            $0.anyTags = ["placement:sun-aries", "placement:moon-leo"]
        }
        #expect(Set(placements.citations.map(\.title)) == ["Sun in Aries", "Moon in Leo"])
        let books = try await context(kb, "what does this placement mean") { $0.kinds = ["pdf"] }
        #expect(books.citations.isEmpty)
        var search = SearchRequest(query: "placement")
        search.anyTags = ["placement:mars-virgo", "placement:moon-leo"]
        search.mode = "vector"
        #expect(Set(try await kb.search(search, as: .admin).hits.map(\.sourceTitle)) == ["Mars in Virgo", "Moon in Leo"])
    }

    static let template = try! ReportTemplate.parse("""
        title: Chart
        sections:
          - name: Placements
            query: what the placements of the chart mean
            anyTags: [placement:sun-aries, placement:moon-leo]
            snippets: 4
            share: 0.5
          - name: Houses
            query: the twelfth house and its hidden enemies
            tags: [area:twelfth-house]
            share: 0.5
            fallback:
              - title: The twelfth house
                text: The twelfth house is the house of what is hidden, of retreat and of institutions.
              - title: Reading houses
                text: Read a house by its sign, its ruler and the planets in it.
        """, name: "chart")

    @Test func aSectionThatFindsNothingIsFilledWithItsFallbackMarkedAsSuch() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let response = try await kb.context(ContextRequest(report: "chart"), reports: ["chart": Self.template], as: .admin)
        let placements = response.items.filter { $0.section == "Placements" }
        #expect(Set(placements.map(\.item.sourceTitle)) == ["Sun in Aries", "Moon in Leo"])
        #expect(placements.allSatisfy { $0.item.fallback == nil })
        let houses = response.citations.filter { $0.section == "Houses" }
        #expect(houses.map(\.title) == ["The twelfth house", "Reading houses"])
        #expect(houses.allSatisfy { $0.fallback == true && $0.path.hasPrefix("report:chart#Houses.") })
        #expect(response.context.contains("what is hidden, of retreat"))
    }

    @Test func aReportNeverComesBackEmptyWhenTheEmbedderIsDown() async throws {
        let ws = try Workspace()
        _ = try await knowledgeBase(ws, embedder: .local)
        let modelDir = ws.root.appendingPathComponent("models/all-MiniLM-L6-v2")   // the model, known by its folder's name, is not there
        try FileManager.default.createDirectory(at: modelDir, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["KB_MODEL_DIR"] = modelDir.path
        let kb = try KnowledgeBase.open(at: ws.dbPath, create: false, environment: environment)
        let response = try await kb.context(ContextRequest(report: "chart"), reports: ["chart": Self.template], as: .admin)
        #expect(response.degraded != nil)
        #expect(response.citations.contains { $0.fallback == true })
        #expect(!response.citations.isEmpty)
    }

    @Test func reportTemplatesRefuseBadFallbacksAndKinds() {
        #expect(throws: KBError.self) {
            try ReportTemplate.parse("sections:\n  - name: A\n    query: q\n    share: 1\n    fallback: [{title: '', text: x}]\n", name: "bad")
        }
        #expect(throws: KBError.self) {
            try ReportTemplate.parse("sections:\n  - name: A\n    query: q\n    share: 1\n    fallback: not a list\n", name: "bad")
        }
        #expect(throws: KBError.self) { try ReportTemplate.parse("sections:\n  - name: A\n    query: q\n    share: 1\n    kinds: [memory]\n", name: "bad") }
    }
}

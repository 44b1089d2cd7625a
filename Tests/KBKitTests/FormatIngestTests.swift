import Foundation
import KBCore
import KBIngest
import KBRequests
import KBTestSupport
import Testing
@testable import KBKit

/// EPUB, HTML, DOCX and record files through ingest, search, bots and context. Runs on SQLite
/// and (scripts/test.sh) on PostgreSQL.
@Suite struct FormatIngestTests {
    func writeBooks(_ ws: Workspace) throws {
        try FormatFixtures.englishEPUB2().write(to: URL(fileURLWithPath: ws.path("books/returns.epub")), options: [])
        try FormatFixtures.docx().write(to: URL(fileURLWithPath: ws.path("docs/lease.docx")), options: [])
        try ws.write("site/page.html", "<html><head><title>Houses</title></head><body><nav>Menu</nav><main><h1>Houses</h1><p>The tenth house is the career.</p></main></body></html>")
    }

    @Test func aPhraseFromAnEPUBChapterIsCitedWithThatChapter() async throws {
        let ws = try Workspace()
        try FileManager.default.createDirectory(atPath: ws.path("books"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: ws.path("docs"), withIntermediateDirectories: true)
        try writeBooks(ws)
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty)
        #expect(report.added == 3)
        #expect(Set(try await kb.sources(as: .admin).map(\.kind)) == [.epub, .docx, .html])

        let hits = try await kb.search(.keyword("ringed planet comes home"), as: .admin).hits
        #expect(hits.first?.kind == .epub)
        #expect(hits.first?.snippet.headingPathString == "Chapter 3 › The Saturn return")

        var bot = BotRequest(name: "books")
        bot.sources = ["kind:epub"]
        _ = try await kb.createBot(bot, as: .admin)
        var request = ContextRequest(bot: "books", query: "when does the ringed planet come home")
        request.budget = 2000
        let context = try await kb.context(request, as: .admin)
        // The chapter's snippets join into one item located at the chapter; the title page stays apart.
        #expect(context.context.contains("ringed planet comes home"))
        let cited = try #require(context.citations.first { $0.headingPath.first == "Chapter 3" })
        #expect(cited.headingPath == ["Chapter 3"])
        #expect(context.context.contains(#"location="Chapter 3""#))
        #expect(context.citations.allSatisfy { $0.kind == .epub }, "kind:epub lets only the book through")

        // Unchanged files are left alone on a re-run.
        let again = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect((again.unchanged, again.added, again.updated) == (3, 0, 0))
    }

    @Test func aChatTranscriptIsAConversationWhoseTurnsAreFoundThroughTheirNeighbours() async throws {
        let ws = try Workspace()
        try ws.write("chats/monday.jsonl", """
            {"speaker": "Ada", "text": "What did you paint this week?", "time": "2026-05-08T13:56:00Z", "session": "Monday"}
            {"speaker": "Bo", "text": "A sunset over the lake, in oils.", "time": "2026-05-08T13:57:00Z"}
            {"speaker": "Ada", "text": "Lovely. My cat knocked the easel over.", "time": "2026-05-09T09:00:00Z"}
            {"speaker": "Bo", "text": "Is the cat all right?", "time": "2026-05-09T09:01:00Z"}
            """)
        try ws.write("chats/records.jsonl", #"{"name": "Saturn", "text": "A record, not a turn: it has no speaker."}"#)
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        let kinds = Dictionary(uniqueKeysWithValues: try await kb.sources(as: .admin).map { (URL(fileURLWithPath: $0.path).lastPathComponent, $0.kind) })
        #expect(kinds == ["monday.jsonl": .conversation, "records.jsonl": .record])

        // One snippet per turn, "Speaker: text", its speaker and day as tags, its session as heading.
        let sunset = try #require(try await kb.search(.keyword("sunset lake"), as: .admin).hits.first)
        #expect(sunset.snippet.text == "Bo: A sunset over the lake, in oils.")
        #expect(sunset.kind == .conversation && sunset.snippet.ordinal == 1)
        #expect(Set(sunset.snippet.tags).isSuperset(of: [Tag("speaker:bo"), Tag("date:2026-05-08")]))
        #expect(sunset.snippet.headingPath == ["2026-05-08"])

        // "paint" is only in Ada's question; Bo's answer after it is found through it, in every mode.
        for mode in SearchMode.allCases {
            var query = SearchQuery("what did Bo paint")
            query.mode = mode
            query.kinds = [.conversation]
            let texts = try await kb.search(query, as: .admin).hits.map(\.snippet.text)
            #expect(texts.prefix(2).contains("Bo: A sunset over the lake, in oils."), "\(mode): \(texts)")
        }
        // A filter keeps the turns it leaves out from joining.
        var bo = SearchQuery("what did you paint")
        bo.mode = .keyword
        bo.tags = [Tag("speaker:ada")]
        #expect(try await kb.search(bo, as: .admin).hits.allSatisfy { $0.snippet.text.hasPrefix("Ada:") })
    }

    @Test func aQuestionThatNamesADateLiftsTheTurnsSaidThen() async throws {
        let ws = try Workspace()
        try ws.write("chats/garden.jsonl", """
            {"speaker": "Cy", "text": "We planted tulips in the garden.", "time": "2026-03-15T10:00:00Z"}
            {"speaker": "Cy", "text": "We planted roses in the garden.", "time": "2026-04-20T10:00:00Z"}
            """)
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        // (A month by name: the turns' headings hold their days as digits, which keywords match.)
        for (month, said) in [("March", "Cy: We planted tulips in the garden."), ("April", "Cy: We planted roses in the garden.")] {
            var query = SearchQuery("what did we plant in the garden in \(month)")
            query.mode = .keyword
            let hits = try await kb.search(query, as: .admin).hits
            #expect(hits.first?.snippet.text == said, "\(month): \(hits.map { ($0.snippet.text, $0.score) })")
        }
    }

    @Test func aRecordOfWeightTwoOutranksAnOtherwiseIdenticalOneInEveryMode() async throws {
        let ws = try Workspace()
        try ws.write("rules/aspects.jsonl", """
            {"id": "light", "planet": "Saturn", "text": "Saturn square the Sun tests ambition and patience.", "weight": 1}
            {"id": "heavy", "planet": "Saturn", "text": "Saturn square the Sun tests ambition and patience!", "weight": 2}
            {"id": "other", "planet": "Venus", "text": "Venus trine the Moon brings ease in love."}
            """)
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        var options = IngestOptions()
        options.records = RecordMapping(tags: ["planet"], weight: "weight", id: "id")
        #expect(try await kb.ingest([ws.notes.path], options: options, embedder: embedder, record: record, as: .admin).failed.isEmpty)

        for mode in [SearchMode.keyword, .vector, .hybrid] {
            var query = SearchQuery("Saturn square the Sun tests ambition")
            query.mode = mode
            query.limit = 3
            let hits = try await kb.search(query, as: .admin).hits
            #expect(hits.first?.snippet.headingPath == ["heavy"], "\(mode)")
            #expect(hits.first?.snippet.weight == 2, "\(mode)")
        }
        var tagged = SearchQuery.keyword("ease")
        tagged.tags = [Tag("planet:venus")]
        #expect(try await kb.search(tagged, as: .admin).hits.map(\.snippet.headingPath) == [["other"]])

        // Without the weight the first record comes first again (its text is the plainer match).
        try ws.write("rules/aspects.jsonl", """
            {"id": "light", "planet": "Saturn", "text": "Saturn square the Sun tests ambition and patience.", "weight": 1}
            {"id": "heavy", "planet": "Saturn", "text": "Saturn square the Sun tests ambition and patience!", "weight": 0.5}
            """)
        #expect(try await kb.ingest([ws.notes.path], options: options, embedder: embedder, record: record, as: .admin).updated == 1)
        let hits = try await kb.search(.keyword("Saturn square the Sun tests ambition"), as: .admin).hits
        #expect(hits.first?.snippet.headingPath == ["light"])
    }

    @Test func aBrokenFileOfEachKindFailsAloneAndTheIndexKeepsTheRest() async throws {
        let ws = try Workspace()
        try ws.write("good.md", "# Good\n\nA good note.")
        try ws.write("broken.epub", "not a zip")
        try ws.write("broken.docx", "not a zip either")
        try ws.write("broken.json", "[{\"text\": ")
        try ws.write("broken.csv", "text,weight\n\"unterminated,1\n")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect(report.added == 1)
        #expect(Set(report.failed.map { URL(fileURLWithPath: $0.path).lastPathComponent }) == ["broken.epub", "broken.docx", "broken.json", "broken.csv"])
        #expect(report.failed.allSatisfy { !$0.message.isEmpty })
        #expect(try await kb.sources(as: .admin).map(\.kind) == [.note])
    }

    @Test func aBilingualCorpusCanBeAskedForOneLanguage() async throws {
        let ws = try Workspace()
        try ws.write("en/moon.md", "# The Moon\n\nThe Moon rules the tides, the home and the feelings of a chart.")
        try ws.write("uk/moon.md", "# Місяць\n\nМісяць керує припливами, домом і почуттями в гороскопі, а також пам'яттю.")
        try ws.write("uk/given.md", "---\nlang: ru\n---\n# Луна\n\nЛуна управляет приливами и домом, это её сфера.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)

        var query = SearchQuery("Moon Місяць Луна")
        query.mode = .hybrid
        query.limit = 10
        let all = try await kb.search(query, as: .admin).hits
        #expect(Set(all.flatMap { $0.snippet.tags.filter { $0.key == "lang" } }) == ["lang:en", "lang:uk", "lang:ru"])
        query.tags = [Tag("lang:uk")]
        let ukrainian = try await kb.search(query, as: .admin).hits
        #expect(!ukrainian.isEmpty && ukrainian.allSatisfy { $0.sourcePath == ws.path("uk/moon.md") })

        var bot = BotRequest(name: "astro")
        bot.sources = [ws.notes.path]
        _ = try await kb.createBot(bot, as: .admin)
        var request = ContextRequest(bot: "astro", query: "what does the Moon rule")
        request.tags = ["lang:en"]
        let context = try await kb.context(request, as: .admin)
        #expect(!context.citations.isEmpty && context.citations.allSatisfy { $0.path == ws.path("en/moon.md") })
    }
}

import Foundation
import KBCore
import KBIngest
import KBRequests
import KBStore
import KBTestSupport
import Testing
@testable import KBKit

/// Sources added over the API: text and files, jobs, private sources, removal. Runs on SQLite
/// and (scripts/test.sh) on PostgreSQL.
@Suite struct UploadTests {
    /// A knowledge base with shared notes (hashing embedder) and a bot over them.
    func knowledgeBase(_ ws: Workspace) async throws -> KnowledgeBase {
        try ws.write("venus.md", "# Venus\n\nVenus rules love, beauty and money.")
        try ws.write("saturn.md", "# Saturn\n\nSaturn rules discipline and the long climb of a career.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        var bot = BotRequest(name: "astro")
        bot.sources = [ws.notes.path]
        _ = try await kb.createBot(bot, as: .admin)
        return kb
    }

    static let pdf = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("KBIngestTests/Fixtures/pdf/book.pdf")

    func upload(_ kb: KnowledgeBase, _ data: Data, type: String, id: String? = nil, user: String? = nil, bots: [String] = []) async throws -> SourceAdded {
        var request = UploadRequest(contentType: type)
        request.id = id
        request.user = user
        request.bot = bots.isEmpty ? nil : bots
        let upload = try await kb.beginUpload(request, as: .admin)
        // In pieces, as a request body arrives.
        for start in stride(from: 0, to: data.count, by: 4096) { try await upload.append(data.subdata(in: start..<min(start + 4096, data.count))) }
        return try await upload.finish()
    }

    func context(_ kb: KnowledgeBase, _ query: String, user: String? = nil) async throws -> ContextResponse {
        var request = ContextRequest(bot: "astro", query: query)
        request.user = user
        request.budget = 4000
        return try await kb.context(request, as: .admin)
    }

    @Test func epubDocxHTMLAndRecordsUploadByTheirMediaTypes() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        _ = try await upload(kb, try FormatFixtures.englishEPUB2(), type: "application/epub+zip", id: "returns")
        _ = try await upload(kb, try FormatFixtures.docx(), type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", id: "lease")
        _ = try await upload(kb, Data("<html><body><main><p>Mercury retrograde slows messages.</p></main></body></html>".utf8),
                             type: "text/html; charset=utf-8", id: "page")
        _ = try await upload(kb, Data("text,weight\nMars in the sixth house works hard.,2\n".utf8), type: "text/csv", id: "rules")
        _ = try await upload(kb, Data("{\"text\": \"Jupiter in the ninth house travels.\"}\n".utf8), type: "application/x-ndjson", id: "more")
        #expect(await kb.runQueuedJobs() == 5)
        let kinds = try await kb.sources(as: .admin).reduce(into: [String: SourceKind]()) { $0[$1.path] = $1.kind }
        #expect(kinds[Source.uploadPath("returns")] == .epub && kinds[Source.uploadPath("lease")] == .docx)
        #expect(kinds[Source.uploadPath("page")] == .html && kinds[Source.uploadPath("rules")] == .record && kinds[Source.uploadPath("more")] == .record)
        #expect(try await kb.search(.keyword("ringed planet"), as: .admin).hits.first?.snippet.headingPathString == "Chapter 3 › The Saturn return")
        #expect(try await kb.search(.keyword("sixth house"), as: .admin).hits.first?.snippet.weight == 2)
        // A ZIP sent as HTML is refused before it is stored.
        let wrong = await #expect(throws: KBError.self) { try await upload(kb, try FormatFixtures.docx(), type: "text/html") }
        #expect(wrong?.message.contains("The body is a ZIP archive, but its Content-Type says text/html") == true)
    }

    @Test func aShortTextIsSearchableWhenTheAnswerComesAndItsBotsSeeIt() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        var request = SourceRequest(text: "---\ntags: [home]\n---\n# Lease\n\nThe rent of flat 4 is due on the first Monday of each month.")
        request.id = "lease"
        request.bots = ["astro"]
        let added = try await kb.addSource(request, as: .admin)
        #expect(added.source.id == "lease" && added.job.state == .done && added.job.progress.snippetsDone == 1)
        #expect(try await kb.search(.keyword("rent Monday"), as: .admin).hits.first?.sourceTitle == "Lease")
        #expect(try await kb.bot("astro", as: .admin).sources.contains(.upload("lease")))
        let info = try await kb.source("lease", as: .admin)
        #expect(info.origin == .upload && info.title == "Lease" && info.tags == ["home"] && info.snippets == 1 && info.bots == ["astro"])
        #expect(try await context(kb, "when is the rent due").citations.contains { $0.title == "Lease" })
    }

    @Test func postingTheSameIDReplacesTheSourceAndUnchangedContentChangesNothing() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        var request = SourceRequest(text: "# Lease\n\nThe rent is due on Monday.")
        request.id = "lease"
        let first = try await kb.addSource(request, as: .admin)
        let ingested = try await kb.source("lease", as: .admin).ingestedAt
        let again = try await kb.addSource(request, as: .admin)
        #expect(again.job.state == .done && again.job.id != first.job.id)
        #expect(try await kb.source("lease", as: .admin).ingestedAt == ingested, "unchanged content was read again")
        request.text = "# Lease\n\nThe rent is due on Friday."
        _ = try await kb.addSource(request, as: .admin)
        #expect(try await kb.search(.keyword("Friday"), as: .admin).hits.map(\.sourceTitle) == ["Lease"])
        #expect(try await kb.search(.keyword("Monday"), as: .admin).hits.isEmpty)
        #expect(try await kb.sources(SourceListRequest(), as: .admin).sources.filter { $0.origin == .upload }.count == 1)
    }

    @Test func aPDFIsReadInTheBackgroundWithItsPageLabelsAndItsOriginalKept() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        let bytes = try Data(contentsOf: Self.pdf)
        let added = try await upload(kb, bytes, type: "application/pdf", id: "book", bots: ["astro"])
        #expect(added.job.state == .queued && added.job.size == bytes.count)
        // Acknowledged, so listed and readable at once, with its state and job, before the job ran.
        let pending = try #require(try await kb.sources(SourceListRequest(), as: .admin).sources.first { $0.id == "book" })
        #expect(pending.state == "queued" && pending.job == added.job.id && pending.kind == .pdf && pending.snippets == 0 && pending.size == bytes.count)
        let one = try await kb.source("book", as: .admin)
        #expect(one.state == "queued" && one.job == added.job.id && one.bots == ["astro"])
        var pdfs = SourceListRequest()
        pdfs.kind = "pdf"
        #expect(try await kb.sources(pdfs, as: .admin).sources.map(\.id) == ["book"])
        #expect(await kb.runQueuedJobs() == 1)
        let ready = try await kb.source("book", as: .admin)
        #expect(ready.state == "ready" && ready.job == nil && ready.snippets > 0)
        // The chunk inspector's view: the snippets in order, and each page's own text beside them.
        let inspected = try await kb.snippets(ofSource: "book", as: .admin)
        #expect(inspected.snippets.count == ready.snippets && inspected.snippets.map(\.ordinal) == inspected.snippets.map(\.ordinal).sorted())
        let pages = try #require(inspected.pages)
        #expect(pages.count == 6 && pages.map(\.number) == Array(1...6))
        for snippet in inspected.snippets {
            let start = try #require(snippet.pages?.start)
            let words = snippet.text.split(whereSeparator: \.isWhitespace).prefix(3).joined(separator: " ")
            #expect(pages[start - 1].text.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains(words), "\(words)")
        }
        // Read again from the kept original, in the background: the source stays readable meanwhile.
        let again = try await kb.reread(source: "book", as: .admin)
        #expect(again.source.id == "book" && again.job.id != added.job.id)
        var state = again.job.state
        for _ in 0..<300 where state != .done && state != .failed {
            try await Task.sleep(for: .milliseconds(100))
            state = try await kb.job(again.job.id, as: .admin).state
        }
        #expect(state == .done)
        #expect(try await kb.source("book", as: .admin).snippets == ready.snippets)
        let refused = await #expect(throws: KBError.self) { try await kb.reread(source: "nothing-here", as: .admin) }
        #expect(refused?.code == .notFound)
        #expect(try await kb.sources(SourceListRequest(), as: .admin).sources.filter { $0.id == "book" }.count == 1)
        let job = try await kb.job(added.job.id, as: .admin)
        #expect(job.state == .done && job.progress.snippetsDone == job.progress.snippetsTotal)
        #expect(job.progress.pagesDone == 6 && job.progress.pagesTotal == 6, "book.pdf has 6 pages: \(job.progress)")
        let cited = try await context(kb, "the moon and the tides").citations
        let page = try #require(cited.first { $0.path == Source.uploadPath("book") })
        #expect(page.pages != nil)
        let original = try #require(try await IndexCopier(store: kb.store).original(of: Source.uploadPath("book")))
        #expect(original.1.reduce(Data(), +) == bytes)
    }

    @Test func removingASourceTakesItsSnippetsOriginalAndJobsAndAFileIsNotRemovedThisWay() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        _ = try await upload(kb, try Data(contentsOf: Self.pdf), type: "application/pdf", id: "book", bots: ["astro"])
        await kb.runQueuedJobs()
        #expect(try await kb.removeSource(SourceRemoveRequest(id: "book"), as: .admin).deleted == "book")
        #expect(try await context(kb, "the moon and the tides").citations.allSatisfy { $0.path != Source.uploadPath("book") })
        #expect(try await IndexCopier(store: kb.store).original(of: Source.uploadPath("book")) == nil)
        let error = await #expect(throws: KBError.self) { try await kb.removeSource(SourceRemoveRequest(id: "book"), as: .admin) }
        #expect(error?.code == .notFound)
        // A queued job is cancelled with its source.
        let queued = try await upload(kb, try Data(contentsOf: Self.pdf), type: "application/pdf", id: "book2")
        _ = try await kb.removeSource(SourceRemoveRequest(id: "book2"), as: .admin)
        #expect(await kb.runQueuedJobs() == 0)
        #expect(await #expect(throws: KBError.self) { try await kb.job(queued.job.id, as: .admin) }?.code == .notFound)
        // An ingested file belongs to its file.
        let file = try #require(try await kb.sources(SourceListRequest(), as: .admin).sources.first { $0.origin == .file })
        #expect(await #expect(throws: KBError.self) { try await kb.removeSource(SourceRemoveRequest(id: file.id), as: .admin) }?.code == .conflict)
    }

    @Test func privateSourcesReachTheirUserAndNoOneElse() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        let marker = "quokkapassword"
        var request = SourceRequest(text: "# Ada's diary\n\nAda keeps her \(marker) under the Venus statue.")
        request.id = "ada-diary"
        request.user = "ada"
        request.bots = ["astro"]
        _ = try await kb.addSource(request, as: .admin)
        _ = try await upload(kb, Data("Ada's second note: \(marker) again, Venus.".utf8), type: "text/plain", id: "ada-note", user: "ada",
                             bots: ["astro"])
        await kb.runQueuedJobs()

        func leaks(_ results: SearchResults) -> Bool { results.hits.contains { $0.snippet.text.contains(marker) } }
        for mode in SearchMode.allCases {
            var query = SearchQuery("\(marker) Venus statue")
            query.mode = mode
            query.limit = 50
            #expect(!leaks(try await kb.search(query, as: .admin)), "a search without a user, \(mode)")
            query.user = "bob"
            #expect(!leaks(try await kb.search(query, as: .admin)), "bob's search, \(mode)")
            query.tags = []
            query.kinds = [.note]
            #expect(!leaks(try await kb.search(query, as: .admin)), "bob's filtered search, \(mode)")
            query.kinds = []
            query.user = "ada"
            #expect(leaks(try await kb.search(query, as: .admin)) || mode == .vector, "ada's search, \(mode)")
        }
        var bot = SearchRequest(query: "\(marker) Venus")
        bot.bot = "astro"
        bot.k = 50
        #expect(!leaks(try await kb.search(bot, as: .admin)))
        bot.user = "ada"
        #expect(leaks(try await kb.search(bot, as: .admin)))
        for user in [nil, "bob", "adam"] {
            let context = try await context(kb, "where does Ada keep the \(marker)", user: user)
            #expect(!context.context.contains(marker), "context for \(user ?? "no user")")
        }
        #expect(try await context(kb, "where does Ada keep the \(marker)", user: "ada").context.contains(marker))
        // Listing and erasing by user.
        #expect(try await kb.sources({ var r = SourceListRequest(); r.user = "ada"; return r }(), as: .admin).sources.map(\.id).sorted() == ["ada-diary", "ada-note"])
        let erased = try await kb.eraseSources(user: "ada", as: .admin)
        #expect(erased.sources == 2)
        #expect(!(try await context(kb, "where does Ada keep the \(marker)", user: "ada").context.contains(marker)))
    }

    @Test func anUploadThatIsRefusedOrCutShortLeavesNothing() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        let before = try await kb.status(as: .admin)
        // Not what it says it is.
        let lie = await #expect(throws: KBError.self) { _ = try await upload(kb, try Data(contentsOf: Self.pdf), type: "text/plain") }
        #expect(lie?.code == .unsupportedMediaType)
        // A bot that does not exist.
        let noBot = await #expect(throws: KBError.self) { _ = try await upload(kb, Data("hello".utf8), type: "text/plain", bots: ["nobody"]) }
        #expect(noBot?.code == .notFound)
        // Empty.
        #expect(await #expect(throws: KBError.self) { _ = try await upload(kb, Data(), type: "text/plain") }?.code == .invalidArgument)
        // Cut short: the caller discards it.
        let cut = try await kb.beginUpload(UploadRequest(contentType: "application/pdf"), as: .admin)
        try await cut.append(try Data(contentsOf: Self.pdf).prefix(10_000))
        await cut.discard()
        // Over the limit.
        var limits = Limits()
        limits.maxUploadBytes = 5_000
        let small = try KnowledgeBase.open(at: ws.dbPath, limits: limits)
        #expect(await #expect(throws: KBError.self) { _ = try await upload(small, try Data(contentsOf: Self.pdf), type: "application/pdf") }?.code
            == .tooLarge)
        #expect(await kb.runQueuedJobs() == 0)
        #expect(try await kb.status(as: .admin).sources == before.sources)
        #expect(try await kb.store.snapshot { try $0.unfinishedJobs() }.isEmpty)
    }

    @Test func aJobThatCannotBeReadFailsWithTheReasonAndTheSourceStaysAsItWas() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        var request = SourceRequest(text: "# Notes\n\nFirst version.")
        request.id = "doc"
        _ = try await kb.addSource(request, as: .admin)
        // A damaged PDF under the same id.
        let damaged = try await upload(kb, Data("%PDF-1.7\n1 0 obj garbage".utf8), type: "application/pdf", id: "doc")
        await kb.runQueuedJobs()
        let job = try await kb.job(damaged.job.id, as: .admin)
        #expect(job.state == .failed && job.error?.contains("damaged") == true)
        #expect(try await kb.search(.keyword("first version"), as: .admin).hits.map(\.sourceTitle) == ["Notes"])
    }

    @Test func aJobWhoseProcessDiedIsRunAgain() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        let added = try await upload(kb, Data("# Orphan\n\nA job that lost its process.".utf8), type: "text/markdown", id: "orphan")
        // Another process claimed it, and died.
        #expect(try await kb.store.claimJob(staleAfter: 60)?.job.id == added.job.id)
        #expect(await kb.runQueuedJobs() == 0, "a job alive elsewhere was taken")
        #expect(try await kb.store.claimJob(staleAfter: -1)?.job.id == added.job.id, "a stale job is queued again and claimed")
        _ = try await kb.runClaimedJob(try #require(try await kb.store.snapshot { try $0.storedJob(id: added.job.id) }))
        #expect(try await kb.job(added.job.id, as: .admin).state == .done)
        #expect(try await kb.search(.keyword("orphan"), as: .admin).hits.count == 1)
    }

    @Test func anExportCarriesTheOriginals() async throws {
        let ws = try Workspace()
        let kb = try await knowledgeBase(ws)
        _ = try await upload(kb, try Data(contentsOf: Self.pdf), type: "application/pdf", id: "book", user: "ada", bots: ["astro"])
        await kb.runQueuedJobs()
        let copy = TestBackend.freshIndex(in: ws.root, name: "copy.sqlite")
        let report = try await kb.export(to: copy, as: .admin)
        #expect(report.originals == 1)
        let other = try KnowledgeBase.open(at: copy, create: false)
        #expect(try await IndexCopier(store: other.store).original(of: Source.uploadPath("book"))?.1.reduce(Data(), +) == (try Data(contentsOf: Self.pdf)))
        #expect(try await other.source("book", as: .admin).user == "ada")
    }
}

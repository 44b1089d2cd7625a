import Foundation
import KBCore
import KBIngest
import KBRequests
import KBStore
import Testing
@testable import KBKit

/// The sync API, and the tools agents read sources with: read_source and grep_sources. Runs on
/// SQLite and (scripts/test.sh) on PostgreSQL.
@Suite struct SourceToolsTests {
    /// A SHA-256 as an app would send it, for content kb does not hold.
    static func sha(_ text: String) -> String { String(repeating: String(text.hashValue & 0xf, radix: 16), count: 64) }

    func add(_ kb: KnowledgeBase, _ id: String, _ text: String, collection: String?, user: String? = nil, title: String? = nil) async throws {
        var request = SourceRequest(text: text)
        request.id = id
        request.collection = collection
        request.user = user
        request.title = title
        _ = try await kb.addSource(request, as: .admin)
    }

    @Test func syncAnswersNewChangedUnchangedAndGoneAndPrunesOnlyItsCollection() async throws {
        let ws = try Workspace()
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        try await add(kb, "a", "# A\nAlpha text.", collection: "notes")
        try await add(kb, "b", "# B\nBeta text.", collection: "notes")
        try await add(kb, "c", "# C\nGamma text.", collection: "notes", title: "Gamma")
        try await add(kb, "old", "# Old\nStale text.", collection: "notes")
        try await add(kb, "x", "# X\nAnother app's text.", collection: "cms")
        try await add(kb, "loose", "# Loose\nNo collection.", collection: nil)
        #expect(try await kb.source("a", as: .admin).tags.contains(Tag("collection:notes")))
        // What kb lists as a source's contentHash is the SHA-256 an app compares.
        let (a, c, x) = (try await kb.source("a", as: .admin).contentHash, try await kb.source("c", as: .admin).contentHash, try await kb.source("x", as: .admin).contentHash)
        #expect(a.count == 64 && a.allSatisfy(\.isHexDigit))

        var sync = SourceSyncRequest(collection: "notes", items: [
            SourceSyncItem(id: "a", sha256: a.uppercased()),                    // unchanged
            SourceSyncItem(id: "b", sha256: Self.sha("# B\nBeta text, edited.")),             // changed
            SourceSyncItem(id: "c", sha256: c, title: "Gamma 2"),  // retitled
            SourceSyncItem(id: "new", sha256: Self.sha("New.")),                              // new
            SourceSyncItem(id: "x", sha256: x),                                               // another collection's
        ])
        let answer = try await kb.syncSources(sync, as: .admin)
        #expect(answer.unchanged == ["a"])
        #expect(answer.upload.map(\.id) == ["b", "c", "new"] && answer.upload.map(\.reason) == ["changed", "retitled", "new"])
        #expect(answer.gone == ["old"] && !answer.pruned)
        #expect(answer.conflicts.map(\.id) == ["x"])
        #expect(try await kb.sources(as: .admin).count == 6)

        // Pruning removes the collection's gone sources only: the other app's and the loose one stay.
        sync.items = []
        sync.prune = true
        let pruned = try await kb.syncSources(sync, as: .admin)
        #expect(pruned.gone == ["a", "b", "c", "old"] && pruned.pruned)
        #expect(Set(try await kb.sources(as: .admin).map(\.path)) == [Source.uploadPath("x"), Source.uploadPath("loose")])

        // A read-only token may compare but not prune; one without the right sources may do neither.
        let reader = try await kb.createToken({ var t = TokenRequest(name: "reader"); t.allow = ["sources"]; t.readOnly = true; return t }(), as: .admin)
        sync.collection = "cms"
        sync.items = [SourceSyncItem(id: "x", sha256: x)]
        sync.prune = nil
        #expect(try await kb.syncSources(sync, as: .token(reader.info)).unchanged == ["x"])
        sync.prune = true
        sync.items = []
        await #expect(throws: KBError.self) { try await kb.syncSources(sync, as: .token(reader.info)) }
        let bare = try await kb.createToken(TokenRequest(name: "bare"), as: .admin)
        let refused = await #expect(throws: KBError.self) { try await kb.syncSources(sync, as: .token(bare.info)) }
        #expect(refused?.code == .forbidden)
        #expect(try await kb.sources(as: .admin).count == 2)
    }

    @Test func syncRequestsAreCheckedEntryByEntry() throws {
        let limits = Limits()
        let bad = SourceSyncRequest(collection: "notes", items: [SourceSyncItem(id: "a", sha256: "xyz")])
        let error = #expect(throws: KBError.self) { try bad.checked(limits) }
        #expect(error?.message.hasPrefix("items[0]: \"sha256\"") == true)
        let twice = SourceSyncRequest(collection: "notes", items: [SourceSyncItem(id: "a", sha256: Self.sha("1")), SourceSyncItem(id: "a", sha256: Self.sha("2"))])
        #expect(throws: KBError.self) { try twice.checked(limits) }
        let unknown = #expect(throws: KBError.self) {
            try KBJSON.decode(SourceSyncRequest.self, from: Data(#"{"collection": "n", "items": [{"id": "a", "sha256": "00", "size": 3}]}"#.utf8))
        }
        #expect(unknown?.message.contains("unknown field \"size\"") == true)
    }

    /// A knowledge base with a book (printed page labels), a note, a private note of ada's and a bot.
    func library(_ ws: Workspace) async throws -> KnowledgeBase {
        try FileManager.default.copyItem(at: UploadTests.pdf, to: ws.notes.appendingPathComponent("book.pdf"))
        try ws.write("lease.md", "# Lease\n\n## Rent\n\nThe rent is due on the first of the month.\n\n## Repairs\n\nThe landlord fixes the boiler within 3 days.")
        // No time bound on grep here: a loaded machine must not turn a test into a timing one.
        var limits = Limits()
        limits.grepSeconds = 3600
        let kb = try KnowledgeBase.open(at: ws.dbPath, limits: limits)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        try await add(kb, "ada-diary", "# Diary\n\nThe zebra quartz secret of ada.", collection: nil, user: "ada")
        var bot = BotRequest(name: "astro")
        bot.sources = [ws.notes.path, "upload:ada-diary"]
        _ = try await kb.createBot(bot, as: .admin)
        return kb
    }

    @Test func readSourceByPagesLabelsHeadingAndCharacters() async throws {
        let ws = try Workspace()
        let kb = try await library(ws)
        let book = SourceInfo.fileID(ws.path("book.pdf"))
        var read = SourceReadRequest(source: book)
        read.pages = "4"
        let page = try await kb.readSource(read, as: .admin)
        #expect(page.text.contains("The zebra quartz phrase lives on the fourth physical page"))
        // Page 4 exactly (its snippet runs on to page 5: not shown), cited with its printed label.
        #expect(page.pages?.start == 4 && page.pages?.end == 4 && page.pageLabel == "p. 2")
        #expect(page.pieceStart == page.start && page.pieceEnd == page.end && page.partEnd >= page.pieceEnd)   // the old names, kept
        #expect(!page.text.contains("until dawn") && !page.text.contains("Chapter Two"))
        read.pages = "4-5"
        #expect(try await kb.readSource(read, as: .admin).pageLabel == "pp. 2–3")
        read.pages = "4"
        #expect(page.headingPath == ["1 Chapter One", "1.2 The Known Page"] && page.sourceTitle == "The Fixture Book" && page.kind == .pdf)

        read.pages = nil
        read.labels = "i-ii"
        let preface = try await kb.readSource(read, as: .admin)
        #expect(preface.text.hasPrefix("Preface") && preface.pageLabel == "pp. i–ii" && preface.next == nil)
        read.labels = "2"
        #expect(try await kb.readSource(read, as: .admin).text == page.text)
        read.labels = "xiv"
        let missing = await #expect(throws: KBError.self) { try await kb.readSource(read, as: .admin) }
        #expect(missing?.code == .notFound && missing?.message.contains("labelled i–") == true)

        // Pieces: `next` continues exactly where the piece ended, and the pieces make the whole.
        read.labels = nil
        read.maxCharacters = 300
        var pieces: [SourceText] = [try await kb.readSource(read, as: .admin)]
        while let next = pieces.last!.next, pieces.count < 100 {
            read.start = next
            pieces.append(try await kb.readSource(read, as: .admin))
        }
        #expect(pieces.count > 3 && pieces.allSatisfy { $0.text.unicodeScalars.count <= 300 })
        read.start = nil
        read.maxCharacters = 32_000
        let whole = try await kb.readSource(read, as: .admin)
        #expect(whole.next == nil)
        #expect(pieces.map(\.text).joined().filter { !$0.isWhitespace } == whole.text.filter { !$0.isWhitespace })

        var note = SourceReadRequest(source: SourceInfo.fileID(ws.path("lease.md")))
        note.heading = ["lease", "Repairs"]
        let repairs = try await kb.readSource(note, as: .admin)
        #expect(repairs.text == "The landlord fixes the boiler within 3 days." && repairs.headingPath == ["Lease", "Repairs"])
        note.heading = nil
        note.start = repairs.start + 4
        note.end = repairs.start + 12
        #expect(try await kb.readSource(note, as: .admin).text == "landlord")
        note.end = note.start
        let empty = await #expect(throws: KBError.self) { try await kb.readSource(note, as: .admin) }
        #expect(empty?.code == .unprocessable)
        note.pages = "1"
        note.start = nil
        note.end = nil
        let unpaged = await #expect(throws: KBError.self) { try await kb.readSource(note, as: .admin) }
        #expect(unpaged?.message.contains("has no pages") == true)
    }

    @Test func privateSourcesStayPrivateToReadAndGrep() async throws {
        let ws = try Workspace()
        let kb = try await library(ws)
        // The admin reads everything; a scoped token reads through its bot, private sources only for its users.
        #expect(try await kb.readSource(SourceReadRequest(source: "ada-diary"), as: .admin).text.contains("zebra quartz secret"))
        let bob = try await kb.createToken({ var t = TokenRequest(name: "bob-app"); t.scopes = ["user:bob"]; t.bots = ["astro"]; return t }(), as: .admin)
        let ada = try await kb.createToken({ var t = TokenRequest(name: "ada-app"); t.scopes = ["user:ada"]; t.bots = ["astro"]; return t }(), as: .admin)
        var read = SourceReadRequest(source: "ada-diary")
        read.bot = "astro"
        read.user = "bob"
        let hidden = await #expect(throws: KBError.self) { try await kb.readSource(read, as: .token(bob.info)) }
        #expect(hidden?.code == .notFound)
        read.user = "ada"
        #expect(await (try? kb.readSource(read, as: .token(bob.info))) == nil)   // not bob's user
        #expect(try await kb.readSource(read, as: .token(ada.info)).text.contains("zebra quartz secret"))
        read.bot = nil
        #expect(await (try? kb.readSource(read, as: .token(ada.info))) == nil)   // a token reads through its bots

        var grep = SourceGrepRequest(pattern: "zebra quartz")
        grep.literal = true
        grep.bot = "astro"
        grep.user = "bob"
        let bobs = try await kb.grepSources(grep, as: .token(bob.info))
        #expect(bobs.matches.map(\.sourceID) == [SourceInfo.fileID(ws.path("book.pdf"))])
        grep.user = "ada"
        let adas = try await kb.grepSources(grep, as: .token(ada.info))
        #expect(Set(adas.matches.map(\.sourceID)) == [SourceInfo.fileID(ws.path("book.pdf")), "ada-diary"])
    }

    @Test func grepFindsExpressionsWithCitationsAndRefusesRunawayPatterns() async throws {
        let ws = try Workspace()
        let kb = try await library(ws)
        var grep = SourceGrepRequest(pattern: "within [[:digit:]]+ days?")
        let found = try await kb.grepSources(grep, as: .admin)
        #expect(found.matches.count == 1 && found.truncated == nil)
        let match = try #require(found.matches.first)
        #expect(match.match == "within 3 days" && match.line == "The landlord fixes the boiler within 3 days.")
        #expect(match.headingPath == ["Lease", "Repairs"] && match.sourcePath == ws.path("lease.md"))
        // The offset is where read_source finds the match.
        var read = SourceReadRequest(source: match.sourceID)
        read.start = match.offset
        read.end = match.offset + match.match.unicodeScalars.count
        #expect(try await kb.readSource(read, as: .admin).text == "within 3 days")

        // A note's headings are matched too, once, where the text under them starts.
        let headings = try await kb.grepSources(SourceGrepRequest(pattern: "^Repairs$"), as: .admin)
        #expect(headings.matches.map(\.line) == ["Repairs"] && headings.matches.first?.inHeading == true)
        #expect(headings.matches.first?.offset == match.offset - "The landlord fixes the boiler ".unicodeScalars.count)

        grep = SourceGrepRequest(pattern: "ZEBRA\\s+quartz")
        grep.ignoreCase = true
        let book = try await kb.grepSources(grep, as: .admin)
        #expect(book.matches.contains { $0.pageLabel == "p. 2" && $0.pages?.start == 4 && $0.pages?.end == 4 })
        grep.kinds = ["note"]
        #expect(try await kb.grepSources(grep, as: .admin).matches.allSatisfy { $0.kind == .note })
        grep = SourceGrepRequest(pattern: "\\d+ days")
        #expect(try await kb.grepSources(grep, as: .admin).matches.map(\.match) == ["3 days"])
        grep = SourceGrepRequest(pattern: "the")
        grep.ignoreCase = true
        grep.limit = 3
        let many = try await kb.grepSources(grep, as: .admin)
        #expect(many.matches.count == 3 && many.truncated == "limit")

        // What could run away is refused before anything is searched; a broken pattern names itself.
        for pattern in ["(a*)*\\1", "(x{10}){10}", "(.*a){40}"] {
            let refused = await #expect(throws: KBError.self, "\(pattern)") { try await kb.grepSources(SourceGrepRequest(pattern: pattern), as: .admin) }
            #expect(refused?.code == .invalidArgument)
        }
        let broken = await #expect(throws: KBError.self) { try await kb.grepSources(SourceGrepRequest(pattern: "rent (is"), as: .admin) }
        #expect(broken?.message.contains("literal") == true)
        // Patterns a backtracking engine would take exponential time over answer at once here.
        let nested = try await kb.grepSources(SourceGrepRequest(pattern: "(a+)+$|(x|xx)+y"), as: .admin)
        #expect(nested.truncated == nil)
    }
}

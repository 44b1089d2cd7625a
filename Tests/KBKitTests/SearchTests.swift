import Foundation
import KBCore
import KBStore
import KBEmbed
@testable import KBSQLite
import KBIngest
import KBTestSupport
import Testing
@testable import KBKit

@Suite struct SearchTests {
    func hashingKB(_ ws: Workspace) async throws -> KnowledgeBase {
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty)
        return kb
    }

    @Test func aKeywordMatchInAnotherLanguageDoesNotLeadAHybridSearch() async throws {
        let ws = try Workspace()
        // A Russian page that quotes an English song title, and an English page.
        try ws.write("lindisfarne.md", "Группа Lindisfarne известна песней Fog on the Tyne: её пели болельщики на стадионе каждую субботу.")
        try ws.write("defense.md", "The defense of the team gave up few points in the final game of the season.")
        let kb = try await hashingKB(ws)
        var query = SearchQuery("Which songs did the fans sing about the Tyne fog?")
        query.explain = true
        let hits = try await kb.search(query, as: .admin).hits
        let russian = hits.first { $0.sourcePath.hasSuffix("lindisfarne.md") }
        // Its words match ("fog", "tyne"), but in a Russian snippet they are an accident of quotation.
        #expect(try await kb.search(.keyword("tyne fog"), as: .admin).hits.first?.sourcePath.hasSuffix("lindisfarne.md") == true)
        #expect(russian?.explanation?.keywordRank == nil)
        // A question in Russian keeps its keyword matches in Russian text.
        var own = SearchQuery("Какую песню пели болельщики на стадионе?")
        own.explain = true
        let first = try #require(try await kb.search(own, as: .admin).hits.first)
        #expect(first.sourcePath.hasSuffix("lindisfarne.md"))
        #expect(first.explanation?.keywordRank == 1)
    }

    @Test func anEnglishOnlyModelsVectorsDoNotVoteOnAnotherLanguage() {
        #expect(!ModelLanguages.reads("all-MiniLM-L6-v2", "ar"))
        #expect(ModelLanguages.reads("all-MiniLM-L6-v2", "en-GB"))
        #expect(ModelLanguages.reads("multilingual-e5-small", "ar"))
        #expect(ModelLanguages.reads("text-embedding-3-small", "uk"))   // unknown: taken to read all
    }

    func vectorQuery(_ text: String, k: Int = 8) -> SearchQuery {
        var q = SearchQuery(text)
        q.mode = .vector
        q.limit = k
        return q
    }

    @Test(.enabled(if: TestBackend.isSQLite, "PostgreSQL ranks vectors in the database; nothing is held in memory"))
    func theVectorsInMemoryFollowThisProcessesWritesWithoutAReload() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha beta gamma")
        let kb = try await hashingKB(ws)
        #expect(try await kb.search(vectorQuery("alpha"), as: .admin).hits.map(\.sourcePath) == [ws.path("a.md")])
        let loaded = try #require((kb.store as? SQLiteStore)?.vectors.loadedIndex)

        try ws.write("b.md", "delta epsilon")
        try ws.write("a.md", "zeta eta")
        let (embedder, record) = try await kb.embedder(nil)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect((kb.store as? SQLiteStore)?.vectors.loadedIndex === loaded, "the index was reloaded")
        #expect(loaded.count == 2)
        #expect(try await kb.search(vectorQuery("delta epsilon", k: 1), as: .admin).hits.first?.sourcePath == ws.path("b.md"))
        #expect(try await kb.search(vectorQuery("zeta eta", k: 1), as: .admin).hits.first?.snippet.text == "zeta eta")

        try await kb.remove([ws.path("b.md")], as: .admin)
        #expect((kb.store as? SQLiteStore)?.vectors.loadedIndex === loaded)
        #expect(loaded.count == 1)
        #expect(try await kb.search(vectorQuery("delta epsilon"), as: .admin).hits.map(\.sourcePath) == [ws.path("a.md")])
    }

    @Test func anotherProcessesWritesAreSeenOnTheNextSearch() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let reader = try await hashingKB(ws)
        _ = try await reader.search(vectorQuery("alpha"), as: .admin)
        let writer = try KnowledgeBase.open(at: ws.dbPath)
        try ws.write("b.md", "omega psi")
        let (embedder, record) = try await writer.embedder(nil)
        _ = try await writer.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(try await reader.search(vectorQuery("omega psi", k: 1), as: .admin).hits.first?.sourcePath == ws.path("b.md"))
    }

    @Test func aQueryEmbedderThatDiffersFromTheIndexIsRefusedNamingBoth() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let kb = try await hashingKB(ws)
        try await kb.store.setMeta("embedder_spec", "local")   // as if the index said to use the local model
        let fresh = try KnowledgeBase.open(at: ws.dbPath)
        let error = try await #require(throws: KBError.self) { try await fresh.search(vectorQuery("alpha"), as: .admin) }
        #expect(error.code == .embedderMismatch)
        #expect(error.message.contains("'hashing-384'") && error.message.contains("'all-MiniLM-L6-v2'"))
    }

    @Test func hybridOnAKeywordOnlyIndexRunsAsKeywordAndVectorModeIsRefused() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        let results = try await kb.search(SearchQuery("alpha"), as: .admin)
        #expect(results.mode == .keyword && results.embedder == nil && results.hits.count == 1)
        await #expect(throws: KBError.self) { try await kb.search(vectorQuery("alpha"), as: .admin) }
    }

    @Test func nearDuplicateSnippetsFromTwoCopiesCollapseToOne() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "Venus rules love and money.")
        try ws.write("copy/a.md", "Venus rules love and money.")
        try ws.write("b.md", "Saturn rules time.")
        let kb = try await hashingKB(ws)
        for mode in SearchMode.allCases {
            var q = SearchQuery("venus love money")
            q.mode = mode
            let paths = try await kb.search(q, as: .admin).hits.map(\.sourcePath)
            #expect(paths.filter { $0.hasSuffix("a.md") }.count == 1, "\(mode): \(paths)")
        }
    }

    @Test func hybridFusesBothRankings() async throws {
        let ws = try Workspace()
        try ws.write("k.md", "zebra")                       // keyword match only
        try ws.write("v.md", "apple banana cherry")         // same words as the query: vector match
        let kb = try await hashingKB(ws)
        let results = try await kb.search(SearchQuery("apple banana cherry zebra"), as: .admin)
        #expect(results.mode == .hybrid)
        #expect(Set(results.hits.prefix(2).map(\.sourcePath)) == [ws.path("k.md"), ws.path("v.md")])
        #expect(results.hits[0].score > results.hits[1].score || results.hits[0].score == results.hits[1].score)
    }

    /// The rankings are fused over the query's candidates however many hits are asked for: a
    /// search for thirty gives the same first three as a search for three, in either fusion.
    @Test(arguments: [FusionMethod.adaptive, .reciprocalRank])
    func theFirstHitsDoNotDependOnHowManyAreAskedFor(_ fusion: FusionMethod) async throws {
        let ws = try Workspace()
        // Notes of 3–12 words drawn from sixteen: rankings that agree in part.
        let words = ["venus", "saturn", "bread", "tea", "career", "love", "money", "salt", "house", "moon",
                     "river", "stone", "glass", "paper", "music", "garden"]
        var state: UInt64 = 7
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        for i in 0..<40 {
            try ws.write("n\(i).md", "# Note \(i)\n\n" + (0..<(3 + next(10))).map { _ in words[next(words.count)] }.joined(separator: " ") + ".")
        }
        let kb = try await hashingKB(ws)
        for text in ["venus saturn", "bread tea salt", "moon river stone", "garden music", "love money career house", "glass paper"] {
            var few = SearchQuery(text)
            few.fusion = fusion
            few.candidates = 5
            few.limit = 3
            var many = few
            many.limit = 30
            let first = try await kb.search(few, as: .admin).hits
            let deeper = try await kb.search(many, as: .admin).hits
            #expect(first.count == 3 && deeper.count > first.count, "\(text)")
            #expect(deeper.prefix(3).map(\.snippetID) == first.map(\.snippetID), "\(fusion) \(text)")
            #expect(deeper.prefix(3).map(\.score) == first.map(\.score), "\(fusion) \(text)")
        }
    }

    /// A quantized hybrid search ranks its vectors on another thread while the snapshot's ranks
    /// keywords: the same hits as one after the other.
    @Test func aQuantizedHybridSearchRanksAsTheExactOne() async throws {
        let ws = try Workspace()
        for (name, text) in [("k.md", "zebra"), ("v.md", "apple banana cherry"), ("w.md", "banana split zebra crossing"), ("x.md", "cherry tree")] {
            try ws.write(name, text)
        }
        let kb = try await hashingKB(ws)
        var query = SearchQuery("apple banana cherry zebra")
        let exact = try await kb.search(query, as: .admin)
        query.quantized = true
        let quantized = try await kb.search(query, as: .admin)
        #expect(quantized.mode == .hybrid)
        #expect(quantized.hits.map(\.sourcePath) == exact.hits.map(\.sourcePath))
        #expect(quantized.hits.map(\.score) == exact.hits.map(\.score))
        query.text = "banana"
        query.mode = .vector
        #expect(try await kb.search(query, as: .admin).hits.count > 0)
    }

    /// A folder whose name holds a combining mark (é as e + U+0301) is one Swift character
    /// shorter than its Unicode scalars: filters must compare whole prefixes, not a count of
    /// characters that the database counts differently.
    @Test func sourceFiltersMatchFoldersWithCombiningMarksInTheirNames() async throws {
        let ws = try Workspace()
        try ws.write("cafe\u{301}/menu.md", "# Menu\n\nCoffee and croissants every morning.")
        try ws.write("elsewhere/menu.md", "# Menu\n\nCoffee and tea all day.")
        let kb = try await hashingKB(ws)
        var query = SearchQuery("coffee")
        query.mode = .keyword
        query.sourcePrefixes = [ws.path("cafe\u{301}") + "/"]
        #expect(try await kb.search(query, as: .admin).hits.map(\.sourcePath) == [ws.path("cafe\u{301}/menu.md")])
        query.sourcePrefixes = []
        query.selectors = [try SourceSelector(ws.path("cafe\u{301}"))]
        #expect(try await kb.search(query, as: .admin).hits.map(\.sourcePath) == [ws.path("cafe\u{301}/menu.md")])
        #expect(try await kb.store.snapshot { try $0.sourcePaths(under: ws.path("cafe\u{301}")) } == [ws.path("cafe\u{301}/menu.md")])
    }
}

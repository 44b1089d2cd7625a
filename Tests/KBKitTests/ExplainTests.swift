import Foundation
import KBCore
import KBIngest
import KBRequests
import KBTestSupport
import Testing
@testable import KBKit

/// A search with `explain` says why each hit is there, and finds exactly what it finds without.
/// Runs on SQLite and (scripts/test.sh) on PostgreSQL.
@Suite struct ExplainTests {
    @Test func explainedHitsCarryTheirRanksScoresAndFiltersAndNothingElseChanges() async throws {
        let ws = try Workspace()
        try ws.write("venus.md", "---\ntags: [area:love]\n---\n# Venus\n\nVenus rules love, beauty and money.")
        try ws.write("saturn.md", "---\ntags: [area:career]\n---\n# Saturn\n\nSaturn rules discipline and the long climb of a career.")
        try ws.write("mars.md", "---\ntags: [area:love]\n---\n# Mars\n\nMars rules desire, courage and the love of a fight.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)

        for mode in SearchMode.allCases {
            var request = SearchRequest(query: "love and money")
            request.mode = mode.rawValue
            request.anyTags = ["area:love", "area:career"]
            let plain = try await kb.search(request, as: .admin)
            request.explain = true
            let explained = try await kb.search(request, as: .admin)
            #expect(explained.hits.map(\.snippetID) == plain.hits.map(\.snippetID), "\(mode)")
            #expect(explained.hits.map(\.score) == plain.hits.map(\.score), "\(mode)")
            #expect(plain.hits.allSatisfy { $0.explanation == nil })
            for hit in explained.hits {
                let why = try #require(hit.explanation, "\(mode)")
                #expect(why.filters == ["any of the tags: area:love, area:career"])
                #expect(why.fused == hit.score, "no weights here: the fused score is the score")
                switch mode {
                case .keyword: #expect(why.keywordRank == hit.rank && why.keywordScore == hit.score && why.vectorRank == nil)
                case .vector: #expect(why.vectorRank == hit.rank && why.cosine.map { abs($0 - hit.score) < 1e-6 } == true && why.keywordRank == nil)
                case .hybrid:
                    #expect(why.keywordRank != nil || why.vectorRank != nil)
                    // Adaptive fusion: each ranking scaled to 0…1 and mixed by the query's keyword share.
                    let share = try #require(why.keywordShare)
                    #expect(share > 0 && share < 1 && why.fused >= 0 && why.fused <= 1 + 1e-12, "\(why)")
                    if why.keywordRank == 1 && why.vectorRank == 1 { #expect(abs(why.fused - 1) < 1e-12) }
                }
            }
        }
        // Reciprocal-rank fusion: the score is the sum over the rankings it is in.
        var request = SearchRequest(query: "love and money")
        request.anyTags = ["area:love", "area:career"]
        request.fusion = "rrf"
        request.explain = true
        let explained = try await kb.search(request, as: .admin)
        #expect(!explained.hits.isEmpty)
        for hit in explained.hits {
            let why = try #require(hit.explanation)
            #expect(why.keywordShare == nil)
            let expected = (why.keywordRank.map { 1 / Double(60 + $0) } ?? 0) + (why.vectorRank.map { 1 / Double(60 + $0) } ?? 0)
            #expect(abs(why.fused - expected) < 1e-9, "\(why)")
        }
    }
}

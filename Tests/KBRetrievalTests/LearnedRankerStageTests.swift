import KBCore
import KBRetrieval
import Testing

@Suite struct LearnedRankerStageTests {
    @Test func fusionSignalsScaleEachRankingAsAdaptiveFusionDoes() {
        let signals = Ranking.fusionSignals(keywords: [(1, 8), (2, 4)], vectors: [(2, 0.9), (3, 0.5)], keywordShare: 0.6, depth: 50)
        #expect(signals[1] == FusionSignals(keyword: 1, keywordRank: 1, vector: 0, vectorRank: nil, keywordShare: 0.6))
        #expect(signals[2] == FusionSignals(keyword: 0.5, keywordRank: 2, vector: 1, vectorRank: 1, keywordShare: 0.6))
        #expect(signals[3] == FusionSignals(keyword: 0, keywordRank: nil, vector: 0, vectorRank: 2, keywordShare: 0.6))
    }

    @Test func theRankerOrdersByItsWeighedFeaturesAndLeavesListsWithoutSignals() async throws {
        // A model that only weighs the vector score.
        let model = LearnedRankerStage.Model(version: "test-v1", mean: Array(repeating: 0, count: 10), spread: Array(repeating: 1, count: 10),
                                             weights: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0])
        let stage = LearnedRankerStage(model: model, depth: 2)
        let candidates = [
            RetrievalCandidate(snippetID: 1, score: 1, sourcePath: "/a", text: "a",
                               signals: FusionSignals(keyword: 1, keywordRank: 1, vector: 0.2, vectorRank: 3, keywordShare: 0.5)),
            RetrievalCandidate(snippetID: 2, score: 0.9, sourcePath: "/b", text: "b",
                               signals: FusionSignals(keyword: 0.5, keywordRank: 2, vector: 1, vectorRank: 1, keywordShare: 0.5)),
            RetrievalCandidate(snippetID: 3, score: 0.1, sourcePath: "/c", text: "c",
                               signals: FusionSignals(keyword: 0, keywordRank: nil, vector: 0.9, vectorRank: 2, keywordShare: 0.5)),
        ]
        let reordered = try await stage.apply(candidates, query: "q")
        // The first two (the depth) reordered by the vector score; the third keeps its place.
        #expect(reordered.map(\.snippetID) == [2, 1, 3])
        #expect(reordered[0].score == 1 && reordered[1].score == 0.2)
        var bare = candidates
        bare[0].signals = nil
        #expect(try await stage.apply(bare, query: "q").map(\.snippetID) == [1, 2, 3])
        #expect(stage.name == "test-v1" && stage.candidateDepth == 2)
        #expect(LearnedRankerStage.features(candidates[2].signals!) == [0, 0.9, 0.45, 1.0 / 1060, 1.0 / 62, 0, 0.45, 0, 1, 0])
    }

    @Test func theShippedModelIsVersionedAndComplete() {
        let model = LearnedRankerStage.Model.shipped
        #expect(model.version == "learned-ranker-v1")
        #expect(model.weights.count == 10 && model.mean.count == 10 && model.spread.count == 10)
        #expect(model.spread.allSatisfy { $0 > 0 })
    }
}

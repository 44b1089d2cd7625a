import KBCore
import KBRetrieval
import KBTestSupport
import Testing

@Suite struct RankingTests {
    @Test func reciprocalRankFusionAddsWeightedReciprocalRanks() {
        let fused = Ranking.reciprocalRank([[1, 2, 3], [3, 1]], weights: [1, 1])
        #expect(fused.map(\.id) == [1, 3, 2])
        #expect(abs(fused[0].score - (1.0 / 61 + 1.0 / 62)) < 1e-12)
        #expect(abs(fused[1].score - (1.0 / 63 + 1.0 / 61)) < 1e-12)
        #expect(abs(fused[2].score - 1.0 / 62) < 1e-12)
    }

    @Test func weightsScaleEachList() {
        let fused = Ranking.reciprocalRank([[1, 2], [2, 1]], weights: [2, 1])
        #expect(fused.map(\.id) == [1, 2])
        #expect(abs(fused[0].score - (2.0 / 61 + 1.0 / 62)) < 1e-12)
        #expect(Ranking.reciprocalRank([[1, 2], [2, 1]], weights: [0, 1]).map(\.id) == [2, 1])
    }

    @Test func tiesGoToTheBetterBestRankThenTheSmallerID() {
        #expect(Ranking.reciprocalRank([[5], [2]], weights: [1, 1]).map(\.id) == [2, 5])
        // 7: ranks 1 and 3; 8: rank 2 twice — 1/61 + 1/63 = 0.032266 beats 2/62 = 0.032258.
        #expect(Ranking.reciprocalRank([[7, 8], [9, 8, 7]], weights: [1, 1]).map(\.id) == [7, 8, 9])
    }

    @Test func adaptiveFusionLetsTheRankingWhoseBestStandsOutLead() {
        // Keywords: one clear match. Vectors: a flat list (every text much alike), led by a snippet
        // the keywords rank second.
        let keywords: [(id: Int64, score: Double)] = [(1, 12), (10, 3), (3, 2.5)]
        let vectors: [(id: Int64, score: Double)] = (0..<10).map { (id: Int64(10 + $0), score: 0.70 - Double($0) / 1000) }
        let (fused, share) = Ranking.adaptiveFusion(keywords: keywords, vectors: vectors, depth: 10)
        #expect(fused.first?.id == 1)
        #expect(share > 0.5)
        // Reciprocal rank fusion with equal weights lets the flat list's leader win instead.
        #expect(Ranking.reciprocalRank([keywords.map(\.id), vectors.map(\.id)], weights: [1, 1]).first?.id == 10)
        // The other way round: a vector ranking with a clear best and scattered keyword matches.
        let scattered: [(id: Int64, score: Double)] = (0..<10).map { (id: Int64(20 + $0), score: 5 - Double($0) / 100) }
        let tail: [(id: Int64, score: Double)] = (0..<9).map { (id: Int64(40 + $0), score: 0.3 - Double($0) / 100) }
        let peaked: [(id: Int64, score: Double)] = [(id: 30, score: 0.9)] + tail
        let other = Ranking.adaptiveFusion(keywords: scattered, vectors: peaked, depth: 10)
        #expect(other.fused.first?.id == 30)
        #expect(other.keywordShare < 0.5)
    }

    @Test func adaptiveFusionScalesEachRankingAndAddsBySharedShare() {
        // A keyword list shorter than the depth scales from 0; a full vector list from its lowest.
        let (fused, share) = Ranking.adaptiveFusion(keywords: [(1, 8), (2, 4)], vectors: [(2, 0.9), (1, 0.5)], depth: 50)
        // Keyword confidence 1 − 0.5/9 (ranks 3…10 of a complete list count 0); the vector list of
        // two scaled 1, 0 (min-max): confidence 1.
        let keywordConfidence = 1 - 0.5 / 9
        #expect(abs(share - keywordConfidence / (keywordConfidence + 1)) < 1e-12)
        // Each place adds λ/2 · 61/(60 + rank); the sum is divided by 1 + λ.
        let place = { (rank: Double) in Ranking.rankShare / 2 * 61 / (60 + rank) }
        let expected2: Double = (share * 0.5 + (1 - share) + place(2) + place(1)) / (1 + Ranking.rankShare)
        let expected1: Double = (share + place(1) + place(2)) / (1 + Ranking.rankShare)
        #expect(fused.map(\.id) == [2, 1])
        #expect(abs(fused[0].score - expected2) < 1e-12 && abs(fused[1].score - expected1) < 1e-12)
        // The query's weights scale the shares; a missing ranking gives the other everything.
        #expect(Ranking.adaptiveFusion(keywords: [(1, 8), (2, 4)], vectors: [(2, 0.9), (1, 0.5)], keywordWeight: 0, depth: 50).keywordShare == 0)
        let alone = Ranking.adaptiveFusion(keywords: [(1, 8), (2, 4)], vectors: [], depth: 50)
        #expect(alone.keywordShare == 1 && alone.fused.map(\.id) == [1, 2])
        #expect(Ranking.adaptiveFusion(keywords: [], vectors: [], depth: 50).fused.isEmpty)
    }

    @Test func rankingsReadDeeperThanTheFusionLeaveItsFirstEntriesAsTheyWere() {
        // A flat vector list whose tail falls far below: scaled from the 100th, its first ten
        // would crowd near 1 and lose their confidence; fused over the first 10, they do not.
        var keywords: [(id: Int64, score: Double)] = []
        var vectors: [(id: Int64, score: Double)] = []
        for rank in 0..<100 {
            let place = Double(rank)
            keywords.append((id: Int64(1 + rank * 2), score: 12 - place / 10))
            vectors.append((id: Int64(2 + rank * 3), score: rank < 10 ? 0.9 - place / 50 : 0.5 - place / 1000))
        }
        for depth in [5, 10] {   // fewer than the ten a confidence reads, and ten
            let cut = Ranking.adaptiveFusion(keywords: Array(keywords.prefix(depth)), vectors: Array(vectors.prefix(depth)), depth: depth)
            let deep = Ranking.adaptiveFusion(keywords: keywords, vectors: vectors, depth: depth)
            #expect(deep.keywordShare == cut.keywordShare, "\(depth)")
            #expect(deep.fused.prefix(cut.fused.count).map(\.id) == cut.fused.map(\.id), "\(depth)")
            #expect(deep.fused.prefix(cut.fused.count).map(\.score) == cut.fused.map(\.score), "\(depth)")
            // The entries read further down follow, by their best rank, and score nothing.
            let further = deep.fused.dropFirst(cut.fused.count)
            #expect(further.count == Set(keywords.map(\.id) + vectors.map(\.id)).count - cut.fused.count)
            #expect(further.allSatisfy { $0.score == 0 } && further.map(\.bestRank) == further.map(\.bestRank).sorted())
        }
        let cut = Ranking.adaptiveFusion(keywords: Array(keywords.prefix(10)), vectors: Array(vectors.prefix(10)), depth: 10)
        // Fused over the whole depth instead, the first entries change (what a search asking for
        // a hundred hits did before).
        #expect(Ranking.adaptiveFusion(keywords: keywords, vectors: vectors, depth: 100).keywordShare != cut.keywordShare)
    }

    @Test func aShortKeywordListIsTrustedByHowMuchOfTheQuestionItsBestHolds() {
        // Two snippets hold a word of the question, one far above the other: a confident list —
        // unless its best holds only a quarter of the question's words, when the vectors lead.
        let keywords: [(id: Int64, score: Double)] = [(1, 9), (2, 1)]
        let vectors: [(id: Int64, score: Double)] = [(3, 0.86)] + (0..<9).map { (id: Int64(4 + $0), score: 0.84 - Double($0) / 1000) }
        let whole = Ranking.adaptiveFusion(keywords: keywords, vectors: vectors, depth: 50)
        let partial = Ranking.adaptiveFusion(keywords: keywords, vectors: vectors, keywordCoverage: 0.25, depth: 50)
        #expect(whole.fused.first?.id == 1 && partial.fused.first?.id == 3)
        #expect(abs(partial.keywordShare - whole.keywordShare) > 0.1 && partial.keywordShare < 0.5)
        // A list as deep as asked for (common words matched everywhere) keeps its confidence.
        let full: [(id: Int64, score: Double)] = (0..<10).map { (id: Int64(20 + $0), score: 9 - Double($0)) }
        #expect(Ranking.adaptiveFusion(keywords: full, vectors: vectors, keywordCoverage: 0.25, depth: 10).keywordShare
                == Ranking.adaptiveFusion(keywords: full, vectors: vectors, depth: 10).keywordShare)
    }

    @Test func theRerankingBlendProtectsTheTopAndFollowsAClearVerdictBelow() {
        // A re-ranker that mildly prefers the last of ten cannot unseat the first stage's best…
        var scores = [Double](repeating: 0.5, count: 10)
        scores[9] = 0.55
        #expect(RerankingStage.blend(scores).first?.index == 0)
        // …but one that rates the fifth far above the rest moves it to the top, and one that
        // rates the first lowest of all moves it down.
        var verdict = [Double](repeating: 0.1, count: 10)
        verdict[4] = 0.99
        verdict[0] = 0
        let order = RerankingStage.blend(verdict).map(\.index)
        #expect(order.first == 4)
        #expect(order.firstIndex(of: 0)! > 0)
        // Scores: w·(n−r+1)/n + (1−w)·scaled, w 0.75 / 0.60 / 0.40 by rank band: of two, the
        // first stage's first keeps its place (0.75) against the re-ranker's pick (0.375 + 0.25).
        let two = RerankingStage.blend([0, 1])
        #expect(two.map(\.index) == [0, 1])
        #expect(abs(two[0].score - 0.75) < 1e-12 && abs(two[1].score - 0.625) < 1e-12)
        // Equal scores keep the first-stage order.
        #expect(RerankingStage.blend([3, 3, 3]).map(\.index) == [0, 1, 2])
        #expect(RerankingStage.blend([]).isEmpty)
    }

    @Test func turnsAreLiftedByTheTurnsAroundThem() {
        // Turns 1…5 of one conversation; 2 matches the query, 3 (its answer) barely, 9 is elsewhere.
        let neighbours: [Int64: [(id: Int64, distance: Int)]] = [
            2: [(1, 1), (3, 1), (4, 2)],
            3: [(2, 1), (4, 1), (1, 2), (5, 2)],
            9: [],
        ]
        let ordered: [(id: Int64, score: Double)] = [(2, 1.0), (9, 0.5), (3, 0.3)]
        let smoothed = Ranking.neighbourSmoothing(ordered, neighbours: neighbours, weights: [0.3, 0.15]) { _ in true }
        // 3: 0.3 + 0.3·1.0 = 0.6 passes 9 (0.5); 2: 1.0 + 0.3·0.3; 1 and 4 join: 1 = 0.3·1.0 + 0.15·0.3,
        // 4 = 0.3·0.3 + 0.15·1.0; 5 = 0.15·0.3.
        #expect(smoothed.map(\.id) == [2, 3, 9, 1, 4, 5])
        let scores = Dictionary(uniqueKeysWithValues: smoothed.map { ($0.id, $0.score) })
        #expect(abs(scores[2]! - 1.09) < 1e-12 && abs(scores[3]! - 0.6) < 1e-12 && abs(scores[1]! - 0.345) < 1e-12)
        #expect(abs(scores[4]! - 0.24) < 1e-12 && abs(scores[5]! - 0.045) < 1e-12 && scores[9] == 0.5)
        // Turns the filters leave out do not join; without turns, nothing changes.
        #expect(Ranking.neighbourSmoothing(ordered, neighbours: neighbours, weights: [0.3, 0.15]) { $0 != 1 && $0 != 5 }.map(\.id) == [2, 3, 9, 4])
        #expect(Ranking.neighbourSmoothing(ordered, neighbours: [:]) { _ in true }.map(\.id) == [2, 9, 3])
    }

    @Test func aQuestionThatNamesOneSpeakerLiftsThatSpeakersTurns() {
        let speakers: Set<String> = ["caroline", "melanie", "mary-ann"]
        #expect(Ranking.namedSpeaker(in: "When did Caroline go to the support group?", among: speakers) == "caroline")
        #expect(Ranking.namedSpeaker(in: "What did Mary Ann paint?", among: speakers) == "mary-ann")
        #expect(Ranking.namedSpeaker(in: "What do Caroline and Melanie share?", among: speakers) == nil)
        #expect(Ranking.namedSpeaker(in: "Where is Carolina?", among: speakers) == nil)
        // 0.2 of the best score (1.0) goes to Caroline's turns: 3 (0.95) passes 2 (1.0).
        let boosted = Ranking.speakerBoost([(2, 1.0), (3, 0.95), (4, 0.5)], speakers: [2: "melanie", 3: "caroline"], speaker: "caroline")
        #expect(boosted.map(\.id) == [3, 2, 4])
        #expect(abs(boosted[0].score - 1.15) < 1e-12)
    }

    @Test func aQuestionThatNamesADateLiftsTheTurnsSaidThen() {
        do {
            let date = NamedDate.find(in: "Who did Maria have dinner with on May 3, 2023?")
            let said = date?.matches("2023-05-03")   // true
            #expect(said == true)
        }
        #expect(NamedDate.find(in: "Who did Maria have dinner with on May 3, 2023?") == NamedDate(year: 2023, month: 5, day: 3))
        #expect(NamedDate.find(in: "What movie did Joanna watch on 1 May, 2022?") == NamedDate(year: 2022, month: 5, day: 1))
        #expect(NamedDate.find(in: "What did John attend in March 2023?") == NamedDate(year: 2023, month: 3))
        #expect(NamedDate.find(in: "When did Melanie go camping in June?") == NamedDate(month: 6))
        #expect(NamedDate.find(in: "What did Nate win on 9th October 2022?") == NamedDate(year: 2022, month: 10, day: 9))
        #expect(NamedDate.find(in: "Where did Joanna travel in 2022?") == NamedDate(year: 2022))
        #expect(NamedDate.find(in: "Що Марія робила у березні 2023?") == NamedDate(year: 2023, month: 3))
        // "may" the verb, "march" the verb and a bare number are no dates.
        #expect(NamedDate.find(in: "what may she march for with 2022 people") == nil)
        #expect(NamedDate.find(in: "What year did John start surfing?") == nil)
        #expect(NamedDate(month: 6).matches("2023-06-27") && !NamedDate(month: 6).matches("2023-07-01"))
        #expect(!NamedDate(year: 2023, month: 3).matches("2022-03-10") && !NamedDate(day: 1).matches("not a date"))
        // The same lift as a named speaker's: 0.2 of the best score.
        let dates: [Int64: String] = [2: "2023-05-02", 3: "2023-05-03"]
        let date = NamedDate(year: 2023, month: 5, day: 3)
        let boosted = Ranking.boost([(2, 1.0), (3, 0.95), (4, 0.5)], share: Ranking.namedDateShare) { dates[$0].map(date.matches) ?? false }
        #expect(boosted.map(\.id) == [3, 2, 4])
    }

    @Test func maximalMarginalRelevancePrefersVarietyWhenLambdaIsLow() {
        let vectors: [Int64: [Float]] = [1: [1, 0], 2: [0.99, 0.141], 3: [0, 1]]
        let candidates: [(id: Int64, relevance: Double)] = [(1, 0.9), (2, 0.85), (3, 0.5)]
        #expect(Ranking.maximalMarginalRelevance(candidates, vectors: vectors, lambda: 1, k: 3) == [1, 2, 3])
        #expect(Ranking.maximalMarginalRelevance(candidates, vectors: vectors, lambda: 0.5, k: 2) == [1, 3])
    }

    @Test func wordSetsCompareTheirWords() {
        let a = WordSets.words("Venus rules Taurus"), b = WordSets.words("Taurus is ruled by Venus")
        let similarity = WordSets.similarity(a, b)   // 2 shared of 6 words: 1/3
        #expect(similarity == 1.0 / 3)
        #expect(WordSets.similarity(WordSets.words("Venus rules Taurus and Libra"), WordSets.words("venus RULES taurus")) == 3.0 / 5)   // too few words for containment
    }

    @Test func nearDuplicatesCollapseToTheBestRanked() {
        let close: [Float] = [0.999, 0.0447]
        let vectors: [Int64: [Float]] = [1: [1, 0], 2: [0, 1], 3: close, 4: [0.6, 0.8], 5: close, 6: close, 7: [0.6, 0.8]]
        let items: [(id: Int64, text: String)] = [
            (1, "Venus rules love, beauty and money in the chart."),
            (2, "venus  RULES\nlove, beauty and MONEY in the chart."),    // the same text, folded: goes
            (3, "An other paragraph about the goddess of love."),          // a close vector, other words: stays
            (4, "other"),
            (5, "Venus rules love, beauty and money."),                    // adds nothing to 1: goes
            (6, "Venus rules love, beauty and money in the chart, and Taurus and Libra."),   // says more than 1: stays
            (7, "Venus rules love, beauty and money."),                    // its words, but a far vector: stays
        ]
        #expect(Ranking.collapseNearDuplicates(items, vectors: vectors) == [1, 3, 4, 6, 7])
        #expect(Ranking.collapseNearDuplicates(items, vectors: vectors, limit: 2) == [1, 3])
        // Without vectors (a keyword-only index) only the same text goes.
        #expect(Ranking.collapseNearDuplicates(items, vectors: [:]) == [1, 3, 4, 5, 6])
    }
}

@Suite struct LazyMarginalRelevanceTests {
    /// MMR as defined: every round, every candidate's highest similarity to every pick.
    static func plain(_ relevance: [Double], lambda: Double, k: Int, similarity: (Int, Int) -> Double) -> [Int] {
        var left = Array(relevance.indices), picked: [Int] = []
        while picked.count < k, !left.isEmpty {
            var best = left[0], bestValue = -Double.infinity
            for i in left {
                let redundancy = picked.map { similarity(i, $0) }.max() ?? 0
                let value = lambda * relevance[i] - (1 - lambda) * max(redundancy, 0)
                if value > bestValue { best = i; bestValue = value }
            }
            picked.append(best)
            left.removeAll { $0 == best }
        }
        return picked
    }

    @Test func picksWhatThePlainRulePicksWithFewerComparisons() {
        var rng = SeededGenerator(seed: 21)
        var lazyCalls = 0, incrementalCalls = 0
        for round in 0..<500 {
            let n = Int.random(in: 0...40, using: &rng)
            // Coarse values, so that ties happen.
            let relevance = (0..<n).map { _ in Double(Int.random(in: 0...8, using: &rng)) / 8 }
            var matrix = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
            for i in 0..<n { for j in 0..<i { matrix[i][j] = Double(Int.random(in: 0...4, using: &rng)) / 4; matrix[j][i] = matrix[i][j] } }
            let lambda = [0.0, 0.3, 0.7, 1.0].randomElement(using: &rng)!, k = Int.random(in: 0...12, using: &rng)
            let lazy = Ranking.maximalMarginalRelevance(relevance, lambda: lambda, k: k) { lazyCalls += 1; return matrix[$0][$1] }
            let defined = Self.plain(relevance, lambda: lambda, k: k) { matrix[$0][$1] }
            #expect(lazy == defined, "round \(round)")
            // Comparing every candidate left with each pick as it is made.
            incrementalCalls += (0..<defined.count).reduce(0) { $0 + n - 1 - $1 }
        }
        // (18,925 against 47,459 when written.)
        #expect(lazyCalls < incrementalCalls / 2)
    }
}

/// The examples of KBRetrieval's documentation, line for line.
@Suite struct RetrievalDocumentationExampleTests {
    @Test func rankingExamples() {
        let fused =
            Ranking.reciprocalRank([[3, 1], [1, 2]], weights: [1, 1])   // 1 first: 1/62 + 1/61
        #expect(fused.first?.id == 1)
        let picks =
            Ranking.maximalMarginalRelevance([1, 0.9, 0.5], lambda: 0.5, k: 2) { i, j in i + j == 1 ? 1 : 0 }   // [0, 2]
        #expect(picks == [0, 2])
        let adaptive =
            Ranking.adaptiveFusion(keywords: [(1, 9), (2, 1)], vectors: [(2, 0.9), (1, 0.8), (3, 0.7)], depth: 50)   // 1, 2, 3
        #expect(adaptive.fused.map(\.id) == [1, 2, 3])
    }

    @Test func conversationPlanExample() {
        let plan = ConversationPlan.queries(turn: "And when does it come back?",
                                            history: [ConversationTurn(.user, "What does Saturn stand for?")], use: .fused)
        // [("And when does it come back?", 1), ("What does Saturn stand for?\nAnd when does it come back?", 4)]
        #expect(plan == [PlannedQuery("And when does it come back?", weight: 1),
                         PlannedQuery("What does Saturn stand for?\nAnd when does it come back?", weight: 4)])
    }
}

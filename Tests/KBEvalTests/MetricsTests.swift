import Foundation
import KBCore
import Testing
@testable import KBEval

@Suite struct MetricsTests {
    // Graded judgements: d1 = 3, d2 = 2, d4 = 1, d3 judged not relevant.
    let qrels = ["d1": 3, "d2": 2, "d3": 0, "d4": 1]
    let ranking = ["d3", "d1", "d5", "d2", "d4"]

    @Test func ndcgUsesLinearGainAndTheIdealRankingFromTheQrels() {
        // DCG = 3/log2(3) + 2/log2(5) + 1/log2(6); IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4).
        let dcg = 3 / log2(3.0) + 2 / log2(5.0) + 1 / log2(6.0)
        let idcg = 3.0 + 2 / log2(3.0) + 1 / 2.0
        #expect(abs(Metrics.ndcg(ranking, qrels, at: 5) - dcg / idcg) < 1e-12)
        #expect(abs(Metrics.ndcg(ranking, qrels, at: 5) - 0.6596158) < 1e-6)
        // Cut at 2: only d1 counts; the ideal is cut at 2 too.
        #expect(abs(Metrics.ndcg(ranking, qrels, at: 2) - (3 / log2(3.0)) / (3 + 2 / log2(3.0))) < 1e-12)
    }

    @Test func reciprocalRankIsOfTheFirstRelevantDocumentWithinTheCut() {
        #expect(Metrics.reciprocalRank(ranking, qrels, at: 10) == 0.5)
        #expect(Metrics.reciprocalRank(ranking, qrels, at: 1) == 0)
    }

    @Test func recallCountsRelevantDocumentsFound() {
        #expect(abs(Metrics.recall(ranking, qrels, at: 2) - 1.0 / 3) < 1e-12)
        #expect(Metrics.recall(ranking, qrels, at: 100) == 1)
    }

    @Test func averagePrecisionDividesByAllRelevantDocuments() {
        // Relevant at ranks 2, 4, 5: (1/2 + 2/4 + 3/5) / 3.
        #expect(abs(Metrics.averagePrecision(ranking, qrels, at: 100) - 1.6 / 3) < 1e-12)
        // Cut at 4: (1/2 + 2/4) / 3 — d4 is still counted in the denominator.
        #expect(abs(Metrics.averagePrecision(ranking, qrels, at: 4) - 1.0 / 3) < 1e-12)
    }

    @Test func tiesAreBrokenAsTrecEvalDoesByDecreasingDocumentID() {
        let run = [Metrics.Scored("a", 1), Metrics.Scored("c", 2), Metrics.Scored("b", 1)]
        #expect(Metrics.ranked(run) == ["c", "b", "a"])
    }

    @Test func aQueryWithoutRelevantDocumentsIsNotScorable() {
        #expect(!Metrics.hasRelevant(["x": 0]))
        #expect(Metrics.ndcg(["x"], ["x": 0], at: 10) == 0)
    }
}

@Suite struct BEIRLoadingTests {
    func folder(_ files: [String: String]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-beir-\(UUID().uuidString)")
        for (name, text) in files {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return root.path
    }

    @Test func loadsCorpusQueriesAndGradedQrelsWithAHeader() throws {
        let path = try folder([
            "corpus.jsonl": "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"one\"}\n{\"_id\": 2, \"text\": \"two\"}\n",
            "queries.jsonl": "{\"_id\": \"q1\", \"text\": \"first\"}\n{\"_id\": \"q2\", \"text\": \"unjudged\"}\n",
            "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\t2\t0\n",
        ])
        let dataset = try BEIRDataset.load(from: path, split: "test")
        #expect(dataset.documents.map(\.id) == ["d1", "2"])
        #expect(dataset.queries.map(\.id) == ["q1"])
        #expect(dataset.qrels == ["q1": ["d1": 2, "2": 0]])
    }

    @Test func trecStyleQrelsWithAnIterationColumnAreRead() throws {
        #expect(try BEIRDataset.parseQrels("1 0 d7 1\n", file: "q") == ["1": ["d7": 1]])
    }

    @Test func aMalformedQrelsLineIsNamedByNumber() throws {
        let error = try #require(throws: KBError.self) { try BEIRDataset.parseQrels("q1\td1\t1\nq2 d2\n", file: "qrels/test.tsv") }
        #expect(error.message.hasPrefix("qrels/test.tsv line 2:"))
    }

    @Test func aMalformedJSONLineIsNamedByNumber() throws {
        let path = try folder([
            "corpus.jsonl": "{\"_id\": \"d1\", \"text\": \"one\"}\n{oops\n",
            "queries.jsonl": "{\"_id\": \"q1\", \"text\": \"first\"}\n",
            "qrels/test.tsv": "q1\td1\t1\n",
        ])
        let error = try #require(throws: KBError.self) { try BEIRDataset.load(from: path, split: "test") }
        #expect(error.message.hasSuffix("corpus.jsonl line 2: not a JSON object."))
    }

    @Test func aMissingSplitListsTheAvailableOnes() throws {
        let path = try folder(["qrels/train.tsv": "q\td\t1\n", "queries.jsonl": "", "corpus.jsonl": ""])
        let error = try #require(throws: KBError.self) { try BEIRDataset.load(from: path, split: "test") }
        #expect(error.message.contains("Available splits: train"))
    }
}

@Suite struct EvaluationReportTests {
    func report(ndcg: Double) -> EvaluationReport {
        EvaluationReport(dataset: "tiny", split: "test", documents: 3, queries: 2, skippedQueries: 1, embedder: "e",
                         chunked: false, depth: 100, modes: [
                            .init(mode: "hybrid", metrics: ["ndcg@10": ndcg, "mrr@10": 0.5, "recall@10": 1, "recall@100": 1, "map@100": 0.4],
                                  latencyP50Milliseconds: 1, latencyP95Milliseconds: 2,
                                  worst: [.init(id: "q1", text: "a | b", ndcgAt10: 0.1, expected: ["d1"], got: ["d2"])]),
                         ])
    }

    @Test func theGateFailsOnlyBelowTheThreshold() throws {
        let gate = [try EvaluationReport.Threshold(parsing: "NDCG@10=0.6")]
        #expect(report(ndcg: 0.6).failures(gate).isEmpty)
        #expect(report(ndcg: 0.59).failures(gate) == ["hybrid: ndcg@10 = 0.5900 is below 0.6000"])
        #expect(throws: KBError.self) { try EvaluationReport.Threshold(parsing: "precision@3=0.1") }
        #expect(throws: KBError.self) { try EvaluationReport.Threshold(parsing: "ndcg@10") }
    }

    @Test func deltasAreAgainstTheBaselinePerModeAndMetric() {
        let deltas = report(ndcg: 0.7).deltas(against: report(ndcg: 0.5))
        #expect(abs(deltas["hybrid"]!["ndcg@10"]! - 0.2) < 1e-12)
        #expect(report(ndcg: 0.7).table(baseline: report(ndcg: 0.5)).contains("0.7000 (+0.2000)"))
    }

    @Test func theMarkdownReportHasTheTableTheWorstQueriesAndTheChart() {
        let md = report(ndcg: 0.7).markdown()
        #expect(md.contains("| hybrid | 0.7000 | 0.5000 |"))
        #expect(md.contains("| q1: a \\| b | 0.1000 | d1 | d2 |"))
        #expect(md.contains("![nDCG@10 per mode](ndcg.svg)"))
        let svg = report(ndcg: 0.7).svgChart()
        #expect(svg.hasPrefix("<svg") && svg.contains(">hybrid</text>") && svg.contains(">0.7000</text>"))
    }

    @Test func runFileLinesAreTrecFormatted() {
        #expect(EvaluationReport.runFileLines(query: "q1", ranking: [.init("d1", 0.5), .init("d2", 0.25)], tag: "kb-hybrid")
                == ["q1 Q0 d1 1 0.500000 kb-hybrid", "q1 Q0 d2 2 0.250000 kb-hybrid"])
    }

    @Test func reportsRoundTripThroughJSON() throws {
        let original = report(ndcg: 0.42)
        #expect(try JSONDecoder().decode(EvaluationReport.self, from: JSONEncoder().encode(original)) == original)
    }
}

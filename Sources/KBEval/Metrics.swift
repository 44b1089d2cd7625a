import Foundation

/// Retrieval metrics as trec_eval (and pytrec_eval) define them. Pure functions.
///
/// A run is a list of (document id, score); it is ranked by score, highest first, ties broken
/// as trec_eval does (document id in decreasing lexicographic order). Relevant means grade > 0.
public enum Metrics {
    public struct Scored: Sendable, Hashable {
        public var id: String
        public var score: Double
        public init(_ id: String, _ score: Double) {
            self.id = id
            self.score = score
        }
    }

    /// The ranking trec_eval would read from a run file.
    public static func ranked(_ run: [Scored]) -> [String] {
        run.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id > $1.id }.map(\.id)
    }

    /// nDCG@k with linear gain (the grade) and log2(rank + 1) discount; the ideal ranking comes
    /// from all the query's judgements (`ndcg_cut_k`).
    public static func ndcg(_ ranking: [String], _ qrels: [String: Int], at k: Int) -> Double {
        var dcg = 0.0
        for (i, id) in ranking.prefix(k).enumerated() {
            let gain = Double(max(0, qrels[id] ?? 0))
            if gain > 0 { dcg += gain / log2(Double(i + 2)) }
        }
        let ideal = qrels.values.filter { $0 > 0 }.sorted(by: >).prefix(k)
        var idcg = 0.0
        for (i, grade) in ideal.enumerated() { idcg += Double(grade) / log2(Double(i + 2)) }
        return idcg > 0 ? dcg / idcg : 0
    }

    /// Reciprocal rank of the first relevant document within the first k (0 if none).
    public static func reciprocalRank(_ ranking: [String], _ qrels: [String: Int], at k: Int) -> Double {
        for (i, id) in ranking.prefix(k).enumerated() where (qrels[id] ?? 0) > 0 { return 1 / Double(i + 1) }
        return 0
    }

    /// Share of the relevant documents found within the first k (`recall_k`).
    public static func recall(_ ranking: [String], _ qrels: [String: Int], at k: Int) -> Double {
        let relevant = qrels.values.filter { $0 > 0 }.count
        guard relevant > 0 else { return 0 }
        let found = ranking.prefix(k).filter { (qrels[$0] ?? 0) > 0 }.count
        return Double(found) / Double(relevant)
    }

    /// Average precision over the first k, divided by all relevant documents (`map_cut_k`).
    public static func averagePrecision(_ ranking: [String], _ qrels: [String: Int], at k: Int) -> Double {
        let relevant = qrels.values.filter { $0 > 0 }.count
        guard relevant > 0 else { return 0 }
        var hits = 0
        var sum = 0.0
        for (i, id) in ranking.prefix(k).enumerated() where (qrels[id] ?? 0) > 0 {
            hits += 1
            sum += Double(hits) / Double(i + 1)
        }
        return sum / Double(relevant)
    }

    /// 1 when the first document carries the query's highest grade — the document the question
    /// is about, not only one that helps — else 0 (`success_1` when every judgement has one grade).
    public static func hitAtOne(_ ranking: [String], _ qrels: [String: Int]) -> Double {
        guard let first = ranking.first, let best = qrels.values.max(), best > 0 else { return 0 }
        return qrels[first] == best ? 1 : 0
    }

    /// The metrics kb reports, for one query.
    public static func all(_ ranking: [String], _ qrels: [String: Int]) -> [String: Double] {
        [
            "ndcg@10": ndcg(ranking, qrels, at: 10),
            "mrr@10": reciprocalRank(ranking, qrels, at: 10),
            "recall@10": recall(ranking, qrels, at: 10),
            "recall@100": recall(ranking, qrels, at: 100),
            "map@100": averagePrecision(ranking, qrels, at: 100),
            "hit@1": hitAtOne(ranking, qrels),
        ]
    }

    public static let names = ["ndcg@10", "mrr@10", "recall@10", "recall@100", "map@100", "hit@1"]

    /// Whether a query can be scored: it needs at least one relevant judgement.
    public static func hasRelevant(_ qrels: [String: Int]) -> Bool { qrels.values.contains { $0 > 0 } }

    /// The p-th percentile (0…1) by nearest rank.
    public static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
    }
}

import Foundation

/// An in-process second stage that needs no model weights beyond a few numbers: a logistic
/// ranker over what the first stage knows of each candidate of a hybrid search (each ranking's
/// scaled score and reciprocal rank, the adaptive fusion's keyword share and score, which
/// rankings found it), trained on SciFact train and LoCoMo conversations 0–4 by
/// `scripts/learned_fusion_study.py` and shipped as `Model.shipped` (versioned). Off by default:
/// it does not measure better than adaptive fusion on the sets it was not trained on
/// (docs/search.md); `--second-stage learned` runs it. Lists without fusion signals (keyword or
/// vector search alone, or a conversation's planned queries fused) keep their order.
public struct LearnedRankerStage: RetrievalStage {
    /// A trained logistic ranker: features are standardised (`(x − mean) / spread`) and weighed.
    public struct Model: Sendable, Hashable {
        public var version: String
        public var mean: [Double]
        public var spread: [Double]
        public var weights: [Double]

        public init(version: String, mean: [Double], spread: [Double], weights: [Double]) {
            self.version = version
            self.mean = mean
            self.spread = spread
            self.weights = weights
        }

        /// The ranker's score of a candidate's features.
        public func score(_ features: [Double]) -> Double {
            var sum = 0.0
            for index in features.indices where index < weights.count {
                sum += weights[index] * (features[index] - mean[index]) / spread[index]
            }
            return sum
        }
    }

    public let model: Model
    /// Candidates of each list it reorders. The default is 40.
    public let depth: Int

    public init(model: Model = .shipped, depth: Int = 40) {
        self.model = model
        self.depth = max(1, depth)
    }

    public var name: String { model.version }
    public var candidateDepth: Int? { depth }

    /// The features of one candidate, in the model's order (as the training script computes them).
    public static func features(_ signals: FusionSignals) -> [Double] {
        let (keyword, vector, share) = (signals.keyword, signals.vector, signals.keywordShare)
        return [keyword, vector, share * keyword + (1 - share) * vector,
                1 / (60 + Double(signals.keywordRank ?? 1000)), 1 / (60 + Double(signals.vectorRank ?? 1000)),
                share * keyword, (1 - share) * vector, signals.keywordRank == nil ? 0 : 1, signals.vectorRank == nil ? 0 : 1,
                keyword * vector]
    }

    public func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] {
        let head = Array(candidates.prefix(depth))
        guard head.count > 1, head.allSatisfy({ $0.signals != nil }) else { return candidates }
        let scored = head.enumerated().map { index, candidate in
            (candidate: candidate, score: model.score(Self.features(candidate.signals!)), index: index)
        }
        let ordered = scored.sorted { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }
        return ordered.map { var candidate = $0.candidate; candidate.score = $0.score; return candidate } + candidates.dropFirst(head.count)
    }
}

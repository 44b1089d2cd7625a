public import KBCore

/// The second stage that asks a `Reranker` (a cross-encoder behind `/v1/rerank`, say) about the
/// first `depth` candidates of each list and blends its scores with the first stage's order —
/// never substituting them blindly: a re-ranker that is weak on a kind of text (conversations,
/// another language) cannot throw away what the first stage found.
///
/// The blend, for the candidate at first-stage rank `r` of `n` (`RerankingStage.blend`):
///
/// - first-stage score `p(r) = (n − r + 1) / n` (1 for the first, `1/n` for the last);
/// - re-ranker score `s`, scaled to 0…1 within the list (all 1 when they are equal);
/// - the first stage's weight `w(r)`: 0.75 for ranks 1–3, 0.60 for ranks 4–10, 0.40 below —
///   the re-ranker must be sure to move a candidate the first stage put on top, and has a
///   freer hand further down, where the first stage is least sure;
/// - `score = w(r)·p(r) + (1 − w(r))·s`, best first (ties keep the first-stage order).
///
/// Candidates past `depth` keep their first-stage order after the re-ranked ones. When the
/// re-ranker fails, the retrieval keeps the first-stage order and marks the answer `degraded`.
///
/// ```swift
/// kb.useRetrievalStage(RerankingStage(reranker: reranker, depth: 40))   // reranker: an HTTPReranker, say
/// ```
public struct RerankingStage: RetrievalStage {
    public let reranker: any Reranker
    /// Candidates of each list the re-ranker scores. The default is 40.
    public let depth: Int
    /// The first stage's weight by rank band: ranks 1…3, 4…10 and below.
    public let firstStageWeights: (top: Double, next: Double, rest: Double)

    public static let defaultDepth = 40
    public static let defaultWeights = (top: 0.75, next: 0.60, rest: 0.40)

    public init(reranker: any Reranker, depth: Int = RerankingStage.defaultDepth,
                firstStageWeights: (top: Double, next: Double, rest: Double) = RerankingStage.defaultWeights) {
        self.reranker = reranker
        self.depth = max(1, depth)
        self.firstStageWeights = firstStageWeights
    }

    public var name: String { reranker.name }
    public var candidateDepth: Int? { depth }

    public func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] {
        let head = Array(candidates.prefix(depth))
        guard head.count > 1 else { return candidates }
        let scores = try await reranker.relevance(of: head.map(\.text), to: query)
        guard scores.count == head.count else {
            throw KBError(.embedding, "\(reranker.name) returned \(scores.count) scores for \(head.count) documents.")
        }
        let order = Self.blend(scores, weights: firstStageWeights)
        return order.map { var candidate = head[$0.index]; candidate.score = $0.score; return candidate } + candidates.dropFirst(head.count)
    }

    /// The blended order of candidates given in first-stage order with the re-ranker's scores
    /// (see the type's note): indices into `scores` with their blended scores, best first. Pure.
    public static func blend(_ scores: [Double], weights: (top: Double, next: Double, rest: Double) = defaultWeights)
        -> [(index: Int, score: Double)] {
        let n = scores.count
        guard n > 0 else { return [] }
        let low = scores.min()!, high = scores.max()!
        let blended = scores.enumerated().map { index, score -> (index: Int, score: Double) in
            let rank = index + 1
            let position = Double(n - rank + 1) / Double(n)
            let scaled = high > low ? (score - low) / (high - low) : 1
            let weight = rank <= 3 ? weights.top : rank <= 10 ? weights.next : weights.rest
            return (index, weight * position + (1 - weight) * scaled)
        }
        return blended.sorted { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }
    }
}

/// Pure ranking arithmetic: reciprocal rank fusion, maximal marginal relevance, near-duplicates.
public enum RankFusion {
    public struct Fused: Sendable, Hashable {
        public var id: Int64
        public var score: Double
        /// The best (smallest) 1-based rank the id had in any list.
        public var bestRank: Int
    }

    /// Reciprocal rank fusion: `score(d) = Σᵢ wᵢ / (k + rankᵢ(d))`, ranks from 1; a list that
    /// does not contain `d` adds nothing. Best first; ties go to the better best rank, then the
    /// smaller id.
    ///
    /// ```swift
    /// RankFusion.reciprocalRank([[3, 1], [1, 2]], weights: [1, 1])   // 1 first: 1/62 + 1/61
    /// ```
    public static func reciprocalRank(_ lists: [[Int64]], weights: [Double], k: Double = 60) -> [Fused] {
        precondition(lists.count == weights.count, "one weight per list")
        var fused: [Int64: Fused] = [:]
        for (list, weight) in zip(lists, weights) {
            for (index, id) in list.enumerated() {
                let rank = index + 1
                let add = weight / (k + Double(rank))
                if var entry = fused[id] {
                    entry.score += add
                    entry.bestRank = min(entry.bestRank, rank)
                    fused[id] = entry
                } else {
                    fused[id] = Fused(id: id, score: add, bestRank: rank)
                }
            }
        }
        return fused.values.sorted {
            $0.score != $1.score ? $0.score > $1.score : $0.bestRank != $1.bestRank ? $0.bestRank < $1.bestRank : $0.id < $1.id
        }
    }

    /// Maximal marginal relevance: picks, one at a time, the candidate maximising
    /// `λ·relevance − (1−λ)·max similarity to those already picked`. Relevance is rescaled to
    /// 0…1 within the candidates; similarity is the inner product of (normalised) vectors. A
    /// candidate without a vector counts as dissimilar to everything. Returns ids in pick order.
    public static func maximalMarginalRelevance(
        _ candidates: [(id: Int64, relevance: Double)], vectors: [Int64: [Float]], lambda: Double, k: Int
    ) -> [Int64] {
        guard !candidates.isEmpty, k > 0 else { return [] }
        let relevances = candidates.map(\.relevance)
        let low = relevances.min()!, high = relevances.max()!
        let span = high - low
        var remaining = candidates.map { (id: $0.id, relevance: span > 0 ? ($0.relevance - low) / span : 1) }
        var picked: [Int64] = []
        var maxSimilarity = [Double](repeating: -.infinity, count: remaining.count)
        while picked.count < k, !remaining.isEmpty {
            var best = 0
            var bestValue = -Double.infinity
            for (i, candidate) in remaining.enumerated() {
                let penalty = picked.isEmpty ? 0 : max(0, maxSimilarity[i])
                let value = lambda * candidate.relevance - (1 - lambda) * penalty
                if value > bestValue { bestValue = value; best = i }
            }
            let chosen = remaining.remove(at: best)
            maxSimilarity.remove(at: best)
            picked.append(chosen.id)
            if let v = vectors[chosen.id] {
                for (i, candidate) in remaining.enumerated() {
                    if let w = vectors[candidate.id] { maxSimilarity[i] = max(maxSimilarity[i], Double(dot(v, w))) }
                }
            }
        }
        return picked
    }

    /// Drops items that repeat an earlier one: the same text once whitespace and case are
    /// folded, or vectors at least `threshold` similar. Keeps the first (best-ranked), and stops
    /// once `limit` items are kept (the vector check costs one dot product per kept item).
    public static func collapseNearDuplicates(
        _ items: [(id: Int64, text: String)], vectors: [Int64: [Float]], threshold: Float = 0.98, limit: Int = .max
    ) -> [Int64] {
        var keptTexts = Set<UInt64>()
        var keptVectors: [[Float]] = []
        var kept: [Int64] = []
        for item in items {
            if kept.count >= limit { break }
            let folded = foldedHash(item.text)
            if keptTexts.contains(folded) { continue }
            if let v = vectors[item.id], keptVectors.contains(where: { dot($0, v) >= threshold }) { continue }
            keptTexts.insert(folded)
            if let v = vectors[item.id] { keptVectors.append(v) }
            kept.append(item.id)
        }
        return kept
    }

    /// FNV-1a hash of the text's UTF-8 bytes with ASCII letters lower-cased and runs of ASCII
    /// whitespace folded to one space (trimmed at both ends). Cheap: no Unicode tables.
    static func foldedHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf29ce484222325
        var pendingSpace = false
        var started = false
        for var byte in text.utf8 {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C {
                pendingSpace = started
                continue
            }
            if pendingSpace {
                hash = (hash ^ 0x20) &* 0x100000001b3
                pendingSpace = false
            }
            if byte >= 0x41 && byte <= 0x5A { byte += 0x20 }
            hash = (hash ^ UInt64(byte)) &* 0x100000001b3
            started = true
        }
        return hash
    }

    static func dot(_ a: [Float], _ b: [Float]) -> Float {
        var s: Float = 0
        for i in 0..<min(a.count, b.count) { s += a[i] * b[i] }
        return s
    }
}

/// Pure ranking arithmetic: reciprocal rank fusion, maximal marginal relevance, near-duplicates.
/// Search and context assembly both choose with these; only what "similar" means differs (vectors
/// and folded text for search candidates, word sets for context items).
public enum Ranking {
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
    /// Ranking.reciprocalRank([[3, 1], [1, 2]], weights: [1, 1])   // 1 first: 1/62 + 1/61
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

    /// Adaptive score fusion of a keyword and a vector ranking (best first), the fusion hybrid
    /// search runs by default, over each ranking's first `depth` entries (the query's candidates):
    ///
    /// 1. each ranking's scores are scaled to 0…1 — the best to 1, the lowest of its first `depth`
    ///    to 0; a keyword list shorter than `depth` scales from 0 instead (it holds every snippet
    ///    that matches a word at all, and a snippet that matches none scores 0);
    /// 2. each ranking's confidence is how far its best stands above the next nine:
    ///    `1 − mean(scaled scores of ranks 2…10)`, a short keyword list's missing ranks counting
    ///    0 (0 for an empty list); a short keyword list's is multiplied by `keywordCoverage`, the
    ///    largest share of the query's words (weighed by idf) one of its first ten snippets holds
    ///    (`KeywordCoverage`): a few snippets that hold one word of the question each stand far
    ///    above the missing rest whether or not they answer it;
    /// 3. the keyword share is `α = wₖ·cₖ / (wₖ·cₖ + wᵥ·cᵥ)` with the query's weights (`wₖ/(wₖ+wᵥ)`
    ///    when both confidences are 0), and a snippet scores `α·keyword + (1−α)·vector`, a ranking
    ///    that missed it adding 0;
    /// 4. to that each ranking adds a little for the snippet's place in it, whatever the scores:
    ///    `λ/2 · 61/(60 + rank)` (`rankShare` λ, 1 for a snippet first in both rankings), and the
    ///    sum is divided by `1 + λ` to stay within 0…1. Scores alone let a flat ranking's small
    ///    differences reorder the other ranking's near-ties; the places keep each ranking's order
    ///    in the sum.
    ///
    /// On conversations, where every turn is much like every other to a small embedder, the
    /// vector ranking is flat and the keyword ranking leads; on a question the words miss, the
    /// vector ranking leads — per query, not by a fixed weight. Ties go to the better best rank,
    /// then the smaller id. Returns the fused list and α.
    ///
    /// A ranking read deeper than `depth` (a search asking for more hits than candidates, or
    /// grouping) adds its further entries after every fused one, ordered by their best rank, and
    /// changes nothing above them: the first hits do not depend on how many are asked for.
    ///
    /// ```swift
    /// Ranking.adaptiveFusion(keywords: [(1, 9), (2, 1)], vectors: [(2, 0.9), (1, 0.8), (3, 0.7)], depth: 50)   // 1, 2, 3
    /// ```
    public static func adaptiveFusion(
        keywords: [(id: Int64, score: Double)], vectors: [(id: Int64, score: Double)],
        keywordWeight: Double = 1, vectorWeight: Double = 1, keywordCoverage: Double = 1, depth: Int
    ) -> (fused: [Fused], keywordShare: Double) {
        let keywordsComplete = keywords.count < depth
        let keywordScaled = scaled(keywords, floor: keywordsComplete ? 0 : nil, within: depth)
        let vectorScaled = scaled(vectors, floor: nil, within: depth)
        let weighted = (keywordWeight * confidence(keywordScaled.prefix(depth), complete: keywordsComplete) * (keywordsComplete ? min(max(keywordCoverage, 0), 1) : 1),
                        vectorWeight * confidence(vectorScaled.prefix(depth), complete: false))
        let total = weighted.0 + weighted.1
        let share = total > 0 ? weighted.0 / total
            : (keywordWeight + vectorWeight > 0 ? keywordWeight / (keywordWeight + vectorWeight) : 0.5)
        // Each snippet's scaled scores and places, summed as `vector + α·(keyword − vector)`: a
        // snippet both rankings score alike gets that score exactly, whatever α (two snippets at
        // the top of their lists tie, and the tie is broken by rank and id, not by rounding).
        var parts: [Int64: (keyword: Double, vector: Double, places: Double, bestRank: Int)] = [:]
        for (list, isKeyword) in [(keywordScaled, true), (vectorScaled, false)] {
            for (index, entry) in list.enumerated() {
                var part = parts[entry.id] ?? (0, 0, 0, index + 1)
                if index < depth {
                    if isKeyword { part.keyword = entry.score } else { part.vector = entry.score }
                    part.places += rankShare / 2 * (rankK + 1) / (rankK + Double(index + 1))
                }
                part.bestRank = min(part.bestRank, index + 1)
                parts[entry.id] = part
            }
        }
        let fused = parts.map { id, part in
            Fused(id: id, score: (part.vector + share * (part.keyword - part.vector) + part.places) / (1 + rankShare), bestRank: part.bestRank)
        }
        let ordered = fused.sorted {
            $0.score != $1.score ? $0.score > $1.score : $0.bestRank != $1.bestRank ? $0.bestRank < $1.bestRank : $0.id < $1.id
        }
        return (ordered, share)
    }

    /// What a snippet's place in each ranking adds in `adaptiveFusion` (λ): chosen on the tuning
    /// sets (SciFact train, LoCoMo conversations 0–4) among 0, 0.1, 0.15, 0.2, 0.3 — the most
    /// SciFact gains for LoCoMo's recall@10 unchanged within 0.001 — and checked on the others
    /// (docs/search.md, *Fusion*).
    public static let rankShare = 0.15
    /// How many of a short keyword list's first snippets are asked how much of the question they
    /// hold (`adaptiveFusion`'s `keywordCoverage`): the ten its confidence reads.
    public static let coverageDepth = 10
    /// The places' constant in `adaptiveFusion`, reciprocal rank fusion's.
    static let rankK = 60.0

    /// What each ranking said of every candidate, scaled as `adaptiveFusion` scales them.
    public static func fusionSignals(
        keywords: [(id: Int64, score: Double)], vectors: [(id: Int64, score: Double)], keywordShare: Double, depth: Int
    ) -> [Int64: FusionSignals] {
        let keywordScaled = scaled(keywords, floor: keywords.count < depth ? 0 : nil, within: depth)
        let vectorScaled = scaled(vectors, floor: nil, within: depth)
        var signals: [Int64: FusionSignals] = [:]
        for (index, entry) in keywordScaled.enumerated() where signals[entry.id] == nil {
            signals[entry.id] = FusionSignals(keyword: entry.score, keywordRank: index + 1, vector: 0, vectorRank: nil, keywordShare: keywordShare)
        }
        for (index, entry) in vectorScaled.enumerated() {
            var known = signals[entry.id] ?? FusionSignals(keyword: 0, keywordRank: nil, vector: 0, vectorRank: nil, keywordShare: keywordShare)
            if known.vectorRank == nil {
                known.vector = entry.score
                known.vectorRank = index + 1
            }
            signals[entry.id] = known
        }
        return signals
    }

    /// Scores scaled to 0…1: the best to 1, `floor` (or the lowest of the first `within`) to 0,
    /// those further down not below 0; all 1 when they are equal.
    static func scaled(_ list: [(id: Int64, score: Double)], floor: Double?, within: Int = .max) -> [(id: Int64, score: Double)] {
        let read = list.prefix(max(1, within)).map(\.score)
        guard let high = read.max() else { return [] }
        let low = min(floor ?? high, read.min() ?? high)
        return list.map { ($0.id, high > low ? max(0, ($0.score - low) / (high - low)) : 1) }
    }

    /// How far a scaled list's best stands above ranks 2…10: 1 − their mean. In a `complete`
    /// list (every snippet that scores above 0), ranks it does not reach count as 0.
    static func confidence(_ scaled: ArraySlice<(id: Int64, score: Double)>, complete: Bool) -> Double {
        guard !scaled.isEmpty else { return 0 }
        let next = scaled.dropFirst().prefix(9).map(\.score)
        let count = complete ? 9 : next.count
        return count == 0 ? 1 : 1 - next.reduce(0, +) / Double(count)
    }

    /// How much a turn of a conversation takes from its neighbours' scores: the best turn next to
    /// it adds 0.5 of its score, the best two places away 0.25 (set on LoCoMo's conversations 0–4:
    /// 0.3 and 0.15 when fusion read a hundred candidates; over a search's fifty, recall@10 rose
    /// with both and levelled off around 0.5 and 0.25, docs/search.md, *Conversations*).
    public static let turnNeighbourWeights = [0.5, 0.25]

    /// Turns of a conversation found by the turns around them: a question is often answered in
    /// the turn after the one that shares its words ("What did you paint?" — "A sunset."). Each
    /// candidate scores `score + Σₖ wₖ·(best score among the candidates k places away)` (a
    /// negative score counting 0), and the turns next to candidates join the list (those
    /// `admits` lets through) with what their neighbours give them. `neighbours` holds, for the
    /// candidates that are turns, the turns up to `weights.count` places away. Best first; ties
    /// keep the candidates' order, joined turns after them.
    public static func neighbourSmoothing(
        _ ordered: [(id: Int64, score: Double)], neighbours: [Int64: [(id: Int64, distance: Int)]],
        weights: [Double] = turnNeighbourWeights, admits: (Int64) -> Bool
    ) -> [(id: Int64, score: Double)] {
        guard !neighbours.isEmpty, !weights.isEmpty else { return ordered }
        var score: [Int64: Double] = [:]
        var place: [Int64: Int] = [:]
        for (index, entry) in ordered.enumerated() where score[entry.id] == nil {
            score[entry.id] = entry.score
            place[entry.id] = index
        }
        // best[n][k-1]: the best score among the candidates k places from n.
        var best: [Int64: [Double]] = [:]
        for (id, around) in neighbours {
            guard let own = score[id] else { continue }
            for (other, distance) in around where distance >= 1 && distance <= weights.count {
                var row = best[other] ?? [Double](repeating: 0, count: weights.count)
                row[distance - 1] = max(row[distance - 1], max(0, own))
                best[other] = row
            }
        }
        for other in best.keys.sorted() where score[other] == nil && admits(other) { place[other] = ordered.count + place.count }
        let rescored = place.map { id, order -> (id: Int64, score: Double, order: Int) in
            let lift = zip(weights, best[id] ?? []).reduce(0) { $0 + $1.0 * $1.1 }
            return (id, (score[id] ?? 0) + lift, order)
        }
        return rescored.sorted { $0.score != $1.score ? $0.score > $1.score : $0.order < $1.order }.map { ($0.id, $0.score) }
    }

    /// How much a turn by the speaker a query names gains: this share of the list's best score
    /// (set on LoCoMo's conversations 0–4, where 96 % of the evidence for a question that names
    /// one speaker is that speaker's: 0.1 when fusion read a hundred candidates, 0.2 over fifty).
    public static let namedSpeakerShare = 0.2

    /// How much a turn said on the date a query names gains: this share of the list's best score
    /// (the speaker's share, not tuned on its own).
    public static let namedDateShare = namedSpeakerShare

    /// The one speaker among `speakers` (tag values: lower case, `-` for spaces) that `query`
    /// names as a word, or nil when it names none or several.
    public static func namedSpeaker(in query: String, among speakers: Set<String>) -> String? {
        let words = query.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "'" && $0 != "’" }.map(String.init)
        let text = " " + words.joined(separator: " ") + " "
        let named = speakers.filter { speaker in
            let name = speaker.replacingOccurrences(of: "-", with: " ")
            return !name.isEmpty && text.contains(" " + name + " ")
        }
        return named.count == 1 ? named.first : nil
    }

    /// Turns by `speaker` gain `share` of the list's best score. Best first; ties keep the order.
    public static func speakerBoost(_ ordered: [(id: Int64, score: Double)], speakers: [Int64: String], speaker: String,
                                    share: Double = namedSpeakerShare) -> [(id: Int64, score: Double)] {
        boost(ordered, share: share) { speakers[$0] == speaker }
    }

    /// The entries `lifted` picks gain `share` of the list's best score. Best first; ties keep the order.
    public static func boost(_ ordered: [(id: Int64, score: Double)], share: Double,
                             where lifted: (Int64) -> Bool) -> [(id: Int64, score: Double)] {
        let lift = share * max(0, ordered.map(\.score).max() ?? 0)
        let boosted = ordered.enumerated().map { index, entry in
            (id: entry.id, score: entry.score + (lifted(entry.id) ? lift : 0), order: index)
        }
        return boosted.sorted { $0.score != $1.score ? $0.score > $1.score : $0.order < $1.order }.map { ($0.id, $0.score) }
    }

    /// Maximal marginal relevance, the one implementation every caller uses: picks, one at a
    /// time, the candidate maximising `λ·relevance − (1−λ)·(its highest similarity to those
    /// already picked, at least 0)`; ties go to the earlier candidate. Returns candidate indices in
    /// pick order, at most `k`.
    ///
    /// ```swift
    /// Ranking.maximalMarginalRelevance([1, 0.9, 0.5], lambda: 0.5, k: 2) { i, j in i + j == 1 ? 1 : 0 }   // [0, 2]
    /// ```
    public static func maximalMarginalRelevance(_ relevance: [Double], lambda: Double, k: Int,
                                                similarity: (_ candidate: Int, _ picked: Int) -> Double) -> [Int] {
        var left = Array(relevance.indices)
        var picked: [Int] = []
        // Each candidate's highest similarity to the first `compared[i]` picked ones. A candidate
        // compared with fewer than all has a value that can only fall when it catches up, so a
        // round compares only the candidates that lead on their values so far: the one that leads
        // once caught up is the best (values of the others are upper bounds), as the plain rule
        // — compare every candidate with every pick — would choose, ties included.
        var redundancy = [Double](repeating: 0, count: relevance.count)
        var compared = [Int](repeating: 0, count: relevance.count)
        while picked.count < k, let first = left.first {
            while true {
                var best = first, bestValue = -Double.infinity
                for i in left {
                    let value = lambda * relevance[i] - (1 - lambda) * redundancy[i]
                    if value > bestValue { best = i; bestValue = value }
                }
                guard compared[best] < picked.count else {
                    picked.append(best)
                    left.removeAll { $0 == best }
                    break
                }
                for other in picked[compared[best]...] { redundancy[best] = max(redundancy[best], similarity(best, other)) }
                compared[best] = picked.count
            }
        }
        return picked
    }

    /// Maximal marginal relevance over search candidates: relevance rescaled to 0…1 within the
    /// candidates, similarity the inner product of (normalised) vectors; a candidate without a
    /// vector counts as dissimilar to everything. Returns ids in pick order.
    public static func maximalMarginalRelevance(
        _ candidates: [(id: Int64, relevance: Double)], vectors: [Int64: [Float]], lambda: Double, k: Int
    ) -> [Int64] {
        guard !candidates.isEmpty, k > 0 else { return [] }
        let relevances = candidates.map(\.relevance)
        let low = relevances.min() ?? 0, span = (relevances.max() ?? 0) - low
        let rows = candidates.map { vectors[$0.id] }
        return maximalMarginalRelevance(relevances.map { span > 0 ? ($0 - low) / span : 1 }, lambda: lambda, k: k) { i, j in
            guard let v = rows[i], let w = rows[j] else { return 0 }
            return Double(dot(v, w))
        }.map { candidates[$0].id }
    }

    /// The indices of the items to keep, in order: each item that repeats none kept before it
    /// (`repeats(candidate, kept)`), until `limit` are kept. The one near-duplicate rule every
    /// caller uses; what "repeats" means is the caller's.
    public static func distinct(_ count: Int, limit: Int = .max, repeats: (_ candidate: Int, _ kept: Int) -> Bool) -> [Int] {
        var kept: [Int] = []
        for i in 0..<count {
            if kept.count >= limit { break }
            if kept.contains(where: { repeats(i, $0) }) { continue }
            kept.append(i)
        }
        return kept
    }

    /// Drops search candidates that repeat an earlier one: the same text once whitespace and case
    /// are folded, or — vectors at least `threshold` similar — text that adds nothing to the
    /// earlier one (`contained` of its words among the earlier's: the same paragraph from a second
    /// copy of a file, or a shorter version of it). A candidate that says more than the one kept
    /// (a longer version of the paragraph) stays. Keeps the first (best-ranked), and stops once
    /// `limit` items are kept.
    ///
    /// (Vectors alone once decided, at cosine 0.98: multilingual-e5-small puts a paragraph and its
    /// longer version above that, and the longer one's own part was lost — native Arabic questions,
    /// hybrid nDCG@10 0.858 with that rule, 0.873 with this one.)
    public static func collapseNearDuplicates(
        _ items: [(id: Int64, text: String)], vectors: [Int64: [Float]], threshold: Float = 0.98, contained: Double = 0.95,
        limit: Int = .max
    ) -> [Int64] {
        let folded = items.map { foldedHash($0.text) }
        let rows = items.map { vectors[$0.id] }
        var words: [[UInt64]?] = Array(repeating: nil, count: items.count)
        func wordsOf(_ index: Int) -> [UInt64] {
            if let known = words[index] { return known }
            let made = WordSets.words(items[index].text)
            words[index] = made
            return made
        }
        return distinct(items.count, limit: limit) { candidate, kept in
            if folded[candidate] == folded[kept] { return true }
            guard let v = rows[candidate], let w = rows[kept], dot(v, w) >= threshold else { return false }
            let own = wordsOf(candidate)
            guard !own.isEmpty, let shared = WordSets.sharedCount(own, wordsOf(kept)) else { return false }
            return Double(shared) >= contained * Double(own.count)
        }.map { items[$0].id }
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

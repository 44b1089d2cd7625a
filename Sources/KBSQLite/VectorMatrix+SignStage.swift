import CKBKernels
import COpenBLAS
import Foundation
import KBCore

// The sign stage of int8 searches on large indexes, and its calibration on the index's own rows.
extension VectorMatrix {
    /// Rows an index needs before the sign stage is used: below it the int8 copy (6 MiB at 384
    /// dimensions) is read from cache anyway.
    public static let signStageMinimumRows = 16_384

    /// How many rows the sign stage hands to the int8 stage for a top-10 search,
    /// calibrating first when the index has grown or shrunk by half since the last calibration;
    /// nil when searches of the int8 copy do not start with the sign stage.
    public var signStageDepth: Int? {
        lock.read { quantizedEnabled ? signCalibration()?.depth : nil }
    }

    /// The depth of each tier of the sign stage (closest queries first); empty when searches of
    /// the int8 copy do not start with the sign stage.
    public var signStageDepths: [Int] {
        lock.read { quantizedEnabled ? signCalibration()?.tiers.map(\.depth) ?? [] : [] }
    }

    /// What searches through the sign stage have done so far.
    public var signStageCounts: SignStage.Counts { signStage.withLock { $0.counts } }

    /// The sign stage's calibration, measured when due; nil when the stage is off.
    /// Call with the read lock held.
    func signCalibration() -> SignStage.Calibration? {
        let n = ids.count
        guard n >= max(1, signStageRows) else { return nil }
        let due: Bool = signStage.withLock { stage in
            // Rows left in a file come with their calibration (a write, which could make one due, loads them).
            guard !stage.calibrating, floatFile == nil, stage.isDue(rows: n) else { return false }
            stage.calibrating = true
            return true
        }
        if due {
            let calibration = calibrateSignStage()
            signStage.withLock { stage in
                stage.calibrating = false
                stage.rows = n
                stage.calibration = calibration
            }
        }
        return signStage.withLock { stage in stage.rows > 0 ? stage.calibration : nil }
    }

    /// The sign stage's tiers (`SignStage.tierNoise`), closest first: each farther tier only
    /// when it holds (see `calibrateSignTier`) and reaches queries the nearer one does not; nil
    /// when not even the first holds. The first tier is at least `SignStage.minimumDepth` rows
    /// deep, each next one four times the previous one's floor.
    /// Call with the read lock held.
    func calibrateSignStage() -> SignStage.Calibration? {
        let cells = ids.count >= signCellsRows ? makeSignCells() : nil
        var tiers: [SignStage.Tier] = []
        for (number, noise) in SignStage.tierNoise.enumerated() {
            guard var tier = calibrateSignTier(noise: noise, minimumDepth: SignStage.minimumDepth << (2 * number),
                                               cells: SignStage.tierCells[number] ? cells : nil) else { break }
            tier.far = !SignStage.tierCells[number]
            // A farther tier is only worth having for queries the nearer one does not take.
            if let last = tiers.last, tier.closeness >= last.closeness { break }
            tiers.append(tier)
        }
        guard !tiers.isEmpty else { return nil }
        // Cells that a top-10 search would take a quarter of save too little of the pass over every row's signs.
        if let cells, let first = tiers[0].probes.first, 4 * first >= cells.count {
            return SignStage.Calibration(tiers: tiers.map { var tier = $0; tier.probes = []; return tier })
        }
        return SignStage.Calibration(tiers: tiers, cells: cells)
    }

    /// How far down the sign ranking the exact top 10 of queries near the index's rows lie:
    /// `SignStage.samples` rows spread over the index, each moved `noise` times its length off
    /// (1.33: cosine 0.6, as far as a question is from the passage that answers it), are
    /// searched exactly and by their signs; the depth that holds 99.8% of their exact top 10,
    /// doubled (at least `minimumDepth`), is the tier's depth — nil when that is over a quarter
    /// of the rows (uniformly spread vectors, or crowds of near-duplicates whose order only
    /// exact scores settle). The lowest best sign score among them (as a share of the query's
    /// largest possible one) is how close a query must come to some row for the depth to hold.
    /// With `cells`, also how many of the nearest cells hold their exact top 10, and top 50
    /// (`cellsHolding`). Call with the read lock held.
    func calibrateSignTier(noise scale: Float, minimumDepth: Int, cells: SignCells?) -> SignStage.Tier? {
        let n = ids.count, d = dimension
        let samples = stride(from: 0, to: n, by: max(1, n / SignStage.samples)).prefix(SignStage.samples).map { $0 }
        var state: UInt64 = 0x51A9_5EED
        let queries = samples.map { row -> [Float] in
            let noise = (0..<d).map { _ -> Float in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Float(Int64(bitPattern: state >> 11) % 2_000_001) / 1_000_000 - 1
            }
            let rowNorm = (0..<d).reduce(Float(0)) { $0 + matrix[row * d + $1] * matrix[row * d + $1] }.squareRoot()
            let noiseNorm = max(1e-6, noise.reduce(0) { $0 + $1 * $1 }.squareRoot())
            return (0..<d).map { matrix[row * d + $0] + noise[$0] * scale * rowNorm / noiseNorm }
        }
        let wide = topRows(queries, k: 50), exact = wide.map { Array($0.prefix(10)) }
        var ranks: [Int] = [], closeness: [Float] = []
        var scores = [Int32](repeating: 0, count: n)
        for (number, query) in queries.enumerated() {
            let signQuery = SignQuery(query, words: signWords)
            signScores(signQuery, into: &scores)
            // How many rows score above each value: a count per value, summed from the top.
            let lowest = Int(scores.min() ?? 0), highest = Int(scores.max() ?? 0)
            var above = [Int](repeating: 0, count: highest - lowest + 2)
            for score in scores { above[Int(score) - lowest] += 1 }
            var running = 0
            for value in stride(from: highest - lowest, through: 0, by: -1) {
                let here = above[value]
                above[value] = running
                running += here
            }
            for row in exact[number] { ranks.append(above[Int(scores[row]) - lowest] + 1) }
            closeness.append(signQuery.closeness(best: Int32(highest)))
        }
        guard !ranks.isEmpty else { return nil }
        ranks.sort()
        let depth = max(minimumDepth, 2 * ranks[min(ranks.count - 1, Int(Double(ranks.count) * 0.998))])
        guard depth <= n / 4 else { return nil }
        let probes = cells.map { cells in
            [Self.cellsHolding(exact, queries: queries, cells: cells), Self.cellsHolding(wide, queries: queries, cells: cells)]
        } ?? []
        return SignStage.Tier(depth: depth, closeness: closeness.min()!, probes: probes)
    }

    /// Row numbers of each query's exact top `k` (float32 products). Call with the read lock held.
    func topRows(_ queries: [[Float]], k: Int) -> [[Int]] {
        batchTops(queries, k: k, rowNumbers: true).map { $0.map { Int($0.id) } }
    }

    /// Every row's sign score for a query, and the best of them. Call with the read lock held.
    @discardableResult
    func signScores(_ query: SignQuery, into scores: inout [Int32]) -> Int32 {
        signBits.withUnsafeBufferPointer { bits in
            query.planes.withUnsafeBufferPointer { planes in
                scores.withUnsafeMutableBufferPointer { out in
                    kb_sign_plane_rows(bits.baseAddress!, ids.count, signWords, planes.baseAddress!, query.bits, out.baseAddress!)
                }
            }
        }
    }

    /// Every row's sign score for each of several queries, and each one's best, in one pass
    /// over the sign codes: a block of rows (192 KiB at 384 dimensions: it stays in the L2 cache)
    /// is scored for every query before the next block, so the codes are read from memory once
    /// for all of them (48 MB at a million rows: the pass's cost, shared); the blocks are split
    /// among the cores. The searches that wait meanwhile are the next pass's.
    /// Call with the read lock held (the searches sharing a pass all hold it: they see one state).
    /// (The queries all have `SignQuery.bits` bits.)
    func sharedSignScores(_ queries: [SignQuery]) -> [(scores: ArraySlice<Int32>, best: Int32)] {
        let n = ids.count, words = signWords, count = queries.count, planeBits = queries.first?.bits ?? SignQuery.bits
        let width = planeBits * words
        let planes = queries.flatMap(\.planes)
        // One buffer for all (each search gets its slice of it).
        var scores = [Int32](unsafeUninitializedCapacity: count * n) { _, initialized in initialized = count * n }
        let block = Self.signBlockRows
        let blocks = (n + block - 1) / block
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, blocks))
        var bests = [Int32](repeating: .min, count: workers * count)
        signBits.withUnsafeBufferPointer { bits in
            planes.withUnsafeBufferPointer { inputs in
                scores.withUnsafeMutableBufferPointer { outputs in
                    bests.withUnsafeMutableBufferPointer { bestsBuffer in
                        let bitsBase = UnsafeSendable(bits.baseAddress!), inputBase = UnsafeSendable(inputs.baseAddress!)
                        let outputBase = UnsafeSendable(outputs.baseAddress!), bestBase = UnsafeSendable(bestsBuffer.baseAddress!)
                        DispatchQueue.concurrentPerform(iterations: workers) { w in
                            for b in stride(from: w, to: blocks, by: workers) {
                                // A block starts at a multiple of 8 rows: at `start · words` words.
                                let start = b * block, rows = min(block, n - start)
                                for j in 0..<count {
                                    let best = kb_sign_plane_rows(bitsBase.pointer + start * words, rows, words, inputBase.pointer + j * width,
                                                                  planeBits, outputBase.pointer + j * n + start)
                                    bestBase.pointer[w * count + j] = max(bestBase.pointer[w * count + j], best)
                                }
                            }
                        }
                    }
                }
            }
        }
        return (0..<count).map { j in (scores[j * n..<(j + 1) * n], (0..<workers).map { bests[$0 * count + j] }.max()!) }
    }

    /// Rows of sign codes scored for every search of a shared pass before the next rows (a
    /// multiple of 8: blocks of the codes' layout).
    static let signBlockRows = 4096

    /// A search through the sign stage: the best `depth` rows by sign score (scaled for `k` and
    /// for a filter's share of the rows) get their int8 products, then the exact rescoring. Nil
    /// for a query that comes less close to every row than the calibration's queries did: the
    /// depth says nothing about it, and the int8 scan of every row answers it. With cells
    /// (`SignCells`), only the rows of the query's nearest cells are scored by their signs.
    /// Call with the read lock held.
    func signSearch(_ query: [Float], k: Int, allowed: Set<Int64>?, calibration: SignStage.Calibration) -> [TopK.Entry]? {
        let n = ids.count, d = dimension
        let q8 = Self.quantizedQuery(query), signQuery = SignQuery(query, words: signWords)
        // A filter's top k lie deeper among all rows by its share of them, and when it leaves out
        // half or more, further from the query too: twice that.
        var widen = (times: 1, share: 1)
        if let allowed, allowed.count < n { widen = ((2 * allowed.count < n ? 2 : 1) * n, max(1, allowed.count)) }
        let tierAndRows = cellPick(signQuery, query: query, k: k, widen: widen, calibration: calibration)
            ?? sharedPick(signQuery, k: k, widen: widen, calibration: calibration)
        guard let tierAndRows else {
            signStage.withLock { $0.counts.scanned += 1 }
            return nil
        }
        let (tier, scored, numbers) = tierAndRows
        let wanted = min(scored.count, tier.depth * max(1, (k + 9) / 10) * widen.times / widen.share)
        // The far tier's int8 products for more than a quarter of all rows (its depth for a large k
        // on a smaller index: at 100,000 rows, half of them for a top 50) cost more than the int8
        // scan of every row, which concurrent searches share.
        if tier.far, wanted > n / 4 {
            signStage.withLock { $0.counts.scanned += 1 }
            return nil
        }
        var picked = [UInt32](unsafeUninitializedCapacity: wanted) { _, count in count = wanted }
        let count = scored.withUnsafeBufferPointer { s in
            picked.withUnsafeMutableBufferPointer { p in kb_top_rows(s.baseAddress!, s.count, wanted, p.baseAddress!) }
        }
        picked.removeLast(picked.count - count)
        if let numbers { picked = picked.map { numbers[Int($0)] } }
        signStage.withLock { stage in
            stage.counts.searches += 1
            stage.counts.rows += count
            stage.counts.signRows += scored.count
            if numbers != nil { stage.counts.inCells += 1 }
        }
        // A filter that leaves out few rows is checked only for rows good enough to be offered
        // (a look-up in a large set misses the cache about as often as scoring a row does);
        // one that leaves out many, before scoring.
        var late = allowed
        if let allowed, 4 * allowed.count < 3 * n {
            picked.removeAll { !allowed.contains(ids[Int($0)]) }
            late = nil
        }
        var dots = [Int32](repeating: 0, count: picked.count)
        quantizedRows.withUnsafeBufferPointer { rows in
            picked.withUnsafeBufferPointer { p in
                q8.withUnsafeBufferPointer { q in
                    dots.withUnsafeMutableBufferPointer { out in
                        kb_i8_dot_picked(rows.baseAddress!, p.baseAddress!, p.count, d, q.baseAddress!, out.baseAddress!)
                    }
                }
            }
        }
        var candidates = TopK(k: max(k * Self.rescoreFactor, 100))
        scales.withUnsafeBufferPointer { scales in
            for (row, dot) in zip(picked, dots) {
                let score = Float(dot) * scales[Int(row)]
                guard score >= candidates.threshold else { continue }
                if let late, !late.contains(ids[Int(row)]) { continue }
                candidates.offer(id: Int64(row), score: score)
            }
        }
        return rescore(candidates.sorted(), query: query, k: k)
    }
}

extension VectorMatrix {
    /// The tier a search takes and the sign scores of every row (one shared pass over the sign
    /// codes, see `sharedSignScores`); nil: no tier holds for the query.
    /// Call with the read lock held.
    func sharedPick(_ signQuery: SignQuery, k: Int, widen: (times: Int, share: Int),
                    calibration: SignStage.Calibration) -> (SignStage.Tier, ArraySlice<Int32>, [UInt32]?)? {
        let (scores, best) = signScans.join(signQuery) { sharedSignScores($0) }
        return calibration.tier(for: signQuery.closeness(best: best)).map { ($0, scores, nil) }
    }

    /// The tier a search takes and the sign scores of the rows of its nearest cells, with their
    /// row numbers: the first tier's cells, then the next tier's more when the query comes less
    /// close to their rows than the first tier holds for (the best row may lie in a cell not
    /// taken: a query is never taken closer than it is). Nil when the index has no cells, or a
    /// filter leaves so few rows that half the cells or more would be taken (a shared pass over
    /// every row then costs less), or the query is farther than the tiers with cells hold for and
    /// a farther tier searches every row's signs; the scores empty when no tier holds.
    /// Call with the read lock held.
    func cellPick(_ signQuery: SignQuery, query: [Float], k: Int, widen: (times: Int, share: Int),
                  calibration: SignStage.Calibration) -> (SignStage.Tier, ArraySlice<Int32>, [UInt32]?)?? {
        // Cells taken, widened for a filter (rounded up).
        func widened(_ probes: Int) -> Int { (probes * widen.times + widen.share - 1) / widen.share }
        guard let cells = calibration.cells, let first = calibration.tiers[0].probes(k: k), 2 * widened(first) < cells.count else { return nil }
        // The tiers with cells (the farthest may search every row's signs: `SignStage.tierCells`).
        let celled = calibration.tiers.prefix { $0.probes(k: k) != nil }
        let most = celled.map { min(cells.count, widened($0.probes(k: k)!)) }.max() ?? cells.count
        let order = cells.ranked(query, first: most)
        var scores: [Int32] = [], rows: [UInt32] = []
        var taken = 0, best = Int32.min
        for tier in celled {
            let probes = min(cells.count, widened(tier.probes(k: k)!))
            if probes > taken {
                best = max(best, cellScores(signQuery, cells: cells, order: order, from: taken, probes: probes, scores: &scores, rows: &rows))
                taken = probes
            }
            if signQuery.closeness(best: best) >= tier.closeness { return .some((tier, scores[...], rows)) }
        }
        // Farther than the cells' tiers hold for: a tier over every row's signs may still (`sharedPick`).
        return celled.count < calibration.tiers.count ? nil : .some(nil)
    }
}

/// A query as the sign stage scores it: each value in one of 2^`bits` levels, the range
/// ±max|value| cut in equal steps, as the odd number q = 2·level − (2^bits − 1) (for 4 bits, −15
/// for the query's most negative values to 15 for its most positive), held as bit planes of the
/// levels (`kb_sign_plane_rows`): a row's score is a popcount a plane and word instead of a sum
/// per dimension.
struct SignQuery: Sendable {
    /// Bits of each level (`SignQuery.bits` unless a test says otherwise).
    let bits: Int
    /// Each level's bit 0 (`words` words), then its bit 1, …
    let planes: [UInt64]
    /// Σ q and Σ |q|, for `closeness`.
    let sum: Int, magnitude: Int

    /// Levels of 4 bits rank rows by their signs as well as the query's int8 values (the depth
    /// that holds 99.8% of the exact top 10 within a few percent, on a million clustered rows and
    /// on the tests' crowds of near-duplicates); 2 bits needed a depth 10–30% deeper on the
    /// first and 6 times deeper on the second, 3 bits sometimes took uniformly spread rows for
    /// ranked ones. Five popcounts a 64-bit word: half the time of the int8 values' sums
    /// (`kb-bench sign-pass`: 2.2 ns a row in cache, was 4.4).
    static let bits = 4

    init(_ query: [Float], words: Int, bits: Int = SignQuery.bits) {
        var largest: Float = 0
        for v in query { largest = max(largest, abs(v)) }
        let scale = largest > 0 ? largest : 1, top = (1 << bits) - 1
        var planes = [UInt64](repeating: 0, count: bits * words)
        var sum = 0, magnitude = 0
        for (j, v) in query.enumerated() {
            let level = Int(min(Float(top), max(0, ((v / scale + 1) * Float(top) / 2).rounded())))
            let value = 2 * level - top
            sum += value
            magnitude += abs(value)
            for p in 0..<bits where level >> p & 1 == 1 { planes[p * words + j / 64] |= 1 << UInt64(j % 64) }
        }
        self.bits = bits
        self.planes = planes
        self.sum = sum
        self.magnitude = magnitude
    }

    /// How close the query comes to some row: its inner product with the best row's signs
    /// (2·best − Σ q, from the best sign score) as a share of the largest it could be, Σ |q|
    /// (a row whose signs are all the query's own), from −1 to 1.
    func closeness(best: Int32) -> Float {
        Float(2 * Int(best) - sum) / Float(max(1, magnitude))
    }
}

/// The sign stage's calibration: how many rows by sign score a top-10 search hands to the int8
/// stage, measured on the index's own rows when it had `rows` rows (0: never; nil calibration:
/// the signs rank too poorly here and every row gets its int8 product).
public struct SignStage: Sendable {
    /// Rows searched as queries to calibrate.
    static let samples = 48
    /// The least depth used, however well the signs rank.
    static let minimumDepth = 512
    /// The fewest cells a search takes (`SignCells`), however few hold the calibration's tops:
    /// a real question's top rows lie in more cells than a row moved off does (on the million-row
    /// shelf with the benchmark's questions, 4 cells — all the calibration asked for — kept
    /// recall@10 at 0.974, 8 at 1.0 and @50 at 0.995, 16 at 1.0 and 0.9985).
    static let minimumProbes = 16

    /// Noise added to calibration queries, times the row's length: the first tier's queries lie at
    /// cosine 0.6 from their rows (as a question from the passage that answers it), the second's
    /// at 0.45 (a question that shares less with its passage).
    /// The third's at 0.32: a question far from every passage (one the index barely answers).
    static let tierNoise: [Float] = [1.33, 2.0, 3.0]
    /// Whether a tier searches its query's nearest cells (`SignCells`), or every row's signs. A far
    /// question's best rows lie in cells that a row moved off does not show: on the million-row
    /// shelf with the benchmark's questions, the third tier through the cells its calibration
    /// asked for had recall@10 0.952; over every row's signs, 0.998 (and @50 0.9996) — a pass over
    /// 48 MB of signs and ~12,000 int8 products instead of the int8 scan of every row (384 MB).
    static let tierCells = [true, true, false]

    struct Tier: Sendable {
        /// Rows by sign score a top-10 search takes.
        var depth: Int
        /// The least closeness (`SignQuery.closeness`) of a query the depth holds for.
        var closeness: Float
        /// With cells: how many of the nearest a top-10 search takes, and a top-50 one.
        var probes: [Int] = []
        /// A tier past those that may take cells (`SignStage.tierCells`): taken only for a search
        /// that gives at most a quarter of the rows int8 products.
        var far = false

        /// How many cells a top-`k` search takes; nil without cells.
        func probes(k: Int) -> Int? {
            guard probes.count == 2 else { return nil }
            return k <= 10 ? probes[0] : probes[1] * ((k + 49) / 50)
        }
    }

    struct Calibration: Sendable {
        /// Closest first; a query takes the first whose closeness it reaches.
        var tiers: [Tier]
        /// The rows in cells, on very large indexes.
        var cells: SignCells?
        var depth: Int { tiers[0].depth }

        /// The tier a query as close as `closeness` to some row takes; nil: the int8 scan of every row.
        func tier(for closeness: Float) -> Tier? { tiers.first { closeness >= $0.closeness } }
    }

    /// What searches through the stage did, for measurements.
    public struct Counts: Sendable, Hashable {
        /// Searches the stage answered.
        public var searches = 0
        /// Rows they gave int8 products, all together.
        public var rows = 0
        /// Searches left to the int8 scan because the query came less close to every row than
        /// the calibration's queries.
        public var scanned = 0
        /// Rows whose signs the searches scored, all together.
        public var signRows = 0
        /// Searches that scored the signs of their nearest cells' rows only.
        public var inCells = 0
    }

    var rows = 0
    var calibration: Calibration?
    var calibrating = false
    var counts = Counts()

    /// Whether the index's size has halved or doubled since the last calibration.
    func isDue(rows now: Int) -> Bool { rows == 0 || now > 2 * rows || 2 * now < rows }
}

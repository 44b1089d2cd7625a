import CKBKernels
import COpenBLAS
import Foundation
import KBCore

/// The vectors of one embedder held in memory as one contiguous row-major matrix, with a
/// parallel array of snippet ids, scored by inner product (cosine on normalised vectors) with
/// `cblas_sgemv` for one query and `cblas_sgemm` for a batch, then a bounded-heap top-K.
///
/// Filters select rows before ranking: when few rows are allowed their vectors are gathered and
/// scored alone; otherwise the whole matrix is scanned and disallowed rows are skipped during
/// selection. Either way a filter never shrinks K.
///
/// ```swift
/// let index = VectorMatrix(dimension: 384)
/// index.upsert([(id: 1, vector: v)])
/// index.search(query, k: 10)   // [(id, score)], best first
/// ```
///
/// @unchecked Sendable: all state is guarded by `lock` (many readers, one writer).
public final class VectorMatrix: @unchecked Sendable {
    public let dimension: Int
    private var ids: [Int64] = []
    private var matrix: [Float] = []
    private var rowOf: [Int64: Int] = [:]
    /// The optional int8 copy: each row scaled by its largest magnitude (`scales[row]` = max|v|/127).
    private var quantizedRows: [Int8] = []
    private var scales: [Float] = []
    private var quantizedEnabled = false
    /// The sign copy kept with the int8 one: bit j of a row's `signWords` words is set when the
    /// row's value j is positive. 48 bytes a row at 384 dimensions: a shelf's copy stays in cache.
    private var signBits: [UInt64] = []
    private let signWords: Int
    private let signStageRows: Int
    private let lock = ReadWriteLock()
    /// How deep the sign stage goes (see `SignStage`), guarded by its own lock so that a search
    /// holding the read lock can record a calibration.
    private let signStage = LockedValue(SignStage())

    /// A quantized search rescores this many candidates per wanted hit (at least 100) in float32.
    public static let rescoreFactor = 10

    /// Below this fraction of allowed rows, a filtered search gathers rows instead of scanning all.
    public static let gatherFraction = 0.1

    /// Whether a search allowed `allowed` of `total` rows gathers them (true) or masks a full scan.
    public static func gathers(allowed: Int, of total: Int) -> Bool {
        Double(allowed) < Double(total) * gatherFraction
    }

    /// - Parameter signStageFrom: rows the index needs before its int8 searches start with the
    ///   sign stage (default `signStageMinimumRows`).
    public init(dimension: Int, signStageFrom: Int = VectorMatrix.signStageMinimumRows) {
        self.dimension = dimension
        signStageRows = signStageFrom
        signWords = (dimension + 63) / 64
        _ = BLASThreads.count
    }

    public var count: Int { lock.read { ids.count } }

    /// Whether the int8 copy is kept.
    public var isQuantized: Bool { lock.read { quantizedEnabled } }

    /// Builds (and from now on maintains) the int8 copy used by `search(_:k:allowed:quantized:)`:
    /// a quarter of the memory traffic of the float32 scan.
    public func enableQuantization() {
        lock.write {
            guard !quantizedEnabled else { return }
            quantizedEnabled = true
            quantizedRows = [Int8](repeating: 0, count: matrix.count)
            scales = [Float](repeating: 0, count: ids.count)
            signBits = [UInt64](repeating: 0, count: ids.count * signWords)
            for row in 0..<ids.count { quantize(row: row) }
        }
    }

    /// Quantizes one float row into its int8 slot. Call with the write lock held.
    private func quantize(row: Int) {
        let base = row * dimension
        var largest: Float = 0
        for j in 0..<dimension { largest = max(largest, abs(matrix[base + j])) }
        let scale = largest > 0 ? largest / 127 : 1
        scales[row] = scale
        for j in 0..<dimension { quantizedRows[base + j] = Int8((matrix[base + j] / scale).rounded()) }
        for word in 0..<signWords {
            var bits: UInt64 = 0
            for bit in 0..<min(64, dimension - word * 64) where matrix[base + word * 64 + bit] > 0 { bits |= 1 << UInt64(bit) }
            signBits[row * signWords + word] = bits
        }
    }

    /// Adds or replaces vectors by snippet id. A vector of another dimension is an error, and
    /// then nothing changes.
    public func upsert(_ entries: [(id: Int64, vector: [Float])]) throws {
        if let bad = entries.first(where: { $0.vector.count != dimension }) { throw wrongDimension(bad.vector.count, "vector") }
        lock.write {
            for (id, vector) in entries {
                let row: Int
                if let existing = rowOf[id] {
                    row = existing
                    matrix.replaceSubrange(row * dimension..<(row + 1) * dimension, with: vector)
                } else {
                    row = ids.count
                    rowOf[id] = row
                    ids.append(id)
                    matrix.append(contentsOf: vector)
                    if quantizedEnabled {
                        quantizedRows.append(contentsOf: repeatElement(0, count: dimension))
                        scales.append(0)
                        signBits.append(contentsOf: repeatElement(0, count: signWords))
                    }
                }
                if quantizedEnabled { quantize(row: row) }
            }
        }
    }

    /// Removes vectors by snippet id (the last row moves into the hole).
    public func remove(_ removed: [Int64]) {
        lock.write {
            for id in removed {
                guard let row = rowOf.removeValue(forKey: id) else { continue }
                let last = ids.count - 1
                if row != last {
                    let moved = ids[last]
                    ids[row] = moved
                    rowOf[moved] = row
                    matrix.withUnsafeMutableBufferPointer { m in
                        (m.baseAddress! + row * dimension).update(from: m.baseAddress! + last * dimension, count: dimension)
                    }
                    if quantizedEnabled {
                        quantizedRows.withUnsafeMutableBufferPointer { q in
                            (q.baseAddress! + row * dimension).update(from: q.baseAddress! + last * dimension, count: dimension)
                        }
                        scales[row] = scales[last]
                        for word in 0..<signWords { signBits[row * signWords + word] = signBits[last * signWords + word] }
                    }
                }
                ids.removeLast()
                matrix.removeLast(dimension)
                if quantizedEnabled {
                    quantizedRows.removeLast(dimension)
                    scales.removeLast()
                    signBits.removeLast(signWords)
                }
            }
        }
    }

    /// Replaces everything (a reload). A matrix that does not hold one row per id is an error.
    public func reset(ids newIDs: [Int64], matrix newMatrix: [Float]) throws {
        guard newMatrix.count == newIDs.count * dimension else {
            throw KBError(.database, "\(newMatrix.count) values are not \(newIDs.count) vectors of \(dimension) dimensions.")
        }
        lock.write {
            ids = newIDs
            matrix = newMatrix
            rowOf = Dictionary(uniqueKeysWithValues: newIDs.enumerated().map { ($1, $0) })
            if quantizedEnabled {
                quantizedRows = [Int8](repeating: 0, count: matrix.count)
                scales = [Float](repeating: 0, count: ids.count)
                signBits = [UInt64](repeating: 0, count: ids.count * signWords)
                for row in 0..<ids.count { quantize(row: row) }
            }
        }
    }

    /// The stored vector of a snippet.
    public func vector(for id: Int64) -> [Float]? {
        lock.read {
            guard let row = rowOf[id] else { return nil }
            return Array(matrix[row * dimension..<(row + 1) * dimension])
        }
    }

    /// The `k` rows with the highest inner product with `query`, best first.
    /// - Parameter allowed: when given, only these snippet ids may be returned.
    public func search(_ query: [Float], k: Int, allowed: Set<Int64>? = nil) throws -> [TopK.Entry] {
        guard query.count == dimension else { throw wrongDimension(query.count, "query") }
        return lock.read {
            let n = ids.count
            guard n > 0, k > 0 else { return [] }
            var top = TopK(k: k)
            if let allowed, Self.gathers(allowed: allowed.count, of: n) {
                // Gather: score only the allowed rows.
                let rows = allowed.compactMap { rowOf[$0] }
                guard !rows.isEmpty else { return [] }
                var gathered = [Float](repeating: 0, count: rows.count * dimension)
                matrix.withUnsafeBufferPointer { m in
                    gathered.withUnsafeMutableBufferPointer { g in
                        for (i, row) in rows.enumerated() {
                            (g.baseAddress! + i * dimension).update(from: m.baseAddress! + row * dimension, count: dimension)
                        }
                    }
                }
                let scores = Self.scores(gathered, rows: rows.count, dimension: dimension, query: query)
                for (i, row) in rows.enumerated() { top.offer(id: ids[row], score: scores[i]) }
            } else {
                let scores = Self.scores(matrix, rows: n, dimension: dimension, query: query)
                if let allowed {
                    for row in 0..<n where scores[row] >= top.threshold && allowed.contains(ids[row]) {
                        top.offer(id: ids[row], score: scores[row])
                    }
                } else {
                    for row in 0..<n where scores[row] >= top.threshold { top.offer(id: ids[row], score: scores[row]) }
                }
            }
            return top.sorted()
        }
    }

    /// Approximate search on the int8 copy (see `enableQuantization()`): the best `max(k·10, 100)`
    /// candidates by int8·int8 products are rescored exactly in float32, and the best `k` of
    /// those are returned with exact scores. Falls back to the exact scan when the copy is not
    /// kept or few rows are allowed.
    ///
    /// On large indexes a sign stage comes first: the query's int8 values summed over each
    /// row's positive dimensions (its inner product with the row's signs) choose the rows the
    /// int8 products are computed for — a pass over 48 bytes a row instead of 384, which stays
    /// in the CPU's cache. How many rows it passes on is calibrated on the index's own vectors
    /// (`SignStage`); where the signs rank too poorly (uniformly spread vectors can), every
    /// row gets its int8 product. Concurrent int8 scans share the scan: those that arrive while
    /// one runs are gathered and scored together in the next, each block of rows read once for
    /// all of them while it is in cache. A search alone scores its rows on all cores.
    public func search(_ query: [Float], k: Int, allowed: Set<Int64>? = nil, quantized: Bool) throws -> [TopK.Entry] {
        guard quantized else { return try search(query, k: k, allowed: allowed) }
        let fallback: Bool = lock.read {
            !quantizedEnabled || (allowed.map { Self.gathers(allowed: $0.count, of: ids.count) } ?? false)
        }
        if fallback { return try search(query, k: k, allowed: allowed) }
        guard query.count == dimension else { throw wrongDimension(query.count, "query") }
        if let found = lock.read({ () -> [TopK.Entry]? in
            signCalibration().flatMap { signSearch(query, k: k, allowed: allowed, calibration: $0) }
        }) {
            return found
        }
        return scans.join(QuantizedScan(query: query, k: k, allowed: allowed)) { self.scanQuantized($0) }
    }

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
    private func signCalibration() -> SignStage.Calibration? {
        let n = ids.count
        guard n >= max(1, signStageRows) else { return nil }
        let due: Bool = signStage.withLock { stage in
            guard !stage.calibrating, stage.isDue(rows: n) else { return false }
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
    private func calibrateSignStage() -> SignStage.Calibration? {
        var tiers: [SignStage.Tier] = []
        for (number, noise) in SignStage.tierNoise.enumerated() {
            guard let tier = calibrateSignTier(noise: noise, minimumDepth: SignStage.minimumDepth << (2 * number)) else { break }
            // A farther tier is only worth having for queries the nearer one does not take.
            if let last = tiers.last, tier.closeness >= last.closeness { break }
            tiers.append(tier)
        }
        return tiers.isEmpty ? nil : SignStage.Calibration(tiers: tiers)
    }

    /// How far down the sign ranking the exact top 10 of queries near the index's rows lie:
    /// `SignStage.samples` rows spread over the index, each moved `noise` times its length off
    /// (1.33: cosine 0.6, as far as a question is from the passage that answers it), are
    /// searched exactly and by their signs; the depth that holds 99.8% of their exact top 10,
    /// doubled (at least `minimumDepth`), is the tier's depth — nil when that is over a quarter
    /// of the rows (uniformly spread vectors, or crowds of near-duplicates whose order only
    /// exact scores settle). The lowest best sign score among them (as a share of the query's
    /// largest possible one) is how close a query must come to some row for the depth to hold.
    /// Call with the read lock held.
    private func calibrateSignTier(noise scale: Float, minimumDepth: Int) -> SignStage.Tier? {
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
        let exact = topRows(queries, k: 10)
        var ranks: [Int] = [], closeness: [Float] = []
        var scores = [Int32](repeating: 0, count: n)
        for (number, query) in queries.enumerated() {
            let q8 = Self.quantizedQuery(query)
            signScores(q8, into: &scores)
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
            closeness.append(Self.closeness(best: Int32(highest), query: q8))
        }
        guard !ranks.isEmpty else { return nil }
        ranks.sort()
        let depth = max(minimumDepth, 2 * ranks[min(ranks.count - 1, Int(Double(ranks.count) * 0.998))])
        return depth <= n / 4 ? SignStage.Tier(depth: depth, closeness: closeness.min()!) : nil
    }

    /// Row numbers of each query's exact top `k` (float32 products). Call with the read lock held.
    private func topRows(_ queries: [[Float]], k: Int) -> [[Int]] {
        batchTops(queries, k: k, rowNumbers: true).map { $0.map { Int($0.id) } }
    }

    /// Every row's sign score for an int8 query, and the best of them. Call with the read lock held.
    @discardableResult
    private func signScores(_ query: [Int8], into scores: inout [Int32]) -> Int32 {
        var padded = query
        padded.append(contentsOf: repeatElement(0, count: signWords * 64 - dimension))
        return signBits.withUnsafeBufferPointer { bits in
            padded.withUnsafeBufferPointer { q in
                scores.withUnsafeMutableBufferPointer { out in
                    kb_sign_dot_rows(bits.baseAddress!, ids.count, signWords, q.baseAddress!, out.baseAddress!)
                }
            }
        }
    }

    /// A search through the sign stage: the best `depth` rows by sign score (scaled for `k` and
    /// for a filter's share of the rows) get their int8 products, then the exact rescoring. Nil
    /// for a query that comes less close to every row than the calibration's queries did: the
    /// depth says nothing about it, and the int8 scan of every row answers it.
    /// Call with the read lock held.
    private func signSearch(_ query: [Float], k: Int, allowed: Set<Int64>?, calibration: SignStage.Calibration) -> [TopK.Entry]? {
        let n = ids.count, d = dimension
        let q8 = Self.quantizedQuery(query)
        var scores = [Int32](unsafeUninitializedCapacity: n) { _, count in count = n }
        let best = signScores(q8, into: &scores)
        guard let tier = calibration.tier(for: Self.closeness(best: best, query: q8)) else {
            signStage.withLock { $0.counts.scanned += 1 }
            return nil
        }
        var wanted = tier.depth * max(1, (k + 9) / 10)
        // A filter's top k lie deeper among all rows by its share of them, and when it leaves out
        // half or more, further from the query too: twice that.
        if let allowed, allowed.count < n { wanted = (2 * allowed.count < n ? 2 : 1) * wanted * n / max(1, allowed.count) }
        wanted = min(n, wanted)
        var picked = [UInt32](unsafeUninitializedCapacity: wanted) { _, count in count = wanted }
        let count = scores.withUnsafeBufferPointer { s in
            picked.withUnsafeMutableBufferPointer { p in kb_top_rows(s.baseAddress!, n, wanted, p.baseAddress!) }
        }
        signStage.withLock { stage in
            stage.counts.searches += 1
            stage.counts.rows += count
        }
        picked.removeLast(picked.count - count)
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

    /// How close a query comes to some row: its inner product with the best row's signs
    /// (2·best − Σ query, from the best sign score) as a share of the largest it could be, Σ |query|
    /// (a row whose signs are all the query's own), from −1 to 1.
    static func closeness(best: Int32, query: [Int8]) -> Float {
        var sum = 0, magnitude = 0
        for value in query {
            sum += Int(value)
            magnitude += abs(Int(value))
        }
        return Float(2 * Int(best) - sum) / Float(max(1, magnitude))
    }

    /// A float query as int8, scaled by its largest magnitude.
    static func quantizedQuery(_ query: [Float]) -> [Int8] {
        var largest: Float = 0
        for v in query { largest = max(largest, abs(v)) }
        let scale = largest > 0 ? largest / 127 : 1
        return query.map { Int8(($0 / scale).rounded()) }
    }

    /// Concurrent quantized searches waiting for, or in, a shared scan.
    private let scans = Gathering<QuantizedScan, [TopK.Entry]>()

    /// Rows of the int8 copy scored for every search of a shared scan before the next rows:
    /// 2,048 rows of 384 int8 values (768 KiB) stay in the L2 cache meanwhile.
    static let sharedScanBlockBytes = 768 << 10

    /// One pass over the int8 copy for a batch of searches, then their exact rescoring.
    private func scanQuantized(_ batch: [QuantizedScan]) -> [[TopK.Entry]] {
        lock.read {
            let n = ids.count, d = dimension
            guard n > 0 else { return batch.map { _ in [] } }
            let queries = batch.map { Self.quantizedQuery($0.query) }
            var candidates = batch.map { TopK(k: max($0.k * Self.rescoreFactor, 100)) }
            quantizedRows.withUnsafeBufferPointer { rows in
                if batch.count == 1 {
                    // Alone: every core scores a share of the rows.
                    var dots = [Int32](repeating: 0, count: n)
                    let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, n / 4096))
                    queries[0].withUnsafeBufferPointer { q in
                        dots.withUnsafeMutableBufferPointer { out in
                            let rowsBase = UnsafeSendable(rows.baseAddress!), qBase = UnsafeSendable(q.baseAddress!)
                            let outBase = UnsafeSendable(out.baseAddress!)
                            let chunk = (n + workers - 1) / workers
                            DispatchQueue.concurrentPerform(iterations: workers) { w in
                                let start = w * chunk, end = min(n, start + chunk)
                                guard start < end else { return }
                                kb_i8_dot_rows(rowsBase.pointer + start * d, end - start, d, qBase.pointer, outBase.pointer + start)
                            }
                        }
                    }
                    dots.withUnsafeBufferPointer { offer($0, from: 0, to: &candidates[0], allowed: batch[0].allowed) }
                } else {
                    let block = max(64, Self.sharedScanBlockBytes / d)
                    var dots = [Int32](repeating: 0, count: block)
                    for start in stride(from: 0, to: n, by: block) {
                        let count = min(block, n - start)
                        for (j, query) in queries.enumerated() {
                            query.withUnsafeBufferPointer { q in
                                dots.withUnsafeMutableBufferPointer { out in
                                    kb_i8_dot_rows(rows.baseAddress! + start * d, count, d, q.baseAddress!, out.baseAddress!)
                                }
                            }
                            dots.withUnsafeBufferPointer {
                                offer(UnsafeBufferPointer(rebasing: $0[0..<count]), from: start, to: &candidates[j], allowed: batch[j].allowed)
                            }
                        }
                    }
                }
            }
            return batch.indices.map { j in rescore(candidates[j].sorted(), query: batch[j].query, k: batch[j].k) }
        }
    }

    /// Offers rows `start…` with their int8 dot products to a search's candidates (row numbers
    /// as ids), skipping rows its filter does not allow. Call with the read lock held.
    private func offer(_ dots: UnsafeBufferPointer<Int32>, from start: Int, to candidates: inout TopK, allowed: Set<Int64>?) {
        scales.withUnsafeBufferPointer { scales in
            ids.withUnsafeBufferPointer { ids in
                var threshold = candidates.threshold
                for (offset, dot) in dots.enumerated() {
                    let row = start + offset
                    let approximate = Float(dot) * scales[row]
                    if approximate >= threshold, allowed?.contains(ids[row]) ?? true {
                        candidates.offer(id: Int64(row), score: approximate)
                        threshold = candidates.threshold
                    }
                }
            }
        }
    }

    /// The best `k` of candidate rows by their exact float32 scores. Call with the read lock held.
    private func rescore(_ candidates: [TopK.Entry], query: [Float], k: Int) -> [TopK.Entry] {
        var top = TopK(k: k)
        let d = dimension
        matrix.withUnsafeBufferPointer { m in
            query.withUnsafeBufferPointer { q in
                for candidate in candidates {
                    let row = Int(candidate.id)
                    top.offer(id: ids[row], score: cblas_sdot(Int32(d), m.baseAddress! + row * d, 1, q.baseAddress!, 1))
                }
            }
        }
        return top.sorted()
    }

    /// Rows scored per `sgemm` block in a batch search: keeps a block's scores in cache.
    static let batchBlockRows = 8192

    /// Top-K for many queries at once (no filters). Workers take blocks of rows, score each with
    /// one `sgemm` into their own heaps, and the heaps are merged.
    public func search(batch queries: [[Float]], k: Int) throws -> [[TopK.Entry]] {
        if let bad = queries.first(where: { $0.count != dimension }) { throw wrongDimension(bad.count, "query") }
        return lock.read { batchTops(queries, k: k, rowNumbers: false) }
    }

    /// Each query's exact top `k` by blocked `sgemm`s, keyed by snippet id (or by row number with
    /// `rowNumbers`). Call with the read lock held.
    private func batchTops(_ queries: [[Float]], k: Int, rowNumbers: Bool) -> [[TopK.Entry]] {
        let n = ids.count, q = queries.count
        guard n > 0, q > 0, k > 0 else { return queries.map { _ in [] } }
        var flat = [Float](); flat.reserveCapacity(q * dimension)
        for query in queries { flat.append(contentsOf: query) }
        let block = Self.batchBlockRows
        let blocks = (n + block - 1) / block
        // One worker per core when each sgemm is single-threaded (`.throughput`); one worker
        // using every BLAS thread otherwise.
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount / BLASThreads.count, blocks))
        let partial = PartialTops(workers: workers, queries: q, k: k)
        let d = dimension
        matrix.withUnsafeBufferPointer { m in
            flat.withUnsafeBufferPointer { f in
                ids.withUnsafeBufferPointer { idBuffer in
                    let matrixBase = UnsafeSendable(m.baseAddress!), queryBase = UnsafeSendable(f.baseAddress!)
                    let idBase = UnsafeSendable(idBuffer.baseAddress!)
                    DispatchQueue.concurrentPerform(iterations: workers) { w in
                        var tops = (0..<q).map { _ in TopK(k: k) }
                        var scores = [Float](repeating: 0, count: q * block)
                        for b in stride(from: w, to: blocks, by: workers) {
                            let start = b * block, rows = min(block, n - start)
                            scores.withUnsafeMutableBufferPointer { s in
                                // scores[q × rows] = queries[q × d] · matrix[start..<start+rows]ᵀ
                                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(q), Int32(rows), Int32(d),
                                            1, queryBase.pointer, Int32(d), matrixBase.pointer + start * d, Int32(d),
                                            0, s.baseAddress!, Int32(rows))
                                for j in 0..<q {
                                    let row = s.baseAddress! + j * rows
                                    var threshold = tops[j].threshold
                                    for i in 0..<rows where row[i] >= threshold {
                                        tops[j].offer(id: rowNumbers ? Int64(start + i) : idBase.pointer[start + i], score: row[i])
                                        threshold = tops[j].threshold
                                    }
                                }
                            }
                        }
                        partial.set(w, tops)
                    }
                }
            }
        }
        return partial.merged()
    }

    func wrongDimension(_ count: Int, _ what: String) -> KBError {
        KBError(.embedding, "A \(count)-dim \(what) for a \(dimension)-dim vector index.")
    }

    static func scores(_ matrix: [Float], rows: Int, dimension: Int, query: [Float]) -> [Float] {
        var scores = [Float](repeating: 0, count: rows)
        matrix.withUnsafeBufferPointer { m in
            query.withUnsafeBufferPointer { q in
                scores.withUnsafeMutableBufferPointer { s in
                    cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(rows), Int32(dimension), 1,
                                m.baseAddress!, Int32(dimension), q.baseAddress!, 1, 0, s.baseAddress!, 1)
                }
            }
        }
        return scores
    }
}

/// A pthread read-write lock.
/// @unchecked Sendable: pthread_rwlock_t is designed for concurrent use.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    init() { pthread_rwlock_init(lock, nil) }
    deinit { pthread_rwlock_destroy(lock); lock.deallocate() }
    func read<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock); defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
    func write<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock); defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}

/// Per-worker heaps of a batch search, merged at the end.
/// @unchecked Sendable: each worker writes its own slot under `lock`.
final class PartialTops: @unchecked Sendable {
    private var slots: [[TopK]]
    private let lock = NSLock()
    private let k: Int
    init(workers: Int, queries: Int, k: Int) {
        self.k = k
        slots = Array(repeating: [], count: workers)
    }
    func set(_ worker: Int, _ tops: [TopK]) { lock.withLock { slots[worker] = tops } }
    func merged() -> [[TopK.Entry]] {
        lock.withLock {
            let queries = slots.first?.count ?? 0
            return (0..<queries).map { j in
                var top = TopK(k: k)
                for slot in slots { for entry in slot[j].sorted() { top.offer(id: entry.id, score: entry.score) } }
                return top.sorted()
            }
        }
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

    /// Noise added to calibration queries, times the row's length: the first tier's queries lie at
    /// cosine 0.6 from their rows (as a question from the passage that answers it), the second's
    /// at 0.45 (a question that shares less with its passage).
    static let tierNoise: [Float] = [1.33, 2.0]

    struct Tier: Sendable {
        /// Rows by sign score a top-10 search takes.
        var depth: Int
        /// The least closeness (`VectorMatrix.closeness`) of a query the depth holds for.
        var closeness: Float
    }

    struct Calibration: Sendable {
        /// Closest first; a query takes the first whose closeness it reaches.
        var tiers: [Tier]
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
    }

    var rows = 0
    var calibration: Calibration?
    var calibrating = false
    var counts = Counts()

    /// Whether the index's size has halved or doubled since the last calibration.
    func isDue(rows now: Int) -> Bool { rows == 0 || now > 2 * rows || 2 * now < rows }
}

/// One search of a shared quantized scan.
struct QuantizedScan: Sendable {
    let query: [Float]
    let k: Int
    let allowed: Set<Int64>?
}

/// Work that callers on their own threads share: a caller whose request finds no batch running
/// runs one with every request waiting (its own included) and hands out the results; one that
/// finds a batch running waits for the next. Alone, a request runs at once; under load, batches
/// grow with the number of callers waiting. Callers block: never call it from Swift's
/// cooperative pool.
///
/// @unchecked Sendable: `waiting`, `results` and `running` are guarded by `condition`.
final class Gathering<Request: Sendable, Result: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [(ticket: Int, request: Request)] = []
    private var results: [Int: Result] = [:]
    private var running = false
    private var nextTicket = 0

    /// `request`'s result, from a batch that `run` computes (one result per request, in order).
    func join(_ request: Request, run: ([Request]) -> [Result]) -> Result {
        condition.lock()
        defer { condition.unlock() }
        let ticket = nextTicket
        nextTicket += 1
        waiting.append((ticket, request))
        while true {
            if let result = results.removeValue(forKey: ticket) { return result }
            if running {
                condition.wait()
                continue
            }
            running = true
            let batch = waiting
            waiting = []
            condition.unlock()
            let computed = run(batch.map(\.request))
            condition.lock()
            for (entry, result) in zip(batch, computed) { results[entry.ticket] = result }
            running = false
            condition.broadcast()
        }
    }
}

/// A pointer handed to concurrent workers that touch disjoint parts of what it points to.
/// @unchecked Sendable: callers guarantee the workers never touch the same elements.
struct UnsafeSendable<T>: @unchecked Sendable {
    let pointer: T
    init(_ pointer: T) { self.pointer = pointer }
}

/// OpenBLAS's thread count: process-wide in OpenBLAS, so set once, for the process's
/// `ComputeMode`, before the first scan — every core for `.latency`, one (scans side by side
/// on the callers' threads) for `.throughput`.
enum BLASThreads {
    static let count: Int = {
        let count = ProcessCompute.mode == .latency ? max(1, ProcessInfo.processInfo.activeProcessorCount) : 1
        openblas_set_num_threads(Int32(count))
        return count
    }()
}

import CKBKernels
import COpenBLAS
import Foundation
import KBCore

// The int8 copy of the vectors: approximate searches rescored exactly, and scans shared by
// concurrent searches.
extension VectorMatrix {
    /// Builds (and from now on maintains) the int8 copy used by `search(_:k:allowed:quantized:)`:
    /// a quarter of the memory traffic of the float32 scan.
    public func enableQuantization() {
        guard !lock.read({ quantizedEnabled }) else { return }
        // Quantizing reads every row: rows left in a file are loaded first (if they cannot be,
        // the copy stays unquantized and the exact scan reports the error).
        guard (try? holdFloats()) != nil else { return }
        lock.write {
            guard !quantizedEnabled else { return }
            quantizedEnabled = true
            quantizedRows = [Int8](repeating: 0, count: matrix.count)
            scales = [Float](repeating: 0, count: ids.count)
            signBits = [UInt64](repeating: 0, count: signCapacity(rows: ids.count))
            for row in 0..<ids.count { quantize(row: row) }
        }
    }

    /// Quantizes one float row into its int8 slot. Call with the write lock held.
    func quantize(row: Int) {
        matrix.withUnsafeBufferPointer { quantize(row: row, from: $0.baseAddress! + row * dimension) }
    }

    /// Quantizes `values` (row `row`'s floats) into the row's int8 slot. Call with the write lock held.
    func quantize(row: Int, from values: UnsafePointer<Float>) {
        let base = row * dimension
        var largest: Float = 0
        for j in 0..<dimension { largest = max(largest, abs(values[j])) }
        let scale = largest > 0 ? largest / 127 : 1
        scales[row] = scale
        for j in 0..<dimension { quantizedRows[base + j] = Int8((values[j] / scale).rounded()) }
        for word in 0..<signWords {
            var bits: UInt64 = 0
            for bit in 0..<min(64, dimension - word * 64) where values[word * 64 + bit] > 0 { bits |= 1 << UInt64(bit) }
            signBits[signSlot(row, word)] = bits
        }
    }

    /// Approximate search on the int8 copy (see `enableQuantization()`): the best `max(k·10, 100)`
    /// candidates by int8·int8 products are rescored exactly in float32, and the best `k` of
    /// those are returned with exact scores. Falls back to the exact scan when the copy is not
    /// kept or few rows are allowed.
    ///
    /// On large indexes a sign stage comes first: the query's values in four levels summed over
    /// each row's positive dimensions (`SignQuery`: its inner product with the row's signs) choose the rows the
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

    /// A float query as int8, scaled by its largest magnitude.
    static func quantizedQuery(_ query: [Float]) -> [Int8] {
        var largest: Float = 0
        for v in query { largest = max(largest, abs(v)) }
        let scale = largest > 0 ? largest / 127 : 1
        return query.map { Int8(($0 / scale).rounded()) }
    }

    /// Rows of the int8 copy scored for every search of a shared scan before the next rows:
    /// 2,048 rows of 384 int8 values (768 KiB) stay in the L2 cache meanwhile.
    static let sharedScanBlockBytes = 768 << 10

    /// One pass over the int8 copy for a batch of searches, then their exact rescoring.
    func scanQuantized(_ batch: [QuantizedScan]) -> [[TopK.Entry]] {
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
    func offer(_ dots: UnsafeBufferPointer<Int32>, from start: Int, to candidates: inout TopK, allowed: Set<Int64>?) {
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

    /// The best `k` of candidate rows (`candidates`: best first by their int8 products, as the
    /// int8 stages score them) by their exact float32 scores. When the rows are read from the
    /// file (one read each), a candidate past the first `k` is read only when its int8 product
    /// plus the most the int8 rounding can have taken from it reaches the `k`-th best exact score
    /// so far (`Int8Bound`): the others cannot enter, so the result is the same as with every
    /// candidate read. Call with the read lock held.
    func rescore(_ candidates: [TopK.Entry], query: [Float], k: Int) -> [TopK.Entry] {
        var top = TopK(k: k)
        let d = dimension
        if floatFile != nil {
            let bound = Int8Bound(query: query, dimension: d)
            var row = [Float](repeating: 0, count: d), read = 0
            row.withUnsafeMutableBufferPointer { r in
                query.withUnsafeBufferPointer { q in
                    quantizedRows.withUnsafeBufferPointer { rows in
                        for (position, candidate) in candidates.enumerated() {
                            let index = Int(candidate.id)
                            if position >= k, rows.count >= (index + 1) * d {
                                let most = bound.most(candidate.score, row: UnsafeBufferPointer(rebasing: rows[(index * d)..<((index + 1) * d)]),
                                                      scale: scales[index])
                                if most < top.threshold { continue }
                            }
                            read += 1
                            if !readRow(index, into: r.baseAddress!) {
                                // The file cannot be read (a disk error, a file cut short): the row's
                                // int8 copy, scaled back, stands in (its product within the int8
                                // rounding of the exact one) rather than the candidate being lost.
                                guard rows.count >= (index + 1) * d else { continue }
                                let scale = scales[index]
                                for j in 0..<d { r[j] = Float(rows[index * d + j]) * scale }
                            }
                            top.offer(id: ids[index], score: cblas_sdot(Int32(d), r.baseAddress!, 1, q.baseAddress!, 1))
                        }
                    }
                }
            }
            rescoreCounts.withLock { $0.candidates += candidates.count; $0.read += read }
            return top.sorted()
        }
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
}

/// The most a row's exact product with a query can exceed its int8 estimate (`Float(dot)` times
/// the row's scale, as the int8 stages score rows). With the query `q = s_q(q8 + f)` and the row
/// `r = s_r(r8 + e)`, every rounding `|f_j|, |e_j| ≤ ½`:
/// `q·r − s_q s_r q8·r8 = s_q s_r (Σ q8_j e_j + Σ f_j r8_j + Σ f_j e_j) ≤ s_q s_r (½‖q8‖₁ + ½‖r8‖₁ + d/4)`,
/// with a margin for the float rounding of both scores.
struct Int8Bound {
    let queryScale: Float, queryL1: Float, dimension: Int

    init(query: [Float], dimension: Int) {
        var largest: Float = 0
        for v in query { largest = max(largest, abs(v)) }
        queryScale = largest > 0 ? largest / 127 : 1
        queryL1 = VectorMatrix.quantizedQuery(query).reduce(0) { $0 + Float(abs(Int($1))) }
        self.dimension = dimension
    }

    /// The highest exact score a row with this int8 estimate (`Float(dot) · scale`) can have.
    func most(_ estimate: Float, row: UnsafeBufferPointer<Int8>, scale: Float) -> Float {
        var l1: Int32 = 0
        for value in row { l1 &+= abs(Int32(value)) }
        let slack = queryScale * scale * (0.5 * queryL1 + 0.5 * Float(l1) + 0.25 * Float(dimension))
        let value = estimate * queryScale
        return value + slack * 1.001 + abs(value) * 1e-5 + 1e-6
    }
}

/// One search of a shared quantized scan.
struct QuantizedScan: Sendable {
    let query: [Float]
    let k: Int
    let allowed: Set<Int64>?
}

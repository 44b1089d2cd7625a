import CKBKernels
import COpenBLAS
import Foundation
import KBCore

// Exact top-K for many queries at once (blocked sgemm on every core), and BLAS's thread count.
extension VectorMatrix {
    /// Rows scored per `sgemm` block in a batch search: keeps a block's scores in cache.
    static let batchBlockRows = 8192

    /// Top-K for many queries at once (no filters). Workers take blocks of rows, score each with
    /// one `sgemm` into their own heaps, and the heaps are merged.
    public func search(batch queries: [[Float]], k: Int) throws -> [[TopK.Entry]] {
        if let bad = queries.first(where: { $0.count != dimension }) { throw wrongDimension(bad.count, "query") }
        try holdFloats()
        return lock.read { batchTops(queries, k: k, rowNumbers: false) }
    }

    /// Each query's exact top `k` by blocked `sgemm`s, keyed by snippet id (or by row number with
    /// `rowNumbers`). Call with the read lock held.
    func batchTops(_ queries: [[Float]], k: Int, rowNumbers: Bool) -> [[TopK.Entry]] {
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

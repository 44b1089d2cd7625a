import COpenBLAS
import Foundation
public import KBCore

/// The vectors of one embedder held in memory as one contiguous row-major matrix, with a
/// parallel array of snippet ids, scored by inner product (cosine on normalised vectors) with
/// `cblas_sgemv` for one query and `cblas_sgemm` for a batch, then a bounded-heap top-K.
///
/// Filters select rows before ranking: when few rows are allowed their vectors are gathered and
/// scored alone; otherwise the whole matrix is scanned and disallowed rows are skipped during
/// selection. Either way a filter never shrinks K.
///
/// ```swift
/// let index = VectorIndex(dimension: 384)
/// index.upsert([(id: 1, vector: v)])
/// index.search(query, k: 10)   // [(id, score)], best first
/// ```
///
/// @unchecked Sendable: all state is guarded by `lock` (many readers, one writer).
public final class VectorIndex: @unchecked Sendable {
    public let dimension: Int
    private var ids: [Int64] = []
    private var matrix: [Float] = []
    private var rowOf: [Int64: Int] = [:]
    private let lock = ReadWriteLock()

    /// Below this fraction of allowed rows, a filtered search gathers rows instead of scanning all.
    public static let gatherFraction = 0.1

    /// Whether a search allowed `allowed` of `total` rows gathers them (true) or masks a full scan.
    public static func gathers(allowed: Int, of total: Int) -> Bool {
        Double(allowed) < Double(total) * gatherFraction
    }

    public init(dimension: Int) {
        self.dimension = dimension
    }

    public var count: Int { lock.read { ids.count } }

    /// Adds or replaces vectors by snippet id.
    public func upsert(_ entries: [(id: Int64, vector: [Float])]) {
        lock.write {
            for (id, vector) in entries {
                precondition(vector.count == dimension, "vector of \(vector.count) values in a \(dimension)-dim index")
                if let row = rowOf[id] {
                    matrix.replaceSubrange(row * dimension..<(row + 1) * dimension, with: vector)
                } else {
                    rowOf[id] = ids.count
                    ids.append(id)
                    matrix.append(contentsOf: vector)
                }
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
                }
                ids.removeLast()
                matrix.removeLast(dimension)
            }
        }
    }

    /// Replaces everything (a reload).
    public func reset(ids newIDs: [Int64], matrix newMatrix: [Float]) {
        precondition(newMatrix.count == newIDs.count * dimension)
        lock.write {
            ids = newIDs
            matrix = newMatrix
            rowOf = Dictionary(uniqueKeysWithValues: newIDs.enumerated().map { ($1, $0) })
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
    public func search(_ query: [Float], k: Int, allowed: Set<Int64>? = nil) -> [TopK.Entry] {
        precondition(query.count == dimension)
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

    /// Top-K for many queries at once with one `sgemm` (no filters).
    public func search(batch queries: [[Float]], k: Int) -> [[TopK.Entry]] {
        lock.read {
            let n = ids.count, q = queries.count
            guard n > 0, q > 0, k > 0 else { return queries.map { _ in [] } }
            var flat = [Float](); flat.reserveCapacity(q * dimension)
            for query in queries { precondition(query.count == dimension); flat.append(contentsOf: query) }
            var scores = [Float](repeating: 0, count: q * n)
            matrix.withUnsafeBufferPointer { m in
                flat.withUnsafeBufferPointer { f in
                    scores.withUnsafeMutableBufferPointer { s in
                        // scores[q × n] = queries[q × d] · matrix[n × d]ᵀ
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(q), Int32(n), Int32(dimension),
                                    1, f.baseAddress!, Int32(dimension), m.baseAddress!, Int32(dimension), 0, s.baseAddress!, Int32(n))
                    }
                }
            }
            return (0..<q).map { j in
                var top = TopK(k: k)
                scores.withUnsafeBufferPointer { s in
                    let row = s.baseAddress! + j * n
                    for i in 0..<n where row[i] >= top.threshold { top.offer(id: ids[i], score: row[i]) }
                }
                return top.sorted()
            }
        }
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

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
    var ids: [Int64] = []
    var matrix: [Float] = []
    var rowOf: [Int64: Int] = [:]
    /// The optional int8 copy: each row scaled by its largest magnitude (`scales[row]` = max|v|/127).
    var quantizedRows: [Int8] = []
    var scales: [Float] = []
    var quantizedEnabled = false
    /// The sign copy kept with the int8 one: bit j of a row's `signWords` words is set when the
    /// row's value j is positive. 48 bytes a row at 384 dimensions: a shelf's copy stays in cache.
    /// In blocks of 8 rows, word by word (`signSlot`), so that the sign stage scores 8 rows at
    /// once (`kb_sign_plane_rows`); a last block's missing rows are zeros.
    var signBits: [UInt64] = []
    /// Where the float rows are read from when `matrix` does not hold them (a matrix restored
    /// from a saved file with its int8 copy: see `restored(from:dimension:signStageFrom:floatsOnDisk:)`);
    /// nil when it does. Whatever needs every row loads them first (`holdFloats`).
    var floatFile: FloatFile?
    /// With `floatFile`: the rows whose floats are no longer the file's — rewritten, moved into
    /// by a removal, or added past the file's end — held here, so that a write (a memory added, a
    /// book uploaded, a saved copy catching up) keeps the other rows in the file instead of
    /// loading them all. Every row not here is the file's.
    var patchedRows: [Int: [Float]] = [:]
    let signWords: Int
    let signStageRows: Int
    /// Rows the index needs before the sign stage searches in cells (`SignCells`).
    let signCellsRows: Int
    let lock = ReadWriteLock()
    /// How deep the sign stage goes (see `SignStage`), guarded by its own lock so that a search
    /// holding the read lock can record a calibration.
    let signStage = LockedValue(SignStage())
    /// Rescoring from the file so far: candidates, and rows read (see `rescore(_:query:k:)`).
    let rescoreCounts = LockedValue(RescoreCounts())

    /// What rescoring from the file has done so far.
    public struct RescoreCounts: Sendable, Hashable {
        /// Candidates offered, all together.
        public var candidates = 0
        /// Rows read for them: the others could not enter, by their int8 products' error bound.
        public var read = 0
    }

    public var rescoring: RescoreCounts { rescoreCounts.withLock { $0 } }

    /// A quantized search rescores this many candidates per wanted hit (at least 100) in float32.
    public static let rescoreFactor = 10

    /// Below this fraction of allowed rows, a filtered search gathers rows instead of scanning all.
    public static let gatherFraction = 0.1

    /// Whether a search allowed `allowed` of `total` rows gathers them (true) or masks a full scan.
    public static func gathers(allowed: Int, of total: Int) -> Bool {
        Double(allowed) < Double(total) * gatherFraction
    }

    /// - Parameters:
    ///   - signStageFrom: rows the index needs before its int8 searches start with the sign stage
    ///     (default `signStageMinimumRows`).
    ///   - cellsFrom: rows it needs before the sign stage searches in cells (default `signCellsMinimumRows`).
    public init(dimension: Int, signStageFrom: Int = VectorMatrix.signStageMinimumRows, cellsFrom: Int = VectorMatrix.signCellsMinimumRows) {
        self.dimension = dimension
        signStageRows = signStageFrom
        signCellsRows = cellsFrom
        signWords = (dimension + 63) / 64
        _ = BLASThreads.count
    }

    public var count: Int { lock.read { ids.count } }

    /// Where word `word` of row `row`'s sign code is in `signBits`.
    @inline(__always) func signSlot(_ row: Int, _ word: Int) -> Int { (row >> 3) * 8 * signWords + word * 8 + (row & 7) }

    /// The words `signBits` has for `rows` rows (whole blocks of 8).
    func signCapacity(rows: Int) -> Int { (rows + 7) / 8 * 8 * signWords }

    /// Adds or replaces vectors by snippet id. A vector of another dimension is an error, and
    /// then nothing changes.
    public func upsert(_ entries: [(id: Int64, vector: [Float])]) throws {
        if let bad = entries.first(where: { $0.vector.count != dimension }) { throw wrongDimension(bad.vector.count, "vector") }
        guard !entries.isEmpty else { return }
        lock.write {
            for (id, vector) in entries {
                let row: Int
                if let existing = rowOf[id] {
                    row = existing
                    if floatFile != nil {
                        patchedRows[row] = vector
                    } else {
                        matrix.replaceSubrange(row * dimension..<(row + 1) * dimension, with: vector)
                    }
                } else {
                    row = ids.count
                    rowOf[id] = row
                    ids.append(id)
                    if floatFile != nil { patchedRows[row] = vector } else { matrix.append(contentsOf: vector) }
                    if quantizedEnabled {
                        quantizedRows.append(contentsOf: repeatElement(0, count: dimension))
                        scales.append(0)
                        if row % 8 == 0 { signBits.append(contentsOf: repeatElement(0, count: 8 * signWords)) }
                    }
                }
                if quantizedEnabled {
                    vector.withUnsafeBufferPointer { v in
                        quantize(row: row, from: v.baseAddress!)
                        placeInCell(row, vector: v.baseAddress!)
                    }
                }
            }
        }
    }

    /// Removes vectors by snippet id (the last row moves into the hole).
    public func remove(_ removed: [Int64]) throws {
        guard lock.read({ removed.contains { rowOf[$0] != nil } }) else { return }
        try lock.write {
            for id in removed {
                guard let row = rowOf[id] else { continue }
                let last = ids.count - 1
                if let floatFile, row != last {
                    // The last row's floats move into the hole (read first: a row that cannot be
                    // read leaves this removal undone, and the error said).
                    var moved = [Float](repeating: 0, count: dimension)
                    guard moved.withUnsafeMutableBufferPointer({ readRow(last, into: $0.baseAddress!) }) else {
                        throw KBError(.database, "Cannot read the vectors saved in \(floatFile.path).")
                    }
                    patchedRows[row] = moved
                }
                patchedRows.removeValue(forKey: last)
                rowOf.removeValue(forKey: id)
                if quantizedEnabled {
                    signStage.withLock { stage in
                        stage.calibration?.cells?.detach(row)
                        stage.calibration?.cells?.renumber(from: last, to: row)
                    }
                }
                if row != last {
                    let moved = ids[last]
                    ids[row] = moved
                    rowOf[moved] = row
                    if floatFile == nil {
                        matrix.withUnsafeMutableBufferPointer { m in
                            (m.baseAddress! + row * dimension).update(from: m.baseAddress! + last * dimension, count: dimension)
                        }
                    }
                    if quantizedEnabled {
                        quantizedRows.withUnsafeMutableBufferPointer { q in
                            (q.baseAddress! + row * dimension).update(from: q.baseAddress! + last * dimension, count: dimension)
                        }
                        scales[row] = scales[last]
                        for word in 0..<signWords { signBits[signSlot(row, word)] = signBits[signSlot(last, word)] }
                    }
                }
                ids.removeLast()
                if floatFile == nil { matrix.removeLast(dimension) }
                if quantizedEnabled {
                    quantizedRows.removeLast(dimension)
                    scales.removeLast()
                    if last % 8 == 0 {
                        signBits.removeLast(8 * signWords)
                    } else {
                        for word in 0..<signWords { signBits[signSlot(last, word)] = 0 }
                    }
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
            floatFile = nil
            patchedRows = [:]
            // The cells name rows by number: they are made again with the next calibration.
            signStage.withLock { stage in
                if stage.calibration?.cells != nil { stage = SignStage(counts: stage.counts) }
            }
            rowOf = Dictionary(uniqueKeysWithValues: newIDs.enumerated().map { ($1, $0) })
            if quantizedEnabled {
                quantizedRows = [Int8](repeating: 0, count: matrix.count)
                scales = [Float](repeating: 0, count: ids.count)
                signBits = [UInt64](repeating: 0, count: signCapacity(rows: ids.count))
                for row in 0..<ids.count { quantize(row: row) }
            }
        }
    }

    /// The stored vector of a snippet.
    public func vector(for id: Int64) -> [Float]? {
        lock.read {
            guard let row = rowOf[id] else { return nil }
            var vector = [Float](repeating: 0, count: dimension)
            return vector.withUnsafeMutableBufferPointer { readRow(row, into: $0.baseAddress!) } ? vector : nil
        }
    }

    /// Row `row`'s floats into `buffer`: from `matrix`, else its patch or the file; false when
    /// the file cannot be read. Call with the lock held.
    func readRow(_ row: Int, into buffer: UnsafeMutablePointer<Float>) -> Bool {
        guard let floatFile else {
            matrix.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + row * dimension, count: dimension) }
            return true
        }
        if let patch = patchedRows[row] {
            patch.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: dimension) }
            return true
        }
        return row < floatFile.rows && floatFile.read(row: row, into: buffer)
    }

    /// Loads the float rows into memory when they are read from a file (before anything that
    /// needs them all: an exact scan, a write).
    func holdFloats() throws {
        guard lock.read({ floatFile != nil }) else { return }
        try lock.write {
            guard let file = floatFile else { return }
            var all = try file.all()
            let count = ids.count * dimension
            if all.count > count { all.removeLast(all.count - count) }
            if all.count < count { all.append(contentsOf: repeatElement(0, count: count - all.count)) }
            for (row, patch) in patchedRows { all.replaceSubrange(row * dimension..<(row + 1) * dimension, with: patch) }
            matrix = all
            floatFile = nil
            patchedRows = [:]
        }
    }

    /// Filtered searches that read at most this many rows from a saved file row by row; more
    /// load every row first.
    static let rowsReadFromFile = 20_000

    /// The `k` rows with the highest inner product with `query`, best first.
    /// - Parameter allowed: when given, only these snippet ids may be returned.
    public func search(_ query: [Float], k: Int, allowed: Set<Int64>? = nil) throws -> [TopK.Entry] {
        guard query.count == dimension else { throw wrongDimension(query.count, "query") }
        if let allowed, Self.gathers(allowed: allowed.count, of: count), allowed.count <= Self.rowsReadFromFile {
            // A few rows: gathered from the file if the rows are there.
        } else {
            try holdFloats()
        }
        return try lock.read {
            let n = ids.count
            guard n > 0, k > 0 else { return [] }
            var top = TopK(k: k)
            if let allowed, Self.gathers(allowed: allowed.count, of: n) {
                // Gather: score only the allowed rows.
                let rows = allowed.compactMap { rowOf[$0] }
                guard !rows.isEmpty else { return [] }
                var gathered = [Float](repeating: 0, count: rows.count * dimension)
                if let floatFile {
                    try gathered.withUnsafeMutableBufferPointer { g in
                        for (i, row) in rows.enumerated() where !readRow(row, into: g.baseAddress! + i * dimension) {
                            throw KBError(.database, "Cannot read the vectors saved in \(floatFile.path).")
                        }
                    }
                } else {
                    matrix.withUnsafeBufferPointer { m in
                        gathered.withUnsafeMutableBufferPointer { g in
                            for (i, row) in rows.enumerated() {
                                (g.baseAddress! + i * dimension).update(from: m.baseAddress! + row * dimension, count: dimension)
                            }
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

    /// Concurrent quantized searches waiting for, or in, a shared scan.
    let scans = Gathering<QuantizedScan, [TopK.Entry]>()
    /// Concurrent sign-stage searches waiting for, or in, a shared pass over the sign codes: at
    /// most 8 a pass (each needs a score per row, 4 MB at a million rows).
    let signScans = Gathering<SignQuery, (scores: ArraySlice<Int32>, best: Int32)>(limit: 8)

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

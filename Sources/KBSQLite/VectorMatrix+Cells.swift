import CKBKernels
import COpenBLAS
import Foundation
import KBCore

/// A coarse partition of a very large index's rows for the sign stage: rows grouped in cells
/// around centres (see `VectorMatrix.makeSignCells`), so that a search scores the signs of the
/// rows of the few cells nearest the query instead of every row's. How many cells a search takes
/// is calibrated with the sign stage's depth (`SignStage.Tier.probes`), on the same queries: as
/// many as hold 99.8% of their exact top 10 (top 50 for larger searches), doubled; when that
/// is a quarter of the cells or more, the stage does without them.
///
/// Each cell keeps its rows' numbers and a copy of their sign codes in the stage's layout
/// (blocks of 8 rows, word by word), so a cell's codes are read in one run: 48 bytes a row more
/// at 384 dimensions (48 MB at a million rows). Writes keep the cells: a new row continues the
/// last cell or starts one (as when the cells were made), a replaced one joins the cell of its
/// nearest centre, a removed one leaves its cell (the cell's last row takes its place there).
struct SignCells: Sendable {
    /// A cell is cut after at least `shortestRun` rows where the next row's cosine with the
    /// cell's mean falls below half the cell's rows' own (a new text, or a new topic in one), and
    /// always after `longestRun` rows.
    static let shortestRun = 64
    static let longestRun = 512

    let dimension: Int
    let words: Int
    /// Each cell's centre (unit length), one after another; and all of them in int8 at one scale,
    /// which ranks them for a query (`ranked`).
    private(set) var centres: [Float]
    private(set) var centres8: [Int8] = []
    private var centreScale: Float = 1
    /// Each row's cell, and where it is among the cell's rows.
    var cellOf: [UInt32]
    var slotOf: [UInt32]
    /// Each cell's rows, and their sign codes (blocks of 8 rows; a last block's missing rows zero).
    var rows: [[UInt32]]
    var signs: [[UInt64]]
    /// The last cell while rows written after it can continue it: the sum of its rows and of
    /// their cosines with its mean as they joined (nil once read back from a file: the next new
    /// row starts a cell).
    var open: Run?

    struct Run: Sendable {
        var cell: Int
        var sum: [Float]
        var cosines: Float = 0
        var size = 0

        init(cell: Int, dimension: Int) {
            self.cell = cell
            sum = [Float](repeating: 0, count: dimension)
        }

        /// Adds a row unless it starts a new cell (see `shortestRun`); whether it was added.
        mutating func take(_ row: UnsafePointer<Float>, dimension d: Int) -> Bool {
            if size > 0 {
                let length = cblas_snrm2(Int32(d), sum, 1), rowLength = cblas_snrm2(Int32(d), row, 1)
                let cosine = length > 0 && rowLength > 0 ? cblas_sdot(Int32(d), sum, 1, row, 1) / (length * rowLength) : 0
                if size >= SignCells.longestRun || (size >= SignCells.shortestRun && cosine < 0.5 * cosines / Float(size - 1)) { return false }
                cosines += cosine
            }
            cblas_saxpy(Int32(d), 1, row, 1, &sum, 1)
            size += 1
            return true
        }
    }

    var count: Int { rows.count }

    /// The cells of rows whose cells are `cellOf`, their sign codes taken from `signBits`.
    init(dimension: Int, words: Int, centres: [Float], cellOf: [UInt32], signBits: [UInt64]) {
        self.dimension = dimension
        self.words = words
        self.centres = centres
        let count = centres.count / max(1, dimension)
        self.cellOf = cellOf
        slotOf = [UInt32](repeating: 0, count: cellOf.count)
        rows = Array(repeating: [], count: count)
        signs = Array(repeating: [], count: count)
        for (row, cell) in cellOf.enumerated() where Int(cell) < count {
            slotOf[row] = UInt32(rows[Int(cell)].count)
            rows[Int(cell)].append(UInt32(row))
        }
        for cell in 0..<count {
            signs[cell] = [UInt64](repeating: 0, count: (rows[cell].count + 7) / 8 * 8 * words)
            for (slot, row) in rows[cell].enumerated() {
                for word in 0..<words { signs[cell][Self.slot(slot, word, words)] = signBits[Self.slot(Int(row), word, words)] }
            }
        }
        quantizeCentres()
    }

    /// The int8 copy of the centres, at the scale of the largest value of any.
    private mutating func quantizeCentres() {
        var largest: Float = 0
        for v in centres { largest = max(largest, abs(v)) }
        centreScale = largest > 0 ? largest / 127 : 1
        centres8 = centres.map { Int8(($0 / centreScale).rounded()) }
    }

    /// Sets one centre (the open cell's as it grows), in int8 at the others' scale.
    private mutating func setCentre(_ cell: Int, from sum: [Float]) {
        let length = cblas_snrm2(Int32(dimension), sum, 1)
        if centres8.count < centres.count { centres8.append(contentsOf: repeatElement(0, count: centres.count - centres8.count)) }
        for j in 0..<dimension {
            let value = length > 0 ? sum[j] / length : 0
            centres[cell * dimension + j] = value
            centres8[cell * dimension + j] = Int8(max(-127, min(127, (value / centreScale).rounded())))
        }
    }

    /// Where word `word` of entry `entry` is in a block layout of `words` words a row.
    @inline(__always) static func slot(_ entry: Int, _ word: Int, _ words: Int) -> Int { (entry >> 3) * 8 * words + word * 8 + (entry & 7) }

    /// Whether they fit an index of `rows` rows of `dimension` dimensions (a saved file's parts).
    func fits(rows: Int, dimension: Int) -> Bool {
        self.dimension == dimension && cellOf.count == rows && !centres.isEmpty && centres.count % dimension == 0
            && cellOf.allSatisfy { Int($0) < count }
    }

    /// The first `first` cells by their centres' (int8) inner product with `query`, nearest first.
    func ranked(_ query: [Float], first: Int) -> [Int] {
        let q8 = VectorMatrix.quantizedQuery(query), n = count, wanted = min(first, n)
        guard wanted > 0 else { return [] }
        var dots = [Int32](repeating: 0, count: n)
        centres8.withUnsafeBufferPointer { c in
            q8.withUnsafeBufferPointer { q in
                dots.withUnsafeMutableBufferPointer { out in kb_i8_dot_rows(c.baseAddress!, n, dimension, q.baseAddress!, out.baseAddress!) }
            }
        }
        var picked = [UInt32](repeating: 0, count: wanted)
        let got = dots.withUnsafeBufferPointer { d in picked.withUnsafeMutableBufferPointer { kb_top_rows(d.baseAddress!, n, wanted, $0.baseAddress!) } }
        return picked.prefix(got).map(Int.init).sorted { dots[$0] > dots[$1] || (dots[$0] == dots[$1] && $0 < $1) }
    }

    /// The cell whose centre is nearest `vector`.
    func nearest(_ vector: UnsafePointer<Float>) -> Int {
        ranked(Array(UnsafeBufferPointer(start: vector, count: dimension)), first: 1).first ?? 0
    }

    /// Adds row `row` (the next row of the index, or one that `detach` took out) to cell `cell`,
    /// with its sign code from `signBits`.
    mutating func attach(_ row: Int, to cell: Int, signBits: [UInt64]) {
        if row == cellOf.count {
            cellOf.append(0)
            slotOf.append(0)
        }
        let slot = rows[cell].count
        cellOf[row] = UInt32(cell)
        slotOf[row] = UInt32(slot)
        rows[cell].append(UInt32(row))
        if slot % 8 == 0 { signs[cell].append(contentsOf: repeatElement(0, count: 8 * words)) }
        for word in 0..<words { signs[cell][Self.slot(slot, word, words)] = signBits[Self.slot(row, word, words)] }
    }

    /// Adds the index's new last row `row`: to the open cell when it continues it, else to a new
    /// cell it opens.
    mutating func append(_ row: Int, vector: UnsafePointer<Float>, signBits: [UInt64]) {
        if open == nil || !open!.take(vector, dimension: dimension) {
            rows.append([])
            signs.append([])
            centres.append(contentsOf: repeatElement(0, count: dimension))
            open = Run(cell: rows.count - 1, dimension: dimension)
            _ = open!.take(vector, dimension: dimension)
        }
        // The open cell's centre follows its rows.
        setCentre(open!.cell, from: open!.sum)
        attach(row, to: open!.cell, signBits: signBits)
    }

    /// Takes row `row` out of its cell (the cell's last row takes its place); `cellOf` and
    /// `slotOf` keep an entry for it until `renumber` or `attach`.
    mutating func detach(_ row: Int) {
        let cell = Int(cellOf[row]), slot = Int(slotOf[row]), last = rows[cell].count - 1
        if slot != last {
            let moved = Int(rows[cell][last])
            rows[cell][slot] = UInt32(moved)
            slotOf[moved] = UInt32(slot)
            for word in 0..<words { signs[cell][Self.slot(slot, word, words)] = signs[cell][Self.slot(last, word, words)] }
        }
        rows[cell].removeLast()
        if last % 8 == 0 {
            signs[cell].removeLast(8 * words)
        } else {
            for word in 0..<words { signs[cell][Self.slot(last, word, words)] = 0 }
        }
    }

    /// The index's last row, `from`, is now row `to` (a removal moved it into the hole): its
    /// cell names it so; the entries for `from` go.
    mutating func renumber(from: Int, to: Int) {
        if from != to {
            let cell = Int(cellOf[from]), slot = Int(slotOf[from])
            rows[cell][slot] = UInt32(to)
            cellOf[to] = UInt32(cell)
            slotOf[to] = UInt32(slot)
        }
        cellOf.removeLast()
        slotOf.removeLast()
    }
}

extension VectorMatrix {
    /// Rows an index needs before its sign stage searches in cells (`SignCells`): below it one
    /// pass over every row's signs costs less than a millisecond.
    public static let signCellsMinimumRows = 262_144

    /// How many cells the sign stage's searches are made in; 0 without them.
    public var signCellCount: Int {
        lock.read { quantizedEnabled ? (signCalibration() == nil ? 0 : signStage.withLock { $0.calibration?.cells?.count ?? 0 }) : 0 }
    }

    /// How many cells each tier of the sign stage takes for a top 10 and a top 50 (empty without cells).
    public var signCellProbes: [[Int]] {
        lock.read { quantizedEnabled ? signCalibration()?.tiers.map(\.probes) ?? [] : [] }
    }

    /// Cells of the index's rows: runs of consecutive rows, cut where a row turns away from the
    /// run's mean (see `SignCells.shortestRun`), each around the (normalised) mean of its rows.
    /// Rows are added as they are written — a book's passages, a conversation's turns, together —
    /// so a run holds related rows, as embeddings of one text's parts are; where it does not (rows
    /// written in no order), the calibration finds that a query's top rows are spread over most
    /// cells, and the sign stage does without them. Call with the read lock held and the float
    /// rows in memory.
    func makeSignCells() -> SignCells {
        let n = ids.count, d = dimension
        var centres: [Float] = [], cellOf = [UInt32](repeating: 0, count: n)
        var run = SignCells.Run(cell: 0, dimension: d)
        func close() {
            let length = cblas_snrm2(Int32(d), run.sum, 1)
            centres += run.sum.map { length > 0 ? $0 / length : 0 }
        }
        matrix.withUnsafeBufferPointer { m in
            for row in 0..<n {
                if !run.take(m.baseAddress! + row * d, dimension: d) {
                    close()
                    run = SignCells.Run(cell: run.cell + 1, dimension: d)
                    _ = run.take(m.baseAddress! + row * d, dimension: d)
                }
                cellOf[row] = UInt32(run.cell)
            }
        }
        if n > 0 { close() }
        var cells = SignCells(dimension: d, words: signWords, centres: centres, cellOf: cellOf, signBits: signBits)
        cells.open = n > 0 ? run : nil
        return cells
    }

    static func normalise(_ rows: inout [Float], dimension d: Int) {
        for start in stride(from: 0, to: rows.count, by: d) {
            var norm: Float = 0
            for j in start..<start + d { norm += rows[j] * rows[j] }
            norm = norm.squareRoot()
            guard norm > 0 else { continue }
            for j in start..<start + d { rows[j] /= norm }
        }
    }

    /// How many of the nearest cells hold `share` of the rows `wanted` (each query's own), doubled:
    /// the cells a search takes. Call with the read lock held.
    static func cellsHolding(_ wanted: [[Int]], queries: [[Float]], cells: SignCells, share: Double = 0.998) -> Int {
        var ranks: [Int] = []
        for (query, rows) in zip(queries, wanted) {
            let order = cells.ranked(query, first: cells.count)
            var rankOf = [Int](repeating: 0, count: cells.count)
            for (rank, cell) in order.enumerated() { rankOf[cell] = rank + 1 }
            for row in rows { ranks.append(rankOf[Int(cells.cellOf[row])]) }
        }
        guard !ranks.isEmpty else { return cells.count }
        ranks.sort()
        return min(cells.count, max(SignStage.minimumProbes, 2 * ranks[min(ranks.count - 1, Int(Double(ranks.count) * share))]))
    }

    /// The sign scores of the rows of `query`'s nearest `probes` cells (`order`, from `from` on),
    /// appended to `scores` with the rows' numbers to `rows`; the best of them.
    /// Call with the read lock held.
    func cellScores(_ query: SignQuery, cells: SignCells, order: [Int], from: Int, probes: Int,
                    scores: inout [Int32], rows: inout [UInt32]) -> Int32 {
        var best = Int32.min
        for cell in order[from..<min(order.count, probes)] {
            let members = cells.rows[cell]
            guard !members.isEmpty else { continue }
            let start = scores.count
            scores.append(contentsOf: repeatElement(0, count: members.count))
            rows.append(contentsOf: members)
            cells.signs[cell].withUnsafeBufferPointer { bits in
                query.planes.withUnsafeBufferPointer { planes in
                    scores.withUnsafeMutableBufferPointer { out in
                        best = max(best, kb_sign_plane_rows(bits.baseAddress!, members.count, cells.words, planes.baseAddress!, query.bits,
                                                            out.baseAddress! + start))
                    }
                }
            }
        }
        return best
    }
}

extension VectorMatrix {
    /// Puts a new row (`vector`, its floats) in the open cell or a new one, a rewritten one in the
    /// cell of its nearest centre, when the index has cells. Call with the write lock held, the
    /// row quantized.
    func placeInCell(_ row: Int, vector: UnsafePointer<Float>) {
        signStage.withLock { stage in
            guard stage.calibration?.cells != nil else { return }
            if row < stage.calibration!.cells!.cellOf.count {
                stage.calibration!.cells!.detach(row)
                stage.calibration!.cells!.attach(row, to: stage.calibration!.cells!.nearest(vector), signBits: signBits)
            } else {
                stage.calibration!.cells!.append(row, vector: vector, signBits: signBits)
            }
        }
    }
}

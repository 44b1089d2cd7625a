import Foundation
import KBCore

// A vector matrix saved to a file and read back (see `SavedSearchData`): the vectors, their int8
// and sign copies and the sign stage's calibration, as they are in memory.
extension VectorMatrix {
    /// The matrix as a saved file's numbers and sections. The arrays are taken as they are under
    /// the read lock (shared, not copied): later writes to the matrix copy them instead, so the
    /// sections stay one consistent state however long writing them takes.
    func savedForm() -> (numbers: [String: [Double]], sections: [SavedFile.Section]) {
        let (ids, matrix, quantized, int8, scales, signs, file, patches, stage) = lock.read {
            (self.ids, self.matrix, quantizedEnabled, quantizedRows, self.scales, signBits, floatFile, patchedRows,
             signStage.withLock { ($0.rows, $0.calibration) })
        }
        var numbers: [String: [Double]] = ["dimension": [Double(dimension)], "quantized": [quantized ? 1 : 0]]
        var cellSections: [SavedFile.Section] = []
        if stage.0 > 0 {
            numbers["signStageRows"] = [Double(stage.0)]
            numbers["signStageTiers"] = stage.1?.tiers.flatMap { [Double($0.depth), Double($0.closeness)] } ?? []
            if let cells = stage.1?.cells {
                // A tier searched over every row's signs (no cells): 0, 0.
                numbers["signStageProbes"] = stage.1?.tiers.flatMap { $0.probes.isEmpty ? [0, 0] : $0.probes.map(Double.init) } ?? []
                cellSections = [.array("cellCentres", cells.centres), .array("cellOf", cells.cellOf)]
            }
        }
        var floats = SavedFile.Section.array("matrix", matrix)
        if let file {
            // The rows are still in the file they were restored from (open, so readable even once
            // this save has replaced it), in the same order — but for those written since, patched.
            let d = file.dimension
            floats = SavedFile.Section(name: "matrix", bytes: ids.count * d * 4) { output in
                var buffer = [Float](repeating: 0, count: 4096 * d)
                for start in stride(from: 0, to: ids.count, by: 4096) {
                    let count = min(4096, ids.count - start), fromFile = max(0, min(count, file.rows - start))
                    try buffer.withUnsafeMutableBufferPointer { b in
                        guard fromFile == 0 || file.read(row: start, count: fromFile, into: b.baseAddress!) else {
                            throw KBError(.database, "Cannot read the vectors saved in \(file.path).")
                        }
                        for row in start..<(start + count) {
                            guard let patch = patches[row] else { continue }
                            patch.withUnsafeBufferPointer { (b.baseAddress! + (row - start) * d).update(from: $0.baseAddress!, count: d) }
                        }
                        try output.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[0..<count * d * 4]))
                    }
                }
            }
        }
        var sections: [SavedFile.Section] = [.array("ids", ids), floats]
        if quantized { sections += [.array("int8", int8), .array("scales", scales), .array("signs", signs)] + cellSections }
        return (numbers, sections)
    }

    /// A matrix read back from a saved file; an error when the file's parts do not fit together.
    /// - Parameter floatsOnDisk: leave the float rows in the file (unless the file holds an int8
    ///   copy without the sign stage's calibration, which needs them): a quantized search reads
    ///   only the rows it rescores, a filtered one of a few rows (a user's memories) only those;
    ///   anything that needs them all (an exact scan, a write) loads them then.
    /// This index written to `path` and read back with its float rows left in the file, as
    /// `kb serve` opens a large index (searches rescore from the file): for benchmarks.
    public func savedAndRestored(at path: String) throws -> VectorMatrix {
        let form = savedForm()
        try SavedFile.write(to: path, stamp: .init(created: "saved", generation: 1, kind: "vectors", detail: ""), numbers: form.numbers, sections: form.sections)
        return try Self.restored(from: SavedFile(path: path), dimension: dimension, signStageFrom: signStageRows, cellsFrom: signCellsRows, floatsOnDisk: true)
    }

    static func restored(from file: SavedFile, dimension: Int, signStageFrom: Int = VectorMatrix.signStageMinimumRows,
                         cellsFrom: Int = VectorMatrix.signCellsMinimumRows, floatsOnDisk: Bool = false) throws -> VectorMatrix {
        let index = VectorMatrix(dimension: dimension, signStageFrom: signStageFrom, cellsFrom: cellsFrom)
        guard try Int(file.number("dimension")) == dimension else { throw KBError(.database, "\(file.path) holds vectors of another dimension.") }
        let ids: [Int64] = try file.array("ids")
        let quantized = try file.number("quantized") == 1
        let onDisk = floatsOnDisk && (!quantized || file.numbers["signStageRows"] != nil || ids.count < signStageFrom)
        var matrix: [Float] = []
        if onDisk {
            guard let range = file.range("matrix"), range.bytes == ids.count * dimension * 4 else {
                throw KBError(.database, "\(file.path): the vectors are not \(ids.count) rows.")
            }
            index.floatFile = try FloatFile(path: file.path, offset: range.offset, rows: ids.count, dimension: dimension)
        } else {
            matrix = try file.array("matrix")
        }
        guard onDisk || matrix.count == ids.count * dimension else { throw KBError(.database, "\(file.path): \(matrix.count) values are not \(ids.count) vectors.") }
        let rowOf = Dictionary(ids.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        guard rowOf.count == ids.count else { throw KBError(.database, "\(file.path) holds a snippet's vector twice.") }
        var int8: [Int8] = [], scales: [Float] = [], signs: [UInt64] = []
        if quantized {
            int8 = try file.array("int8")
            scales = try file.array("scales")
            signs = try file.array("signs")
            guard int8.count == ids.count * dimension, scales.count == ids.count, signs.count == index.signCapacity(rows: ids.count) else {
                throw KBError(.database, "\(file.path): the int8 and sign copies do not match the vectors.")
            }
        }
        index.lock.write {
            index.ids = ids
            index.matrix = matrix
            index.rowOf = rowOf
            index.quantizedEnabled = quantized
            index.quantizedRows = int8
            index.scales = scales
            index.signBits = signs
        }
        if let rows = file.numbers["signStageRows"]?.first, let tiers = file.numbers["signStageTiers"], tiers.count % 2 == 0 {
            var cells: SignCells?, probes: [Double] = []
            if let counts = file.numbers["signStageProbes"] {
                let centres: [Float] = try file.array("cellCentres"), cellOf: [UInt32] = try file.array("cellOf")
                guard quantized, counts.count == tiers.count, cellOf.count == ids.count else {
                    throw KBError(.database, "\(file.path): the sign stage's cells do not match the vectors.")
                }
                let made = SignCells(dimension: dimension, words: index.signWords, centres: centres, cellOf: cellOf, signBits: signs)
                guard made.fits(rows: ids.count, dimension: dimension) else {
                    throw KBError(.database, "\(file.path): the sign stage's cells do not match the vectors.")
                }
                cells = made
                probes = counts
            }
            index.signStage.withLock { stage in
                stage.rows = Int(rows)
                stage.calibration = tiers.isEmpty ? nil : SignStage.Calibration(tiers: stride(from: 0, to: tiers.count, by: 2).map {
                    SignStage.Tier(depth: Int(tiers[$0]), closeness: Float(tiers[$0 + 1]),
                                   probes: probes.isEmpty || probes[$0] == 0 ? [] : [Int(probes[$0]), Int(probes[$0 + 1])],
                                   far: !SignStage.tierCells[min($0 / 2, SignStage.tierCells.count - 1)])
                }, cells: cells)
            }
        }
        return index
    }
}

/// A restored matrix's float rows left in its saved file and read when needed (see
/// `VectorMatrix.floatFile`): each row by `pread`, through the page cache, which the kernel
/// shares and reclaims, instead of 1.5 GB of a million rows held by the process.
///
/// @unchecked Sendable: the descriptor is only read (pread is safe from many threads); it stays
/// open until `deinit`, so a file replaced meanwhile by a newer save is still read whole.
final class FloatFile: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let offset: Int
    let rows: Int
    let dimension: Int

    init(path: String, offset: Int, rows: Int, dimension: Int) throws {
        fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw KBError(.database, "Cannot open \(path): \(String(cString: strerror(errno))).") }
        self.path = path
        self.offset = offset
        self.rows = rows
        self.dimension = dimension
    }

    deinit { close(fd) }

    /// Reads `count` rows from `row` into `buffer`; false when the file cannot be read.
    func read(row: Int, count: Int = 1, into buffer: UnsafeMutablePointer<Float>) -> Bool {
        let bytes = count * dimension * 4
        var done = 0
        while done < bytes {
            let got = pread(fd, UnsafeMutableRawPointer(buffer) + done, bytes - done, off_t(offset + row * dimension * 4 + done))
            guard got > 0 else { return false }
            done += got
        }
        return true
    }

    /// Every row, in order.
    func all() throws -> [Float] {
        guard rows > 0 else { return [] }
        let values = [Float](unsafeUninitializedCapacity: rows * dimension) { buffer, initialized in
            initialized = read(row: 0, count: rows, into: buffer.baseAddress!) ? rows * dimension : 0
        }
        guard values.count == rows * dimension else {
            throw KBError(.database, "Cannot read the vectors saved in \(path): \(String(cString: strerror(errno))).")
        }
        return values
    }
}

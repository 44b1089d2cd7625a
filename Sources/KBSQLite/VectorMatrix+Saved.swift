import Foundation
import KBCore

// A vector matrix saved to a file and read back (see `SavedSearchData`): the vectors, their int8
// and sign copies and the sign stage's calibration, as they are in memory.
extension VectorMatrix {
    /// The matrix as a saved file's numbers and sections. The arrays are taken as they are under
    /// the read lock (shared, not copied): later writes to the matrix copy them instead, so the
    /// sections stay one consistent state however long writing them takes.
    func savedForm() -> (numbers: [String: [Double]], sections: [SavedFile.Section]) {
        let (ids, matrix, quantized, int8, scales, signs) = lock.read {
            (self.ids, self.matrix, quantizedEnabled, quantizedRows, self.scales, signBits)
        }
        var numbers: [String: [Double]] = ["dimension": [Double(dimension)], "quantized": [quantized ? 1 : 0]]
        let stage = signStage.withLock { ($0.rows, $0.calibration) }
        if stage.0 > 0 {
            numbers["signStageRows"] = [Double(stage.0)]
            numbers["signStageTiers"] = stage.1?.tiers.flatMap { [Double($0.depth), Double($0.closeness)] } ?? []
        }
        var sections: [SavedFile.Section] = [.array("ids", ids), .array("matrix", matrix)]
        if quantized { sections += [.array("int8", int8), .array("scales", scales), .array("signs", signs)] }
        return (numbers, sections)
    }

    /// A matrix read back from a saved file; an error when the file's parts do not fit together.
    static func restored(from file: SavedFile, dimension: Int, signStageFrom: Int = VectorMatrix.signStageMinimumRows) throws -> VectorMatrix {
        let index = VectorMatrix(dimension: dimension, signStageFrom: signStageFrom)
        guard try Int(file.number("dimension")) == dimension else { throw KBError(.database, "\(file.path) holds vectors of another dimension.") }
        let ids: [Int64] = try file.array("ids")
        let matrix: [Float] = try file.array("matrix")
        guard matrix.count == ids.count * dimension else { throw KBError(.database, "\(file.path): \(matrix.count) values are not \(ids.count) vectors.") }
        let rowOf = Dictionary(ids.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        guard rowOf.count == ids.count else { throw KBError(.database, "\(file.path) holds a snippet's vector twice.") }
        var int8: [Int8] = [], scales: [Float] = [], signs: [UInt64] = []
        let quantized = try file.number("quantized") == 1
        if quantized {
            int8 = try file.array("int8")
            scales = try file.array("scales")
            signs = try file.array("signs")
            guard int8.count == matrix.count, scales.count == ids.count, signs.count == ids.count * index.signWords else {
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
            index.signStage.withLock { stage in
                stage.rows = Int(rows)
                stage.calibration = tiers.isEmpty ? nil : SignStage.Calibration(tiers: stride(from: 0, to: tiers.count, by: 2).map {
                    SignStage.Tier(depth: Int(tiers[$0]), closeness: Float(tiers[$0 + 1]))
                })
            }
        }
        return index
    }
}

public import Foundation

/// Vectors are stored as little-endian float32 BLOBs.
public enum VectorCoding {
    public static func encode(_ vector: [Float]) -> Data {
        #if _endian(big)
        return vector.map { $0.bitPattern.littleEndian }.withUnsafeBytes { Data($0) }
        #else
        return vector.withUnsafeBytes { Data($0) }
        #endif
    }

    /// Nil when the BLOB does not hold `dimension` floats.
    public static func decode(_ data: Data, dimension: Int) -> [Float]? {
        guard data.count == dimension * 4 else { return nil }
        var vector = [Float](repeating: 0, count: dimension)
        _ = vector.withUnsafeMutableBytes { data.copyBytes(to: $0) }
        #if _endian(big)
        vector = vector.map { Float(bitPattern: UInt32(littleEndian: $0.bitPattern)) }
        #endif
        return vector
    }
}

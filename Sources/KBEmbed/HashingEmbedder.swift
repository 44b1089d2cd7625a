public import KBCore

/// A deterministic bag-of-words embedder: each lower-cased word is hashed (FNV-1a) into one of
/// `dimension` buckets with a sign, and the vector is L2-normalised. No model, no I/O: texts
/// that share words get similar vectors. Used by tests and for debugging, never by default.
public struct HashingEmbedder: Embedder {
    public let dimension: Int
    public var id: String { "hashing-\(dimension)" }

    public init(dimension: Int = 384) { self.dimension = dimension }

    public func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]] {
        texts.map(vector)
    }

    public func vector(_ text: String) -> [Float] {
        var v = [Float](repeating: 0, count: dimension)
        var word: [UInt8] = []
        func flush() {
            guard !word.isEmpty else { return }
            var hash: UInt64 = 0xcbf29ce484222325
            for byte in word { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
            v[Int(hash % UInt64(dimension))] += (hash >> 63) == 0 ? 1 : -1
            word.removeAll(keepingCapacity: true)
        }
        for scalar in text.lowercased().unicodeScalars {
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                word.append(contentsOf: String(scalar).utf8)
            } else {
                flush()
            }
        }
        flush()
        let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return norm > 0 ? v.map { $0 / norm } : v
    }
}

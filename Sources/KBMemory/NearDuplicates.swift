/// Finds stored memories whose embedding is close to a new one. Pure.
public enum NearDuplicates {
    /// Entries whose cosine similarity with `vector` is at least `threshold`, most similar first
    /// (ties by id).
    ///
    /// ```swift
    /// let close = NearDuplicates.find(v, among: [("a", w)], threshold: 0.92)
    /// ```
    public static func find(_ vector: [Float], among candidates: [(id: String, vector: [Float])], threshold: Float) -> [(id: String, similarity: Float)] {
        candidates.compactMap { candidate -> (id: String, similarity: Float)? in
            let similarity = cosine(vector, candidate.vector)
            return similarity >= threshold ? (candidate.id, similarity) : nil
        }
        .sorted { $0.similarity != $1.similarity ? $0.similarity > $1.similarity : $0.id < $1.id }
    }

    /// Cosine similarity; 0 when either vector is zero or the lengths differ.
    public static func cosine(_ a: [Float], _ b: [Float]) -> Float {
        guard a.count == b.count, !a.isEmpty else { return 0 }
        var dot: Float = 0, na: Float = 0, nb: Float = 0
        for i in a.indices {
            dot += a[i] * b[i]
            na += a[i] * a[i]
            nb += b[i] * b[i]
        }
        guard na > 0, nb > 0 else { return 0 }
        return min(1, max(-1, dot / (na.squareRoot() * nb.squareRoot())))
    }
}

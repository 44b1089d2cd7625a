/// Whether a text is a query or a passage: some models embed them with different prefixes.
public enum EmbeddingRole: String, Sendable, Codable {
    case query
    case passage
}

/// Something that turns texts into vectors of a fixed dimension.
///
/// ```swift
/// let vectors = try await embedder.embed(["a question"], role: .query)
/// ```
public protocol Embedder: Sendable {
    /// A stable name recorded in the index with every vector (`all-MiniLM-L6-v2`).
    var id: String { get }
    /// Length of every vector.
    var dimension: Int { get }
    /// One L2-normalised vector per text, in input order.
    func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]]
}

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
    /// One vector per text, in input order (L2-normalised for kb's own models).
    func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]]
    /// Whether each call costs a network round trip (and maybe money): then ingest caches
    /// vectors by text. The default is false.
    var isRemote: Bool { get }
    /// Tokens the embedder's endpoint reported as used since it was made (0 for local models).
    /// The default is 0.
    var tokensUsed: Int { get }
}

extension Embedder {
    public var isRemote: Bool { false }
    public var tokensUsed: Int { 0 }
}

public import Foundation
public import KBCore
import KBEmbed

/// The local model for callers that want embeddings of their own texts (`POST /v1/embeddings`),
/// loaded on first use and kept.
///
/// ```swift
/// let (vectors, tokens) = try await LocalEmbeddings.shared.embed(["a question"])
/// ```
public final class LocalEmbeddings: Sendable {
    public static let shared = LocalEmbeddings()

    // `model` is written once, under `lock`, and only read under it.
    private let lock = NSLock()
    nonisolated(unsafe) private var model: BERTEmbedder?
    private let environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    func loaded() throws -> BERTEmbedder {
        try lock.withLock {
            if let model { return model }
            let loaded = try BERTEmbedder.installed(environment: environment)
            model = loaded
            return loaded
        }
    }

    /// The model, loaded (the first time) off the cooperative pool.
    func model() async throws -> BERTEmbedder {
        if let model = lock.withLock({ model }) { return model }
        return try await OffPool.run { try self.loaded() }
    }

    /// The width of the model's vectors.
    public func dimension() async throws -> Int { try await model().dimension }

    /// The model's id (`all-MiniLM-L6-v2`).
    public func modelID() async throws -> String { try await model().id }

    /// Vectors and the number of model tokens they took: as passages (the way ingest embeds) by
    /// default, or as queries (the way searches embed theirs; a model with prompts, such as e5,
    /// gives them another prefix).
    public func embed(_ texts: [String], role: EmbeddingRole = .passage) async throws -> (vectors: [[Float]], tokens: Int) {
        let model = try await model()
        let tokens = texts.reduce(0) { $0 + model.tokenIDs($1).count }
        return (try await model.embed(texts, role: role), tokens)
    }
}

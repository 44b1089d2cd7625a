public import Foundation
public import KBCore
import KBEmbed
public import KBIndex

/// Which embedder an ingest or search uses, as named on the command line (`--embedder`).
///
/// - `local`: the installed local model (`$KB_MODEL_DIR`, else all-MiniLM-L6-v2 in kb's data folder).
/// - `none` (`.keywordOnly`): no vectors; a keyword-only index.
/// - `hashing`: a deterministic bag-of-words embedder, for tests and debugging.
public enum EmbedderChoice: Sendable, Hashable {
    case local
    case keywordOnly
    case hashing

    public init(_ spec: String) throws {
        switch spec.lowercased() {
        case "local", Locations.defaultModelName.lowercased(): self = .local
        case "none": self = .keywordOnly
        case "hashing": self = .hashing
        default:
            throw KBError(.invalidArgument, "Unknown embedder '\(spec)'. Use local (the built-in model), none (keyword-only) or hashing.")
        }
    }

    public var spec: String {
        switch self {
        case .local: "local"
        case .keywordOnly: "none"
        case .hashing: "hashing"
        }
    }

    /// The embedder, loaded; nil for `.keywordOnly`.
    public func make(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (any Embedder)? {
        switch self {
        case .local: try BERTEmbedder.installed(environment: environment)
        case .keywordOnly: nil
        case .hashing: HashingEmbedder()
        }
    }

    /// What the index records for vectors from this embedder.
    public static func record(for embedder: (any Embedder)?, choice: EmbedderChoice) -> EmbedderRecord {
        guard let embedder else { return .none }
        return EmbedderRecord(name: embedder.id, dimension: embedder.dimension, spec: choice.spec)
    }
}

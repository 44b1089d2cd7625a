public import Foundation
public import KBCore
import KBEmbed
public import KBIndex

/// Which embedder an ingest or search uses, as named on the command line (`--embedder`).
///
/// - `local`: the installed local model (`$KB_MODEL_DIR`, else all-MiniLM-L6-v2 in kb's data folder).
/// - `none` (`.keywordOnly`): no vectors; a keyword-only index.
/// - `hashing`: a deterministic bag-of-words embedder, for tests and debugging.
/// - `openai:MODEL`: an OpenAI-compatible embeddings endpoint (`--embedder-url`, key from
///   `$KB_EMBEDDINGS_API_KEY`).
public enum EmbedderChoice: Sendable, Hashable {
    case local
    case keywordOnly
    case hashing
    /// An OpenAI-compatible endpoint: `openai:MODEL`, with the API's base URL.
    case openAI(model: String, url: String)

    /// Parses `local`, `none`, `hashing`, `openai:MODEL` (with `url`, default OpenAI's) or the
    /// recorded form `openai:MODEL@URL`.
    public init(_ spec: String, url: String? = nil) throws {
        if spec.lowercased().hasPrefix("openai:") {
            let rest = String(spec.dropFirst(7))
            if let at = rest.range(of: "@http") {
                self = .openAI(model: String(rest[..<at.lowerBound]), url: String(rest[rest.index(after: at.lowerBound)...]))
            } else {
                guard !rest.isEmpty else {
                    throw KBError(.invalidArgument, "Name the model: --embedder openai:MODEL, e.g. openai:text-embedding-3-small.")
                }
                self = .openAI(model: rest, url: url ?? HTTPEmbedder.Configuration.openAIURL.absoluteString)
            }
            return
        }
        switch spec.lowercased() {
        case "local", Locations.defaultModelName.lowercased(): self = .local
        case "none": self = .keywordOnly
        case "hashing": self = .hashing
        default:
            throw KBError(.invalidArgument,
                "Unknown embedder '\(spec)'. Use local (the built-in model), none (keyword-only), hashing, or openai:MODEL (with --embedder-url).")
        }
    }

    /// What the index records (never an API key).
    public var spec: String {
        switch self {
        case .local: "local"
        case .keywordOnly: "none"
        case .hashing: "hashing"
        case .openAI(let model, let url): "openai:\(model)@\(url)"
        }
    }

    /// The embedder, loaded; nil for `.keywordOnly`. A remote embedder is asked for one vector
    /// to learn its dimension unless `dimension` is given (from the index's record).
    ///
    /// With `forQueries`, a remote embedder gives up sooner (two tries, at most five seconds each):
    /// a search then answers from keywords instead of waiting for a struggling endpoint.
    public func make(environment: [String: String] = ProcessInfo.processInfo.environment, dimension: Int? = nil,
                     forQueries: Bool = false) async throws -> (any Embedder)? {
        switch self {
        case .local: return try await KnowledgeBase.offPool { Result { try BERTEmbedder.installed(environment: environment) } }.get()
        case .keywordOnly: return nil
        case .hashing: return HashingEmbedder()
        case .openAI(let model, let url):
            guard let base = URL(string: url) else { throw KBError(.invalidArgument, "'\(url)' is not a URL. Give --embedder-url http://HOST:PORT/v1.") }
            var configuration = HTTPEmbedder.Configuration(model: model, baseURL: base, apiKey: environment["KB_EMBEDDINGS_API_KEY"])
            if let timeout = environment["KB_EMBEDDINGS_TIMEOUT"].flatMap(Double.init), timeout > 0 { configuration.timeout = timeout }
            if let attempts = environment["KB_EMBEDDINGS_MAX_ATTEMPTS"].flatMap(Int.init), attempts > 0 { configuration.maxAttempts = attempts }
            if let concurrency = environment["KB_EMBEDDINGS_CONCURRENCY"].flatMap(Int.init), concurrency > 0 { configuration.maxConcurrentRequests = concurrency }
            if let batch = environment["KB_EMBEDDINGS_BATCH"].flatMap(Int.init), batch > 0 { configuration.maxInputsPerRequest = batch }
            if forQueries {
                configuration.maxAttempts = min(configuration.maxAttempts, 2)
                configuration.timeout = min(configuration.timeout, 5)
            }
            return try await HTTPEmbedder.connect(configuration, dimension: dimension)
        }
    }

    /// What the index records for vectors from this embedder.
    public static func record(for embedder: (any Embedder)?, choice: EmbedderChoice) -> EmbedderRecord {
        guard let embedder else { return .none }
        return EmbedderRecord(name: embedder.id, dimension: embedder.dimension, spec: choice.spec)
    }
}

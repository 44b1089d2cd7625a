public import Foundation
public import KBCore
import KBEmbed
public import KBStore

/// Which embedder an ingest or search uses, as named on the command line (`--embedder`).
///
/// - `local`: the installed local model (`$KB_MODEL_DIR`, else all-MiniLM-L6-v2 in kb's data folder:
///   English only, the fastest).
/// - `local:NAME` (`--model NAME`): a model installed under that name (`scripts/install-model.sh
///   NAME`, e.g. multilingual-e5-small), recorded with the index so that searches load it too.
/// - `none` (`.keywordOnly`): no vectors; a keyword-only index.
/// - `hashing`: a deterministic bag-of-words embedder, for tests and debugging.
/// - `openai:MODEL`: an OpenAI-compatible embeddings endpoint (`--embedder-url`, key from
///   `$KB_EMBEDDINGS_API_KEY`).
/// - any of these with prefixes put before queries and passages (`--query-prefix`,
///   `--passage-prefix`: e5 and nomic-style models want `query: ` / `passage: `), recorded with
///   the index as `SPEC|query=…|passage=…` (percent-encoded).
public enum EmbedderChoice: Sendable, Hashable {
    case local
    /// A model installed in kb's data folder under this name.
    case localNamed(String)
    case keywordOnly
    case hashing
    /// An OpenAI-compatible endpoint: `openai:MODEL`, with the API's base URL.
    case openAI(model: String, url: String)
    /// Another choice with the texts put before every query and every passage.
    indirect case prefixed(EmbedderChoice, query: String, passage: String)

    /// The embedder a new index gets when none is named (`newIndexDefault`): multilingual-e5-small,
    /// which reads Arabic, Ukrainian, Russian, English and about ninety other languages, and
    /// finds a paragraph in one by a question in another; with `$KB_MODEL_DIR` set, the model
    /// there (`local`). An index keeps the embedder it was made with.
    public static func newIndexDefault(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> EmbedderChoice {
        if let folder = environment["KB_MODEL_DIR"], !folder.isEmpty { return .local }
        return .localNamed(Locations.multilingualModelName)
    }

    /// The embedder without prefixes.
    public var base: EmbedderChoice {
        if case .prefixed(let base, _, _) = self { return base.base }
        return self
    }

    /// The same choice with its OpenAI-compatible endpoint moved to `url` (others unchanged).
    public func movingEndpoint(to url: String) -> EmbedderChoice {
        switch self {
        case .openAI(let model, _): .openAI(model: model, url: url)
        case .prefixed(let base, let query, let passage): .prefixed(base.movingEndpoint(to: url), query: query, passage: passage)
        default: self
        }
    }

    /// `choice` with prefixes, when any is given (a model's own prompts give way to them).
    public static func with(_ choice: EmbedderChoice, queryPrefix: String?, passagePrefix: String?) throws -> EmbedderChoice {
        guard queryPrefix != nil || passagePrefix != nil else { return choice }
        guard choice.base != .keywordOnly else {
            throw KBError(.invalidArgument, "--query-prefix and --passage-prefix need an embedder; --embedder none makes no vectors.")
        }
        return .prefixed(choice.base, query: queryPrefix ?? "", passage: passagePrefix ?? "")
    }

    static let prefixSeparators = (query: "|query=", passage: "|passage=")
    static let prefixAllowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))

    /// Parses `local`, `none`, `hashing`, `openai:MODEL` (with `url`, default OpenAI's) or the
    /// recorded form `openai:MODEL@URL`.
    public init(_ spec: String, url: String? = nil) throws {
        if let query = spec.range(of: Self.prefixSeparators.query), let passage = spec.range(of: Self.prefixSeparators.passage),
           query.upperBound <= passage.lowerBound,
           let queryPrefix = String(spec[query.upperBound..<passage.lowerBound]).removingPercentEncoding,
           let passagePrefix = String(spec[passage.upperBound...]).removingPercentEncoding {
            self = .prefixed(try EmbedderChoice(String(spec[..<query.lowerBound]), url: url), query: queryPrefix, passage: passagePrefix)
            return
        }
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
        if spec.lowercased().hasPrefix("local:") {
            let name = String(spec.dropFirst(6))
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }), !name.hasPrefix(".") else {
                throw KBError(.invalidArgument, "'\(name)' is not a model name. Name an installed model: --model multilingual-e5-small.")
            }
            self = name == Locations.defaultModelName ? .local : .localNamed(name)
            return
        }
        switch spec.lowercased() {
        case "local", Locations.defaultModelName.lowercased(): self = .local
        case "none": self = .keywordOnly
        case "hashing": self = .hashing
        default:
            throw KBError(.invalidArgument,
                "Unknown embedder '\(spec)'. Use local (the built-in model), local:NAME (a model installed with scripts/install-model.sh NAME), none (keyword-only), hashing, or openai:MODEL (with --embedder-url).")
        }
    }

    /// What the index records (never an API key).
    public var spec: String {
        switch self {
        case .local: "local"
        case .localNamed(let name): "local:" + name
        case .keywordOnly: "none"
        case .hashing: "hashing"
        case .openAI(let model, let url): "openai:\(model)@\(url)"
        case .prefixed(let base, let query, let passage):
            base.spec + Self.prefixSeparators.query + (query.addingPercentEncoding(withAllowedCharacters: Self.prefixAllowed) ?? "")
                + Self.prefixSeparators.passage + (passage.addingPercentEncoding(withAllowedCharacters: Self.prefixAllowed) ?? "")
        }
    }

    /// The embedder, loaded; nil for `.keywordOnly`. A remote embedder is asked for one vector
    /// to learn its dimension unless `dimension` is given (from the index's record).
    ///
    /// With `forQueries`, a remote embedder gives up sooner (two tries, at most five seconds each):
    /// a search then answers from keywords instead of waiting for a struggling endpoint.
    /// A local model runs in `precision` — the index's (`EmbedderRecord.passagePrecision`), nil
    /// for a new index — unless the process chose one (`--precision`, `KB_PRECISION`).
    public func make(environment: [String: String] = ProcessInfo.processInfo.environment, dimension: Int? = nil,
                     precision: EncoderPrecision? = nil, forQueries: Bool = false) async throws -> (any Embedder)? {
        switch self {
        case .prefixed(let base, let query, let passage):
            guard let inner = try await base.make(environment: environment, dimension: dimension, precision: precision, forQueries: forQueries) else { return nil }
            return PrefixedEmbedder(inner, queryPrefix: query, passagePrefix: passage)
        case .local: return try await OffPool.run { try BERTEmbedder.installed(environment: environment, index: precision) }
        case .localNamed(let name): return try await OffPool.run { try BERTEmbedder.installed(environment: environment, name: name, index: precision) }
        case .keywordOnly: return nil
        case .hashing: return HashingEmbedder()
        case .openAI(let model, let url):
            guard let base = URL(string: url) else { throw KBError(.invalidArgument, "'\(url)' is not a URL. Give --embedder-url http://HOST:PORT/v1.") }
            var configuration = HTTPEmbedder.Configuration(model: model, baseURL: base, apiKey: environment["KB_EMBEDDINGS_API_KEY"])
            configuration.timeout = try EnvironmentNumber.read("KB_EMBEDDINGS_TIMEOUT", in: environment, within: 0.001...86_400,
                                                               meaning: "the seconds a request to the endpoint may take") ?? configuration.timeout
            configuration.maxAttempts = try EnvironmentNumber.read("KB_EMBEDDINGS_MAX_ATTEMPTS", in: environment, within: 1...100,
                                                                   meaning: "how many times a request is tried") ?? configuration.maxAttempts
            configuration.maxConcurrentRequests = try EnvironmentNumber.read("KB_EMBEDDINGS_CONCURRENCY", in: environment, within: 1...1_024,
                meaning: "how many requests may be in flight at once") ?? configuration.maxConcurrentRequests
            configuration.maxInputsPerRequest = try EnvironmentNumber.read("KB_EMBEDDINGS_BATCH", in: environment, within: 1...100_000,
                                                                           meaning: "how many texts a request carries at most") ?? configuration.maxInputsPerRequest
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
        let local = (embedder as? BERTEmbedder) ?? ((embedder as? PrefixedEmbedder)?.inner as? BERTEmbedder)
        return EmbedderRecord(name: embedder.id, dimension: embedder.dimension, spec: choice.spec, precision: local?.precision.rawValue,
                              context: EmbeddingInput.newIndexContext.rawValue)
    }
}

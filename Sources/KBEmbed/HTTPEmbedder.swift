public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import KBCore

/// An embedder behind an OpenAI-compatible `POST /v1/embeddings` endpoint (OpenAI, Ollama, vLLM,
/// text-embeddings-inference, LM Studio, llama.cpp, `kb serve`).
///
/// Inputs are sent in batches (at most `maxInputsPerRequest` texts and about
/// `maxTokensPerRequest` estimated tokens each), up to `maxConcurrentRequests` at a time, and come
/// back in input order. 429, 5xx, timeouts and connection errors are retried with exponential
/// backoff and jitter, honouring `Retry-After`; 400, 401, 403 and 404 are not, and their messages
/// say what to check. The API key is sent as a bearer token and never appears in messages.
///
/// ```swift
/// let embedder = try HTTPEmbedder.connect(.init(model: "nomic-embed-text", baseURL: URL(string: "http://127.0.0.1:11434/v1")!))
/// ```
public final class HTTPEmbedder: Embedder, Sendable {
    public struct Configuration: Sendable, Hashable {
        public var model: String
        /// The API's base URL (the part before `/embeddings`). The default is OpenAI's.
        public var baseURL: URL
        /// Sent as `Authorization: Bearer …`; nil sends none. The default is nil.
        public var apiKey: String?
        /// The default is 96.
        public var maxInputsPerRequest = 96
        /// Estimated (UTF-8 bytes / 3, rounded up) tokens per request. The default is 8,000.
        public var maxTokensPerRequest = 8000
        /// The default is 4.
        public var maxConcurrentRequests = 4
        /// Seconds one request may take, at least 1. The default is 60.
        public var timeout: TimeInterval = 60
        /// Tries per request, the first included. The default is 6.
        public var maxAttempts = 6
        /// First backoff in seconds, doubled each retry (with jitter), capped at `maxBackoff`.
        /// The defaults are 0.5 and 30.
        public var initialBackoff: TimeInterval = 0.5
        public var maxBackoff: TimeInterval = 30
        /// `float` or `base64`; responses of either kind are read. The default is `float`.
        public var encoding = "float"

        public static let openAIURL = URL(string: "https://api.openai.com/v1")!

        public init(model: String, baseURL: URL = Configuration.openAIURL, apiKey: String? = nil) {
            self.model = model
            self.baseURL = baseURL
            self.apiKey = apiKey
        }
    }

    public let configuration: Configuration
    public let id: String
    public let dimension: Int
    public var isRemote: Bool { true }
    let session: URLSession
    let usage = UsageCounter()

    /// Tokens the endpoint reported as used since this embedder was made.
    public var tokensUsed: Int { usage.value }

    init(configuration: Configuration, dimension: Int) {
        self.configuration = configuration
        self.id = "openai:" + configuration.model
        self.dimension = dimension
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.timeout
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maxConcurrentRequests)
        self.session = URLSession(configuration: sessionConfiguration)
    }

    /// An embedder for an endpoint. With `dimension` nil, one short request finds it out (and
    /// proves the URL, model and key work) before any real work starts.
    public static func connect(_ configuration: Configuration, dimension: Int? = nil) async throws -> HTTPEmbedder {
        guard !configuration.model.isEmpty else {
            throw KBError(.invalidArgument, "Name the model: --embedder openai:MODEL, e.g. openai:text-embedding-3-small.")
        }
        guard let scheme = configuration.baseURL.scheme, ["http", "https"].contains(scheme) else {
            throw KBError(.invalidArgument, "The embeddings URL \(configuration.baseURL) must start with http:// or https://.")
        }
        // FoundationNetworking on Linux rounds a timeout down to whole seconds (0.5 s times out at once).
        guard configuration.timeout >= 1 else {
            throw KBError(.invalidArgument, "The embeddings timeout must be at least 1 second; got \(configuration.timeout).")
        }
        if let dimension { return HTTPEmbedder(configuration: configuration, dimension: dimension) }
        let probe = HTTPEmbedder(configuration: configuration, dimension: 0)
        let vectors = try await probe.send(["dimension probe"], expectDimension: nil).vectors
        guard let first = vectors.first, !first.isEmpty else {
            throw KBError(.embedding, "\(configuration.baseURL.absoluteString)/embeddings returned no vector for a test input.")
        }
        return HTTPEmbedder(configuration: configuration, dimension: first.count)
    }

    public func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        let batches = Self.batches(texts.map(Self.estimatedTokens), maxInputs: configuration.maxInputsPerRequest,
                                   maxTokens: configuration.maxTokensPerRequest)
        var results = [[Float]](repeating: [], count: texts.count)
        try await withThrowingTaskGroup(of: (Range<Int>, [[Float]]).self) { group in
            var next = 0
            func start() {
                guard next < batches.count else { return }
                let range = batches[next]
                next += 1
                group.addTask { (range, try await self.send(Array(texts[range]), expectDimension: self.dimension).vectors) }
            }
            for _ in 0..<max(1, configuration.maxConcurrentRequests) { start() }
            while let (range, vectors) = try await group.next() {
                for (offset, vector) in vectors.enumerated() { results[range.lowerBound + offset] = vector }
                start()
            }
        }
        return results
    }

    /// Tokens a text may cost, estimated from its size: ⌈UTF-8 bytes / 3⌉.
    static func estimatedTokens(_ text: String) -> Int { (text.utf8.count + 2) / 3 }

    /// Consecutive ranges of inputs, each within both limits (an input over the token limit goes
    /// alone). Pure.
    public static func batches(_ tokens: [Int], maxInputs: Int, maxTokens: Int) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start = 0, sum = 0
        for (index, cost) in tokens.enumerated() {
            if index > start && (index - start >= maxInputs || sum + cost > maxTokens) {
                result.append(start..<index)
                start = index
                sum = 0
            }
            sum += cost
        }
        if start < tokens.count { result.append(start..<tokens.count) }
        return result
    }

    // MARK: - One request, with retries

    struct Reply: Decodable {
        struct Item: Decodable {
            var index: Int?
            var embedding: Vector
        }
        enum Vector: Decodable {
            case floats([Float])
            case base64(String)
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let floats = try? container.decode([Float].self) { self = .floats(floats) } else { self = .base64(try container.decode(String.self)) }
            }
        }
        struct Usage: Decodable {
            var prompt_tokens: Int?
            var total_tokens: Int?
        }
        var data: [Item]
        var usage: Usage?
    }

    var endpoint: URL { configuration.baseURL.appendingPathComponent("embeddings") }

    /// Sends one batch, retrying what can be retried; checks count and dimension.
    func send(_ inputs: [String], expectDimension: Int?) async throws -> (vectors: [[Float]], tokens: Int) {
        var attempt = 0
        while true {
            attempt += 1
            let outcome: Attempt
            do {
                let (data, response) = try await session.dataCancellingSafely(for: try request(inputs))
                outcome = try interpret(data, response)
            } catch let error as URLError {
                outcome = .retry(after: nil, reason: Self.describe(error))
            }
            switch try step(after: outcome, attempt: attempt, count: inputs.count, dimension: expectDimension) {
            case .finished(let vectors, let tokens): return (vectors, tokens)
            case .wait(let delay): try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            }
        }
    }

    enum Step {
        case finished([[Float]], tokens: Int)
        case wait(TimeInterval)
    }

    /// What follows one try: the checked vectors (usage counted), a wait before the next try, or
    /// (thrown) the end.
    func step(after outcome: Attempt, attempt: Int, count: Int, dimension: Int?) throws -> Step {
        switch outcome {
        case .done(let reply):
            let vectors = try decode(reply, count: count, dimension: dimension)
            let tokens = reply.usage?.total_tokens ?? reply.usage?.prompt_tokens ?? 0
            usage.add(tokens)
            return .finished(vectors, tokens: tokens)
        case .retry(let after, let reason):
            guard attempt < configuration.maxAttempts else {
                throw KBError(.embedding, "\(endpoint.absoluteString) failed \(attempt) times; last: \(reason). "
                    + "Check that the service is up and the URL is right (--embedder-url), or try again later.")
            }
            let backoff = min(configuration.maxBackoff, configuration.initialBackoff * pow(2, Double(attempt - 1)))
            let delay = after.map { min($0, configuration.maxBackoff * 4) } ?? backoff * Double.random(in: 0.5...1.0)
            return .wait(max(0, delay))
        }
    }

    enum Attempt {
        case done(Reply)
        case retry(after: TimeInterval?, reason: String)
    }

    func request(_ inputs: [String]) throws -> URLRequest {
        var request = URLRequest(url: endpoint, timeoutInterval: configuration.timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let key = configuration.apiKey, !key.isEmpty { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        let body: [String: Any] = ["model": configuration.model, "input": inputs, "encoding_format": configuration.encoding]
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return request
    }

    func interpret(_ data: Data, _ response: URLResponse) throws -> Attempt {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let detail = Self.errorDetail(data)
        switch status {
        case 200..<300:
            do {
                return .done(try JSONDecoder().decode(Reply.self, from: data))
            } catch {
                throw KBError(.embedding, "\(endpoint.absoluteString) answered with malformed JSON (not an embeddings response). Check the URL points at an OpenAI-compatible API (…/v1).")
            }
        case 429, 500..<600:
            let retryAfter = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After").flatMap(Self.retryAfter)
            return .retry(after: retryAfter, reason: "HTTP \(status)\(detail.map { ": " + $0 } ?? "")")
        case 401:
            throw KBError(.embedding, "\(endpoint.absoluteString) rejected the API key (401). Check KB_EMBEDDINGS_API_KEY.")
        case 403:
            throw KBError(.embedding, "\(endpoint.absoluteString) refused access (403)\(detail.map { ": " + $0 } ?? ""). Check the key's permissions for model \(configuration.model).")
        case 404:
            throw KBError(.embedding, "\(endpoint.absoluteString) answered 404\(detail.map { ": " + $0 } ?? ""). Check the model name (\(configuration.model)) and the URL (it should end in /v1).")
        case 400:
            throw KBError(.embedding, "\(endpoint.absoluteString) refused the request (400)\(detail.map { ": " + $0 } ?? ""). Check that \(configuration.model) is an embeddings model and the inputs are not too long.")
        default:
            throw KBError(.embedding, "\(endpoint.absoluteString) answered HTTP \(status)\(detail.map { ": " + $0 } ?? "").")
        }
    }

    func decode(_ reply: Reply, count: Int, dimension: Int?) throws -> [[Float]] {
        guard reply.data.count == count else {
            throw KBError(.embedding, "\(endpoint.absoluteString) returned \(reply.data.count) vectors for \(count) inputs.")
        }
        let ordered = reply.data.enumerated().sorted { ($0.element.index ?? $0.offset) < ($1.element.index ?? $1.offset) }
        return try ordered.map { _, item in
            let vector: [Float]
            switch item.embedding {
            case .floats(let floats): vector = floats
            case .base64(let text):
                guard let bytes = Data(base64Encoded: text), bytes.count % 4 == 0 else {
                    throw KBError(.embedding, "\(endpoint.absoluteString) returned a base64 embedding that does not decode to float32 values.")
                }
                vector = bytes.withUnsafeBytes { raw in
                    (0..<bytes.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
                }
            }
            if let dimension, vector.count != dimension {
                throw KBError(.embedding, "\(endpoint.absoluteString) returned a \(vector.count)-dim vector; \(id) gave \(dimension)-dim vectors before. "
                    + "Check the model name, or rebuild the index with the new model.")
            }
            return vector
        }
    }

    /// The `error.message` of an OpenAI-style error body, if any (never echoes headers or keys).
    static func errorDetail(_ data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        if let error = object["error"] as? [String: Any], let message = error["message"] as? String { return String(message.prefix(300)) }
        if let message = object["error"] as? String { return String(message.prefix(300)) }
        return nil
    }

    /// `Retry-After` as seconds or an HTTP date.
    static func retryAfter(_ value: String) -> TimeInterval? {
        if let seconds = Double(value.trimmingCharacters(in: .whitespaces)) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSinceNow) }
    }

    static func describe(_ error: URLError) -> String {
        switch error.code {
        case .timedOut: "no answer within the timeout"
        case .cannotConnectToHost, .cannotFindHost, .networkConnectionLost, .notConnectedToInternet: "cannot connect (\(error.localizedDescription))"
        default: error.localizedDescription
        }
    }
}

/// A running total behind a lock.
final class UsageCounter: @unchecked Sendable {
    // @unchecked: `lock` guards `total`.
    private let lock = NSLock()
    private var total = 0
    var value: Int { lock.withLock { total } }
    func add(_ tokens: Int) { lock.withLock { total += tokens } }
}

public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import KBCore

/// A re-ranker behind the de-facto `POST /v1/rerank` endpoint that llama.cpp's server,
/// text-embeddings-inference, Infinity, LocalAI, Cohere and Jina speak:
/// `{"model", "query", "documents", "top_n"}` → `{"results": [{"index", "relevance_score"}]}`.
///
/// Documents go in batches of `batchSize` (each cut to `maxDocumentCharacters`), up to
/// `maxConcurrentRequests` at a time. 429, 5xx, timeouts and connection errors are retried with
/// exponential backoff and jitter like the embeddings client, but briefly (a search waits for
/// it); other statuses and answers that are not a ranking of the documents sent (an index out of
/// range or repeated, a score that is not a finite number, a document left out) are errors that
/// say what to check. The API key is sent as a bearer token and never appears in messages.
///
/// ```swift
/// let url = URL(string: "http://127.0.0.1:8012/v1")!
/// let reranker = try HTTPReranker(.init(model: "bge-reranker-v2-m3", baseURL: url))
/// let scores = try await reranker.relevance(of: ["Saturn rules Capricorn.", "Mars rules Aries."], to: "ruler of capricorn")
/// ```
public final class HTTPReranker: Reranker {
    public struct Configuration: Sendable, Hashable {
        /// The model name sent (servers that host one model ignore it).
        public var model: String
        /// The API's base URL (the part before `/rerank`), e.g. `http://127.0.0.1:8012/v1`.
        public var baseURL: URL
        /// Sent as `Authorization: Bearer …`; nil sends none. The default is nil.
        public var apiKey: String?
        /// Documents per request. The default is 32.
        public var batchSize = 32
        /// The default is 4.
        public var maxConcurrentRequests = 4
        /// Characters of each document sent (re-rankers read a few hundred tokens). The default is 4,000.
        public var maxDocumentCharacters = 4000
        /// Seconds one request may take, at least 1. The default is 10.
        public var timeout: TimeInterval = 10
        /// Tries per request, the first included. The default is 3.
        public var maxAttempts = 3
        /// First backoff in seconds, doubled each retry (with jitter), capped at `maxBackoff`.
        /// The defaults are 0.25 and 2.
        public var initialBackoff: TimeInterval = 0.25
        public var maxBackoff: TimeInterval = 2

        public init(model: String, baseURL: URL, apiKey: String? = nil) {
            self.model = model
            self.baseURL = baseURL
            self.apiKey = apiKey
        }
    }

    public let configuration: Configuration
    public var name: String { "rerank:" + configuration.model }
    let session: URLSession

    public init(_ configuration: Configuration) throws {
        guard !configuration.model.isEmpty else {
            throw KBError(.invalidArgument, "Name the re-ranking model: --reranker-model NAME, e.g. bge-reranker-v2-m3.")
        }
        guard let scheme = configuration.baseURL.scheme, ["http", "https"].contains(scheme), configuration.baseURL.host != nil else {
            throw KBError(.invalidArgument, "The re-ranker URL \(configuration.baseURL) must start with http:// or https:// and name a host, e.g. http://127.0.0.1:8012/v1.")
        }
        guard configuration.timeout >= 1 else {
            throw KBError(.invalidArgument, "The re-ranker timeout must be at least 1 second; got \(configuration.timeout).")
        }
        guard configuration.batchSize >= 1, configuration.maxAttempts >= 1 else {
            throw KBError(.invalidArgument, "The re-ranker's batch size and attempts must be at least 1.")
        }
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.timeout
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maxConcurrentRequests)
        session = URLSession(configuration: sessionConfiguration)
    }

    var endpoint: URL { configuration.baseURL.appendingPathComponent("rerank") }

    public func relevance(of documents: [String], to query: String) async throws -> [Double] {
        guard !documents.isEmpty else { return [] }
        let size = configuration.batchSize
        let batches = stride(from: 0, to: documents.count, by: size).map { $0..<min($0 + size, documents.count) }
        var scores = [Double](repeating: 0, count: documents.count)
        try await withThrowingTaskGroup(of: (Range<Int>, [Double]).self) { group in
            var next = 0
            func start() {
                guard next < batches.count else { return }
                let range = batches[next]
                next += 1
                group.addTask { (range, try await self.send(Array(documents[range]), query: query)) }
            }
            for _ in 0..<max(1, configuration.maxConcurrentRequests) { start() }
            while let (range, batch) = try await group.next() {
                for (offset, score) in batch.enumerated() { scores[range.lowerBound + offset] = score }
                start()
            }
        }
        return scores
    }

    // MARK: - One request, with retries

    struct Reply: Decodable {
        struct Result: Decodable {
            var index: Int
            var relevance_score: Double?
            var score: Double?
        }
        var results: [Result]
    }

    /// Scores for one batch, in its order; retries what can be retried.
    func send(_ documents: [String], query: String) async throws -> [Double] {
        var attempt = 0
        while true {
            attempt += 1
            let reason: String
            do {
                let (data, response) = try await session.dataCancellingSafely(for: try request(documents, query: query))
                switch try interpret(data, response) {
                case .done(let reply): return try Self.scores(reply, count: documents.count, endpoint: endpoint.absoluteString)
                case .retry(let why): reason = why
                }
            } catch let error as URLError {
                if error.code == .cancelled { throw CancellationError() }
                reason = HTTPEmbedder.describe(error)
            }
            guard attempt < configuration.maxAttempts else {
                throw KBError(.embedding, "\(endpoint.absoluteString) failed \(attempt) times; last: \(reason). "
                    + "Check that the re-ranking service is up and the URL is right (--reranker).")
            }
            let backoff = min(configuration.maxBackoff, configuration.initialBackoff * pow(2, Double(attempt - 1)))
            try await Task.sleep(nanoseconds: UInt64(backoff * Double.random(in: 0.5...1.0) * 1e9))
        }
    }

    enum Attempt {
        case done(Reply)
        case retry(String)
    }

    func request(_ documents: [String], query: String) throws -> URLRequest {
        var request = URLRequest(url: endpoint, timeoutInterval: configuration.timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let key = configuration.apiKey, !key.isEmpty { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        let body: [String: Any] = [
            "model": configuration.model, "query": query,
            "documents": documents.map { String($0.prefix(configuration.maxDocumentCharacters)) },
            "top_n": documents.count, "return_documents": false,
        ]
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return request
    }

    func interpret(_ data: Data, _ response: URLResponse) throws -> Attempt {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let detail = HTTPEmbedder.errorDetail(data).map { ": " + $0 } ?? ""
        switch status {
        case 200..<300:
            do {
                return .done(try JSONDecoder().decode(Reply.self, from: data))
            } catch {
                throw KBError(.embedding, "\(endpoint.absoluteString) answered with something other than a ranking ({\"results\": [{\"index\", \"relevance_score\"}]}). Check the URL points at a re-ranking API (…/v1).")
            }
        case 429, 500..<600:
            return .retry("HTTP \(status)\(detail)")
        case 401:
            throw KBError(.embedding, "\(endpoint.absoluteString) rejected the API key (401). Check KB_RERANKER_API_KEY.")
        case 404:
            throw KBError(.embedding, "\(endpoint.absoluteString) answered 404\(detail). Check the URL (kb posts to URL/rerank; it should end in /v1) and the model name (\(configuration.model)).")
        default:
            throw KBError(.embedding, "\(endpoint.absoluteString) refused the request (HTTP \(status))\(detail). Check that \(configuration.model) is a re-ranking model.")
        }
    }

    /// The batch's scores in document order, once the reply is checked to rank exactly the
    /// documents sent. Pure.
    static func scores(_ reply: Reply, count: Int, endpoint: String) throws -> [Double] {
        var scores = [Double?](repeating: nil, count: count)
        for result in reply.results {
            guard scores.indices.contains(result.index) else {
                throw KBError(.embedding, "\(endpoint) ranked document \(result.index) of \(count) sent.")
            }
            guard scores[result.index] == nil else {
                throw KBError(.embedding, "\(endpoint) ranked document \(result.index) twice.")
            }
            guard let score = result.relevance_score ?? result.score, score.isFinite else {
                throw KBError(.embedding, "\(endpoint) gave document \(result.index) no finite relevance_score.")
            }
            scores[result.index] = score
        }
        let missing = scores.indices.filter { scores[$0] == nil }
        guard missing.isEmpty else {
            throw KBError(.embedding, "\(endpoint) left \(missing.count) of the \(count) documents out of its ranking (it should rank all: top_n = \(count)).")
        }
        return scores.map { $0! }
    }
}

public import Foundation
import KBCore
public import KBEmbed
import KBRetrieval
public import KBStore

/// The embedders of one knowledge base: the one its index records — loaded once, at the endpoint
/// this knowledge base was told to use, for queries and for memory writes — the choice of an
/// embedder for a write (`choose`, the one place it is made), and whether queries can be
/// embedded now (`EmbedderHealth`, with a background probe for long-running services). The
/// retriever embeds its planned queries through it (`QueryEncoding`); writers embed passages
/// through `CachingEmbedder`.
///
/// @unchecked Sendable: `loaded` is a `LockedValue`; the rest is immutable or Sendable.
final class Embedders: QueryEncoding, @unchecked Sendable {
    let store: any IndexStore
    /// Where embedders are configured from (`KB_MODEL_DIR`, `KB_EMBEDDINGS_*`).
    let environment: [String: String]
    /// The endpoint given when opening (an error on an index that is not `openai:`).
    let givenEmbedderURL: String?
    let health = EmbedderHealth()
    /// Query vectors asked for before (`KB_QUERY_CACHE_MB`, default 64; 0 turns it off).
    let queryCache: QueryVectorCache
    /// Whether queries use `queryCache` (`KnowledgeBase.cachesQueryVectors`).
    let cachingQueries = LockedValue(true)
    /// The recorded embedder, by the name it was loaded for.
    private let loaded = LockedValue<(name: String, embedder: any Embedder)?>(nil)

    /// - Parameter queryCacheBytes: the query-embedding cache's capacity (`queryCacheBytes(_:)`).
    init(store: any IndexStore, environment: [String: String], embedderURL: String?, queryCacheBytes: Int) {
        self.store = store
        self.environment = environment
        givenEmbedderURL = embedderURL
        queryCache = QueryVectorCache(capacity: queryCacheBytes)
    }

    /// The query-embedding cache's capacity: `KB_QUERY_CACHE_MB` megabytes (0 turns it off),
    /// else the default; an error naming the variable when it is not such a number.
    static func queryCacheBytes(_ environment: [String: String]) throws -> Int {
        let megabytes = try EnvironmentNumber.read("KB_QUERY_CACHE_MB", in: environment, as: Double.self, within: 0...1_048_576,
                                                   meaning: "the megabytes of query vectors to keep (0 turns the cache off)")
        return megabytes.map { Int($0 * 1_048_576) } ?? QueryVectorCache.defaultCapacity
    }

    /// The embeddings endpoint to use instead of the one an `openai:` index recorded: the one
    /// given when opening, else `KB_EMBEDDINGS_URL`.
    var embedderURL: String? { givenEmbedderURL ?? environment["KB_EMBEDDINGS_URL"].flatMap { $0.isEmpty ? nil : $0 } }

    /// The embedder an index records, at the endpoint this knowledge base was told to use
    /// instead of the recorded one, if any.
    func recordedChoice(_ record: EmbedderRecord) throws -> EmbedderChoice {
        let choice = try EmbedderChoice(record.spec)
        if case .openAI = choice.base, let embedderURL { return choice.movingEndpoint(to: embedderURL) }
        if let given = givenEmbedderURL {
            throw KBError(.invalidArgument,
                "The endpoint \(given) was given, but this index was built with '\(record.name)', not an OpenAI-compatible endpoint; "
              + "--embedder-url applies to indexes built with --embedder openai:MODEL.")
        }
        return choice
    }

    /// The embedder the index records, loaded once per knowledge base.
    func recorded(_ record: EmbedderRecord) async throws -> any Embedder {
        if let cached = loaded.withLock({ $0?.name == record.name ? $0?.embedder : nil }) { return cached }
        guard let embedder = try await recordedChoice(record).make(environment: environment, dimension: record.hasVectors ? record.dimension : nil,
                                                                   precision: record.passagePrecision, forQueries: true) else {
            throw KBError(.unsupportedMode, "This index has no vectors; use --mode keyword.")
        }
        guard embedder.id == record.name, embedder.dimension == record.dimension else {
            throw KBError(.embedderMismatch,
                "The index holds \(record.dimension)-dim vectors from '\(record.name)', but '\(embedder.id)' returns \(embedder.dimension). "
              + "Install the model the index was built with (or point KB_MODEL_DIR at it), or rebuild the index with --db.")
        }
        loaded.withLock { $0 = (record.name, embedder) }
        return embedder
    }

    /// The embedder a write into this index uses: the one it records, else `choice`, else the
    /// local model. Fails, before any work, when `choice` differs from what the index holds.
    func choose(_ choice: EmbedderChoice?) async throws -> (embedder: (any Embedder)?, record: EmbedderRecord) {
        let recorded = try await store.snapshot { try $0.embedderRecord() }
        let resolved = try choice ?? recorded.map { try recordedChoice($0) } ?? .newIndexDefault(environment)
        // The index knows the dimension of the embedder it records: no need to ask a remote one.
        let known = recorded.flatMap { record in
            (try? recordedChoice(record)) == resolved && record.hasVectors ? record.dimension : nil
        }
        let embedder = try await resolved.make(environment: environment, dimension: known, precision: recorded?.passagePrecision)
        var record = EmbedderChoice.record(for: embedder, choice: resolved)
        // What a snippet's vector reads is the index's, so that its vectors compare and reuse alike.
        if let recorded, recorded.accepts(record) { record.context = recorded.context }
        let chosen = record
        try await store.snapshot { try $0.checkEmbedder(chosen) }
        return (embedder, chosen)
    }

    /// The embedder memory writes and upload jobs use: the index's own (loaded once), else
    /// `choice`, else the local model. nil for a keyword-only index.
    func forWrites(_ choice: EmbedderChoice?) async throws -> (embedder: (any Embedder)?, record: EmbedderRecord) {
        if let recorded = try await store.snapshot({ try $0.embedderRecord() }) {
            if let choice, choice.spec != recorded.spec {
                let (_, record) = try await choose(choice)   // throws the mismatch message
                return (nil, record)
            }
            return recorded.hasVectors ? (try await self.recorded(recorded), recorded) : (nil, .none)
        }
        return try await choose(choice)
    }

    /// Passages' vectors with `embedder` through the index's embedding cache (nil without an
    /// embedder: a keyword-only index).
    func passages(_ texts: [String], with embedder: (any Embedder)?, record: EmbedderRecord) async throws -> [[Float]]? {
        guard let embedder else { return nil }
        return try await CachingEmbedder(embedder, record: record, store: store).embed(texts)
    }

    /// The queries' embeddings for an index with `record`: those asked before from the cache,
    /// the others in one call to the embedder.
    /// `cached: false` asks the embedder whatever the cache holds (the health probe).
    func queryVectors(_ texts: [String], record: EmbedderRecord, cached: Bool = true) async throws -> [[Float]] {
        let embedder = try await recorded(record)
        // The precision queries run in is part of what a vector is: a model loaded in another
        // precision must not be answered from this one's vectors.
        let key = (embedder as? BERTEmbedder).map { "\(record.name) \($0.queryPrecision.rawValue)" } ?? record.name
        let cached = cached && cachingQueries.withLock { $0 }
        var vectors = texts.map { cached ? queryCache.vector(for: $0, embedder: key, role: .query) : nil }
        let missing = Array(Set(texts.indices.filter { vectors[$0] == nil }.map { texts[$0] }))
        if !missing.isEmpty {
            let computed = try await embedder.embed(missing, role: .query)
            guard computed.count == missing.count, computed.allSatisfy({ $0.count == record.dimension }) else {
                throw KBError(.embedding, "\(embedder.id) returned no usable query vector.")
            }
            let byText = Dictionary(uniqueKeysWithValues: zip(missing, computed))
            if cached { for (text, vector) in byText { queryCache.store(vector, for: text, embedder: key, role: .query) } }
            for index in texts.indices where vectors[index] == nil { vectors[index] = byText[texts[index]] }
        }
        return vectors.map { $0! }
    }

    /// The queries' vectors, or — when the embedder is unavailable and `mayDegrade` — nil and why.
    /// Without `mayDegrade` the embedder's error is thrown: there is nothing to fall back to.
    func vectors(_ texts: [String], record: EmbedderRecord?, mayDegrade: Bool) async throws -> (vectors: [[Float]]?, degraded: Degraded?) {
        guard let record, record.hasVectors else { return (nil, nil) }
        if let known = health.skip() {
            guard mayDegrade else { throw known }
            return (nil, Degraded(reason: known.message))
        }
        do {
            let vectors = try await queryVectors(texts, record: record)
            health.succeeded()
            return (vectors, nil)
        } catch let error as KBError where EmbedderHealth.isUnavailability(error) {
            let (_, startProbe) = health.failed(error)
            if startProbe { startProbing(record) }
            guard mayDegrade else { throw error }
            return (nil, Degraded(reason: error.message))
        }
    }

    func countDegradedAnswer() { health.countDegradedAnswer() }

    /// The query cache's hits, misses and size.
    var queryCacheCounts: QueryVectorCache.Counts { queryCache.counts }

    /// Tries the embedder in the background until it works again.
    func startProbing(_ record: EmbedderRecord) {
        Task.detached { [self] in
            while let delay = health.nextProbe() {
                try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                do {
                    _ = try await queryVectors(["kb health probe"], record: record, cached: false)
                    health.succeeded()
                } catch let error as KBError {
                    _ = health.failed(error)
                } catch {
                    _ = health.failed(KBError(.embedding, "The embedder failed: \(error)"))
                }
            }
        }
    }
}

extension KnowledgeBase {
    /// Whether queries can be embedded, and how many answers fell back to keywords.
    public var queryEmbedderStatus: QueryEmbedderStatus { embedders.health.status }

    /// The query-embedding cache's hits, misses, entries and bytes: a query text asked again (a
    /// chat app resends the history every turn) is not embedded again.
    public var queryCacheCounts: QueryVectorCache.Counts { embedders.queryCacheCounts }

    /// Whether queries are answered from the query-embedding cache (true unless
    /// `KB_QUERY_CACHE_MB=0`). `kb eval` turns it off: every mode's latency then includes its
    /// query's embedding, as it would for a question asked once.
    public var cachesQueryVectors: Bool {
        get { embedders.cachingQueries.withLock { $0 } }
        set { embedders.cachingQueries.withLock { $0 = newValue } }
    }

    /// Calls `handler` when queries can no longer be embedded, and when they can again.
    public func onEmbedderHealthChange(_ handler: @escaping @Sendable (EmbedderHealthEvent) -> Void) {
        embedders.health.observe(handler)
    }

    /// Has this knowledge base (a long-running service's) probe an unavailable embedder in the
    /// background — after `first` seconds, then doubling up to `longest` — so that it recovers by
    /// itself while searches answer from keywords.
    public func recoverEmbedderInBackground(first: TimeInterval = 1, longest: TimeInterval = 30) {
        embedders.health.recoverInBackground(first: first, longest: longest)
    }

    /// The embeddings endpoint to use instead of the one an `openai:` index recorded (the model
    /// name recorded stays the identity that must match): given when opening, else
    /// `KB_EMBEDDINGS_URL`.
    public var embedderURL: String? { embedders.embedderURL }
}

/// What the local model's encoder queues of this process have done, for metrics: sequences that
/// have waited for a forward pass, passes run and the sequences in them, and how many wait now.
public struct EncoderLoad: Sendable, Hashable {
    /// Sequences waiting for a pass now.
    public var waiting: Int
    public var passes: Int
    public var sequences: Int
    /// How many passes held 1, 2–4, 5–8, 9–16 and 17 or more sequences.
    public var passSizes: [Int]
}

extension KnowledgeBase {
    /// The encoder queues' work so far, process-wide.
    public static var encoderLoad: EncoderLoad {
        let counts = EncoderActivity.shared.current
        return EncoderLoad(waiting: counts.waiting, passes: counts.passes, sequences: counts.sequences, passSizes: counts.passSizes)
    }
}

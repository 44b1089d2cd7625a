import CKBEncoder
public import Foundation
public import KBCore

/// kb's local embedder: a BERT-family sentence model (BERT, or XLM-RoBERTa such as
/// multilingual-e5-small) run in-process.
///
/// ```swift
/// let embedder = try BERTEmbedder.installed()
/// let vectors = try await embedder.embed(["what is a transit?"], role: .query)
/// ```
///
/// Forward passes run on the embedder's own threads (an `EncoderQueue`), never on Swift's
/// cooperative pool; concurrent calls are packed into shared passes, and a text's vector is the
/// same, bit for bit, whatever it shares a pass with. How the threads are used follows the
/// process's `ComputeMode`.
///
/// @unchecked Sendable: immutable after `init`; the queue synchronises the passes.
public final class BERTEmbedder: Embedder, @unchecked Sendable {
    public let id: String
    public let dimension: Int
    public let folder: ModelFolder
    public let tokenizer: any TextTokenizer
    /// How passes are scheduled.
    public var mode: ComputeMode { configuredMode }
    /// The linear layers' arithmetic on this CPU (`.auto` resolved).
    public let precision: EncoderPrecision
    /// The arithmetic of queries' passes: `precision`, in every `ComputeMode`, so that
    /// `kb search`, `kb serve`, `kb mcp` and another kb embedding through `POST /v1/embeddings`
    /// embed a query to the same vector and rank an index alike. (Queries once ran in int8 in
    /// `.throughput` mode on AVX-512 VNNI CPUs, 2.75 ms instead of 4.0 for 16 tokens on one
    /// core: `kb search` and `kb serve` then ranked the same index differently.)
    public let queryPrecision: EncoderPrecision
    private let configuredMode: ComputeMode
    private let encoder: BERTEncoder
    /// The encoder's layers being set up on a thread of their own: what a command does before
    /// its first pass (reading a book, opening an index) goes on meanwhile.
    private let layers: LayerBuild
    private let queue: EncoderQueue
    /// Where queries go in `.throughput` mode: one worker whose passes use every core, so that a
    /// lone query is answered on all of them and queries that arrive together share one pass
    /// (short sequences cost about as much to encode alone as several together), in
    /// `queryPrecision`. In `.latency` mode, `queue`.
    private let queryQueue: EncoderQueue?

    /// Most tokens in a pass of passages in `.throughput` mode by default: passes of a couple of
    /// thousand tokens keep the feed-forward layers' working memory (tokens × 1,536 floats for
    /// multilingual-e5-small) in the caches of cores that run two passes side by side. Measured
    /// (`kb-bench embed-passages`, 2,000 of the Octave manual's snippets, two runs each): 8,192
    /// tokens 16.1–16.7 s, 4,096 16.3, 2,048 15.9–16.1, 1,024 15.9.
    public static let throughputTokensPerPass = 2048

    /// A model with threads of its own.
    ///
    /// - Parameters:
    ///   - mode: how its threads are used; the process's mode by default.
    ///   - maxSequencesPerPass: most texts in one forward pass. The default is 32.
    ///   - maxTokensPerPass: most tokens in one forward pass of passages in `.throughput` mode (a
    ///     longer text goes alone). The default is ``throughputTokensPerPass``.
    ///   - collectionWindow: how long a pass waits for more requests when several are waiting, in
    ///     seconds (0 for never). The default is 0.001.
    ///   - precision: the linear layers' arithmetic, for passages and queries alike. The default,
    ///     `.auto`, is bf16 where the CPU has AVX-512 BF16 and fp32 elsewhere.
    public init(folder: ModelFolder, mode: ComputeMode? = nil, maxSequencesPerPass: Int = 32,
                maxTokensPerPass: Int = BERTEmbedder.throughputTokensPerPass, collectionWindow: TimeInterval = 0.001,
                precision: EncoderPrecision = .auto) throws {
        guard maxSequencesPerPass >= 1 else { throw KBError(.invalidArgument, "A pass must hold at least one text.") }
        guard maxTokensPerPass >= 1 else { throw KBError(.invalidArgument, "A pass must hold at least one token.") }
        guard collectionWindow >= 0 else { throw KBError(.invalidArgument, "The collection window cannot be negative.") }
        self.folder = folder
        self.id = folder.name
        self.dimension = folder.config.hiddenSize
        tokenizer = try folder.tokenizer()
        let encoder = try BERTEncoder(folder: folder, precision: precision.resolved(), buildingLayers: false)
        self.encoder = encoder
        // oneDNN's process-wide state made here, before the build's exit handler is registered:
        // at exit it is then torn down only after that handler has waited for the build.
        if encoder.precision != KB_PRECISION_FP32 {
            kb_matmul_prime(KB_PRECISION_BF16)
            if encoder.precision == KB_PRECISION_INT8 { kb_matmul_prime(KB_PRECISION_INT8) }
        }
        layers = LayerBuild { try encoder.buildLayers() }
        self.precision = EncoderPrecision(encoder.precision)
        configuredMode = mode ?? ProcessCompute.mode
        var configuration = EncoderQueue.Configuration(mode: configuredMode)
        configuration.maxSequencesPerPass = maxSequencesPerPass
        if configuredMode == .throughput { configuration.maxTokensPerPass = maxTokensPerPass }
        configuration.collectionWindow = collectionWindow
        // Beside a queue of queries, passages (ingest, uploads, memory writes) yield the cores.
        if configuredMode == .throughput { configuration.niceness = try Self.passageNiceness(ProcessInfo.processInfo.environment) }
        queue = EncoderQueue(configuration: configuration, pass: Self.pass(encoder))
        queryPrecision = self.precision
        // Queries get a queue of their own in `.throughput` mode: one worker on every core.
        if configuredMode == .throughput {
            var queries = EncoderQueue.Configuration(mode: .latency)
            // Split across the cores no other thread is waiting for (a busy machine's cores, shared,
            // make a split pass wait at every step for its slowest part).
            queries.fitsIdleCores = true
            if let threads = try Self.queryThreads(ProcessInfo.processInfo.environment) { queries.threadsPerPass = threads }
            queries.maxSequencesPerPass = maxSequencesPerPass
            queries.collectionWindow = collectionWindow
            queryQueue = EncoderQueue(configuration: queries, pass: Self.pass(encoder))
        } else {
            queryQueue = nil
        }
    }

    deinit {
        queue.stop()
        queryQueue?.stop()
    }

    /// How much lower passages' passes run than queries' and requests' in `.throughput` mode:
    /// `KB_PASSAGE_NICENESS` (0 turns it off, at most 19), else 10 — under full load about a
    /// tenth of the cores for an upload's embedding, all of them when no request waits.
    /// Threads a query's pass is split across in `.throughput` mode (`KB_QUERY_THREADS`); nil
    /// for every core.
    static func queryThreads(_ environment: [String: String]) throws -> Int? {
        try EnvironmentNumber.read("KB_QUERY_THREADS", in: environment, as: Int.self, within: 1...1024,
                                   meaning: "how many threads a query's forward pass is split across")
    }

    static func passageNiceness(_ environment: [String: String]) throws -> Int32 {
        try EnvironmentNumber.read("KB_PASSAGE_NICENESS", in: environment, as: Int32.self, within: 0...19,
                                   meaning: "how much lower passages' passes run than queries' (0 turns it off)") ?? 10
    }

    /// An encoder's forward passes, for a queue.
    private static func pass(_ encoder: BERTEncoder) -> EncoderQueue.Pass {
        { sequences, scratch, threads in
            var profile = EncoderProfile.disabled
            return encoder.encode(sequences, scratch: scratch, threads: threads, profile: &profile)
        }
    }

    /// The model in `$KB_MODEL_DIR`, or the default model's install location, loaded once per
    /// process and precision and shared; a clear error that says how to install it when it is not
    /// there. Its precision is `$KB_PRECISION`, else the process's (`ProcessPrecision`); `auto`
    /// is `index`'s — the precision an index's passages were embedded in, so that its queries
    /// are embedded alike (`runnable` on this CPU) — or for no index yet `newIndexDefault`.
    /// With `name`, the model installed under that name (`scripts/install-model.sh NAME`) instead.
    public static func installed(environment: [String: String] = ProcessInfo.processInfo.environment, name: String? = nil,
                                 index: EncoderPrecision? = nil) throws -> BERTEmbedder {
        let path = name.map { Locations.modelDirectory(named: $0, environment) } ?? Locations.modelDirectory(environment)
        if let name, !FileManager.default.fileExists(atPath: path + "/config.json") {
            let alternative = name == Locations.multilingualModelName
                ? " It is kb's default for a new index; `--embedder local` makes one with all-MiniLM-L6-v2 (English only) instead." : ""
            throw KBError(.modelMissing, "The model \(name) is not installed (no model at \(path)). Install it with `scripts/install-model.sh \(name)`.\(alternative)")
        }
        guard FileManager.default.fileExists(atPath: path + "/config.json") else {
            throw KBError(.modelMissing,
                "The local embedding model is not installed (no model at \(path)). Install it with `scripts/install-model.sh` "
              + "(scripts/setup.sh does it too), point KB_MODEL_DIR at a model folder, or use --embedder none for a keyword-only index.")
        }
        let chosen = try ProcessPrecision.current(environment)
        let precision = try (chosen == .auto ? (index ?? .newIndexDefault).runnable : chosen).resolved()
        let folder = URL(fileURLWithPath: path).standardizedFileURL.path
        return try LoadedModels.shared.model(at: folder, precision: precision) {
            try BERTEmbedder(folder: ModelFolder(path: path), precision: EncoderPrecision(precision))
        }
    }

    public func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        try await layers.wait()
        let sequences = await tokenized(texts) { self.tokenIDs($0, role: role) }
        if role == .query, let queryQueue { return await queryQueue.encode(sequences) }
        return await queue.encode(sequences)
    }

    /// Many texts (a book's passages: 0.4 s for the Octave manual's 6,395 on one core) are
    /// tokenised on every core, on a Dispatch thread; a few on the calling task.
    private func tokenized(_ texts: [String], _ ids: @escaping @Sendable (String) -> [Int32]) async -> [[Int32]] {
        guard texts.count >= Self.concurrentTokenizing else { return texts.map(ids) }
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: texts.concurrentMap(minimumCount: Self.concurrentTokenizing, ids)) }
        }
    }

    /// Texts from which a call's tokenising is shared by every core.
    static let concurrentTokenizing = 256

    /// Vectors with `prefix` before every text instead of the model's own prompts.
    public func embed(_ texts: [String], prefix: String) async throws -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        try await layers.wait()
        let (tokenizer, maxLength) = (tokenizer, folder.maxSequenceLength)
        return await queue.encode(await tokenized(texts) { tokenizer.encode(prefix + $0, maxLength: maxLength) })
    }

    /// Token ids of one input as the model sees it (prefix, specials, truncation).
    public func tokenIDs(_ text: String, role: EmbeddingRole = .passage) -> [Int32] {
        tokenizer.encode(prefix(role) + text, maxLength: folder.maxSequenceLength)
    }

    private func prefix(_ role: EmbeddingRole) -> String {
        role == .query ? folder.queryPrefix : folder.passagePrefix
    }

    /// Threads that run forward passes.
    public var workers: Int { queue.configuration.workers }

    /// Passes run so far (for measurements and tests), queries' included.
    public var passCount: Int { queue.statistics.passes + (queryQueue?.statistics.passes ?? 0) }
    /// The most texts one pass has held so far.
    public var largestPass: Int { max(queue.statistics.largestPass, queryQueue?.statistics.largestPass ?? 0) }

    /// Waits (off the cooperative pool) until the layers of every model made so far are set up.
    /// An exit while oneDNN still sets them up on a thread of their own (a command that needed no
    /// vector exits within milliseconds) is waited for by an exit handler as well; this makes the
    /// wait explicit.
    public static func finishBackgroundWork() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                LayerBuild.drainAll()
                continuation.resume()
            }
        }
    }

    /// One forward pass over token-id sequences on the calling thread, timing each stage into
    /// `profile`. For measurements (`kb-bench encoder-profile`).
    public func forwardPass(_ sequences: [[Int32]], threads: Int = 1, profile: inout EncoderProfile) throws -> [[Float]] {
        try layers.waitBlocking()
        return encoder.encode(sequences, scratch: BERTEncoder.Scratch(), threads: threads, profile: &profile)
    }
}

/// Work started on a Dispatch thread when made (off Swift's cooperative pool), waited for by
/// whoever needs it done; its error is thrown to each.
/// @unchecked Sendable: `outcome` and `waiting` are guarded by `condition`.
final class LayerBuild: @unchecked Sendable {
    private let condition = NSCondition()
    private var outcome: Result<Void, any Error>?
    private var waiting: [CheckedContinuation<Void, any Error>] = []

    init(_ work: @escaping @Sendable () throws -> Void) {
        Self.running.started()
        DispatchQueue.global(qos: .userInitiated).async {
            let result = Result { try work() }
            self.condition.lock()
            self.outcome = result
            let waiting = self.waiting
            self.waiting = []
            self.condition.broadcast()
            self.condition.unlock()
            for continuation in waiting { continuation.resume(with: result) }
            Self.running.ended()
        }
    }

    /// Builds under way. A process must not exit while one runs (a command that needed no vector:
    /// an ingest with nothing changed): oneDNN's own teardown would run under it and the build
    /// crash (every time, when kb's command line skipped its wait). An `atexit` handler
    /// registered with the first build waits for them. Exit handlers run in the reverse order of
    /// their registration, oneDNN's (its process-wide state's destructors) included, so the model
    /// makes that state first (`kb_matmul_prime`) and only then starts the build that registers
    /// the handler: the handler then runs, and waits, before oneDNN's teardown. kb's command line
    /// also waits explicitly (`BERTEmbedder.finishBackgroundWork()`).
    private static let running = Running()

    /// Blocks until no build is under way.
    static func drainAll() { running.drain() }

    /// @unchecked Sendable: `count` is guarded by `condition`.
    private final class Running: @unchecked Sendable {
        private let condition = NSCondition()
        private var count = 0
        private var registered = false

        func started() {
            condition.lock()
            defer { condition.unlock() }
            count += 1
            if !registered {
                registered = true
                atexit { LayerBuild.running.drain() }
            }
        }

        func ended() {
            condition.lock()
            count -= 1
            condition.broadcast()
            condition.unlock()
        }

        func drain() {
            condition.lock()
            while count > 0 { condition.wait() }
            condition.unlock()
        }
    }

    /// Returns once the work is done; throws its error.
    func wait() async throws {
        if let outcome = finished() { return try outcome.get() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if let outcome = enqueue(continuation) { continuation.resume(with: outcome) }
        }
    }

    private func finished() -> Result<Void, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        return outcome
    }

    /// The outcome when the work is done, else nil with `continuation` kept for it.
    private func enqueue(_ continuation: CheckedContinuation<Void, any Error>) -> Result<Void, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        if outcome == nil { waiting.append(continuation) }
        return outcome
    }

    /// As `wait`, blocking the calling thread (never one of Swift's cooperative pool).
    func waitBlocking() throws {
        condition.lock()
        while outcome == nil { condition.wait() }
        let outcome = self.outcome!
        condition.unlock()
        try outcome.get()
    }
}

/// The process's models, one per folder and precision, so that every caller shares one set of
/// weights and one set of threads.
/// @unchecked Sendable: `models` is guarded by `lock`.
final class LoadedModels: @unchecked Sendable {
    static let shared = LoadedModels()
    private let lock = NSLock()
    private var models: [String: BERTEmbedder] = [:]

    func model(at path: String, precision: kb_precision, load: () throws -> BERTEmbedder) throws -> BERTEmbedder {
        let key = "\(precision.rawValue) \(path)"
        return try lock.withLock {
            if let model = models[key] { return model }
            let model = try load()
            models[key] = model
            return model
        }
    }
}

import Foundation
import KBCore

/// What every encoder queue of the process has done, for metrics (`GET /metrics`): sequences
/// that have waited for a pass, passes run and the sequences in them, and how many wait now.
public final class EncoderActivity: Sendable {
    public static let shared = EncoderActivity()

    public struct Counts: Sendable, Hashable {
        public var queued = 0
        public var passes = 0
        public var sequences = 0
        /// Sequences waiting for a pass now.
        public var waiting: Int { queued - sequences }
        /// How many passes held 1, 2–4, 5–8, 9–16 and 17 or more sequences.
        public var passSizes = [0, 0, 0, 0, 0]
    }

    private let counts = LockedValue(Counts())

    public var current: Counts { counts.withLock { $0 } }

    func waiting(_ sequences: Int) { counts.withLock { $0.queued += sequences } }

    func pass(_ sequences: Int) {
        counts.withLock { counts in
            counts.passes += 1
            counts.sequences += sequences
            counts.passSizes[sequences <= 1 ? 0 : sequences <= 4 ? 1 : sequences <= 8 ? 2 : sequences <= 16 ? 3 : 4] += 1
        }
    }
}

/// Runs a model's forward passes on threads of its own — never on Swift's cooperative pool — and
/// packs the token sequences that concurrent callers ask for into shared passes.
///
/// Callers `await encode(_:)`; a worker thread takes what is waiting (the oldest requests first,
/// a few sequences from each so that one large request cannot hold back small ones), runs one
/// pass, and resumes every caller whose sequences are all done. When a worker finds two or more
/// requests waiting, it gives others a short collection window to join the pass; a lone request
/// never waits. Because the encoder's results do not depend on the batch, packing changes speed
/// only, never a vector's bits.
///
/// ```swift
/// let queue = EncoderQueue(configuration: .init(mode: .throughput)) { ids, scratch, threads in
///     encoder.encode(ids, scratch: scratch, threads: threads, profile: &ignored)
/// }
/// let vectors = await queue.encode([[101, 2054, 102]])
/// ```
///
/// @unchecked Sendable: `waiting`, `passes`, `stopping` and every `Request`'s mutable state are
/// guarded by `condition`.
final class EncoderQueue: @unchecked Sendable {
    struct Configuration: Sendable, Hashable {
        /// Worker threads, each running one pass at a time. The default is one per core in
        /// `.throughput` mode and one in `.latency` mode.
        var workers: Int
        /// Threads each pass is split across. The default is 1 in `.throughput` mode and one per
        /// core in `.latency` mode.
        var threadsPerPass: Int
        /// Most sequences in one pass. The default is 32.
        var maxSequencesPerPass = 32
        /// Most tokens in one pass (a sequence longer than this goes alone). The default is 8,192.
        var maxTokensPerPass = 8192
        /// How long a worker that finds several requests waiting lets more join its pass, in
        /// seconds; 0 turns the window off. The default is 0.001.
        var collectionWindow: TimeInterval = 0.001
        /// Tokens each idle worker's share must reach before waiting work is split among them:
        /// below it a pass is bound by reading the weights, and one packed pass costs less than
        /// several small ones side by side. The default is 256.
        var minTokensPerShare = 256
        /// How much lower than the process's other threads the workers run (added to their nice
        /// value on Linux, up to 19): a queue of passages beside a queue of queries runs at 10, so that
        /// the kernel gives a query's pass — and the requests around it — the cores first while
        /// an upload or ingest is embedded, and the passages all of them when nothing else runs.
        /// The default is 0.
        var niceness: Int32 = 0
        /// Whether a pass is split across fewer than `threadsPerPass` threads when other threads
        /// wait for the cores (`IdleCores`): for the queue of queries, whose passes are split to
        /// answer sooner on an idle machine. The default is false.
        var fitsIdleCores = false

        init(mode: ComputeMode, cores: Int = ProcessInfo.processInfo.activeProcessorCount) {
            let cores = max(1, cores)
            workers = mode == .throughput ? cores : 1
            threadsPerPass = mode == .throughput ? 1 : cores
        }
    }

    /// What one pass computes: vectors for sequences, in a worker's scratch, on some threads.
    typealias Pass = @Sendable (_ sequences: [[Int32]], _ scratch: BERTEncoder.Scratch, _ threads: Int) -> [[Float]]

    /// Counters for measurements and tests.
    struct Statistics: Sendable, Hashable {
        var passes = 0
        var sequences = 0
        /// The most sequences one pass held.
        var largestPass = 0
    }

    /// One caller's sequences and where their vectors go.
    private final class Request {
        let sequences: [[Int32]]
        var next = 0
        var results: [[Float]]
        var remaining: Int
        let continuation: CheckedContinuation<[[Float]], Never>

        init(_ sequences: [[Int32]], _ continuation: CheckedContinuation<[[Float]], Never>) {
            self.sequences = sequences
            self.results = Array(repeating: [], count: sequences.count)
            self.remaining = sequences.count
            self.continuation = continuation
        }

        var waiting: Int { sequences.count - next }
    }

    let configuration: Configuration
    private let pass: Pass
    private let condition = NSCondition()
    private var waiting: [Request] = []
    /// Workers running a pass now.
    private var busy = 0
    private var stats = Statistics()
    private var stopping = false

    init(configuration: Configuration, pass: @escaping Pass) {
        self.configuration = configuration
        self.pass = pass
        for number in 0..<max(1, configuration.workers) {
            let thread = Thread { [self] in work() }
            thread.name = "kb-encoder-\(number)"
            thread.start()
        }
    }

    /// Stops the workers once what is waiting is done.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    var statistics: Statistics {
        condition.lock()
        defer { condition.unlock() }
        return stats
    }

    /// The vectors of `sequences`, in order.
    func encode(_ sequences: [[Int32]]) async -> [[Float]] {
        guard !sequences.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            condition.lock()
            waiting.append(Request(sequences, continuation))
            EncoderActivity.shared.waiting(sequences.count)
            condition.signal()
            condition.unlock()
        }
    }

    // MARK: - Workers

    /// Working memory a worker keeps while idle: a pass of 1,024 tokens (a burst of queries),
    /// and 4 MB of attention and of product scratch.
    static let idleScratchTokens = 1024
    static let idleScratchBytes = 4 << 20

    private func work() {
        if configuration.niceness > 0 { Self.lowerPriority(by: configuration.niceness) }
        let scratch = BERTEncoder.Scratch()
        condition.lock()
        while true {
            while waiting.isEmpty && !stopping { condition.wait() }
            if waiting.isEmpty && stopping { break }
            if configuration.collectionWindow > 0 && waiting.count >= 2 {
                let deadline = Date(timeIntervalSinceNow: configuration.collectionWindow)
                while waitingSequences < configuration.maxSequencesPerPass && condition.wait(until: deadline) {}
            }
            let taken = take()
            busy += 1
            if !waiting.isEmpty { condition.signal() }   // what is left is another worker's
            stats.passes += 1
            stats.sequences += taken.count
            stats.largestPass = max(stats.largestPass, taken.count)
            EncoderActivity.shared.pass(taken.count)
            condition.unlock()

            let threads = configuration.fitsIdleCores ? IdleCores.threads(upTo: configuration.threadsPerPass) : configuration.threadsPerPass
            let vectors = pass(taken.map { $0.request.sequences[$0.index] }, scratch, threads)

            // Nothing waits: what a large pass grew is given back before the results are, so
            // an idle queue holds only a small pass's working memory.
            condition.lock()
            if waiting.isEmpty {
                condition.unlock()
                scratch.shrink(keepingTokens: Self.idleScratchTokens, bytes: Self.idleScratchBytes)
                condition.lock()
            }
            busy -= 1
            var finished: [Request] = []
            for ((request, index), vector) in zip(taken, vectors) {
                request.results[index] = vector
                request.remaining -= 1
                if request.remaining == 0 { finished.append(request) }
            }
            condition.unlock()
            for request in finished { request.continuation.resume(returning: request.results) }
            condition.lock()
        }
        condition.unlock()
    }

    /// Lowers the calling thread's scheduling priority by `niceness` (to at most 19). On Linux
    /// the nice value belongs to each thread, and `setpriority(PRIO_PROCESS, 0, …)` sets the
    /// calling thread's (setpriority(2), *Bugs*); a process may always lower its own. Nothing
    /// elsewhere.
    static func lowerPriority(by niceness: Int32) {
        #if os(Linux)
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        _ = setpriority(which, 0, min(19, getpriority(which, 0) + niceness))
        #endif
    }

    private var waitingSequences: Int { waiting.reduce(0) { $0 + $1.waiting } }

    /// The sequences of the next pass: up to four from each waiting request, oldest first, then
    /// more from the oldest, within the pass's limits (a lone sequence over the token limit goes
    /// alone). When other workers are idle and there is enough waiting, a pass takes only its
    /// share, so that one large request runs on every core. Call with `condition` locked.
    private func take() -> [(request: Request, index: Int)] {
        var taken: [(request: Request, index: Int)] = []
        var tokens = 0
        let idle = max(1, configuration.workers - busy)
        var limit = configuration.maxSequencesPerPass
        if idle > 1 {
            let waitingTokens = waiting.reduce(0) { sum, request in sum + request.sequences[request.next...].reduce(0) { $0 + $1.count } }
            if waitingTokens >= idle * configuration.minTokensPerShare {
                limit = max(1, min(limit, (waitingSequences + idle - 1) / idle))
            }
        }
        func fill(from request: Request, upTo share: Int) {
            var count = 0
            while request.next < request.sequences.count, count < share, taken.count < limit {
                let length = request.sequences[request.next].count
                guard taken.isEmpty || tokens + length <= configuration.maxTokensPerPass else { return }
                taken.append((request, request.next))
                tokens += length
                request.next += 1
                count += 1
            }
        }
        for request in waiting { fill(from: request, upTo: 4) }
        for request in waiting { fill(from: request, upTo: .max) }
        waiting.removeAll { $0.waiting == 0 }
        return taken
    }
}

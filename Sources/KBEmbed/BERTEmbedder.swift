import COpenBLAS
public import Foundation
public import KBCore

/// kb's local embedder: a BERT-family sentence model run in-process on OpenBLAS.
///
/// ```swift
/// let embedder = try BERTEmbedder(folder: ModelFolder(path: modelPath))
/// let vectors = try await embedder.embed(["what is a transit?"], role: .query)
/// ```
///
/// Inputs are sorted by length and batched so similar lengths go together; batches run on all
/// cores (OpenBLAS single-threaded per batch), and a lone input uses OpenBLAS's threads instead.
/// Results come back in input order.
///
/// @unchecked Sendable: immutable after `init`; `lock` serialises calls, because OpenBLAS's
/// thread count is process-wide.
public final class BERTEmbedder: Embedder, @unchecked Sendable {
    public let id: String
    public let dimension: Int
    public let folder: ModelFolder
    public let tokenizer: WordPieceTokenizer
    /// Most inputs in one forward pass. The default is 32.
    public let batchSize: Int
    /// Worker threads. The default is the number of cores.
    public let threads: Int
    private let encoder: BERTEncoder
    private let lock = NSLock()

    public init(folder: ModelFolder, batchSize: Int = 32, threads: Int? = nil) throws {
        guard batchSize >= 1 else { throw KBError(.invalidArgument, "The batch size must be at least 1.") }
        self.folder = folder
        self.id = folder.name
        self.dimension = folder.config.hiddenSize
        self.batchSize = batchSize
        self.threads = max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount)
        tokenizer = try WordPieceTokenizer(vocabulary: try folder.vocabulary(), lowercase: folder.lowercase)
        encoder = try BERTEncoder(folder: folder)
    }

    /// The model in `$KB_MODEL_DIR`, or the default model's install location; a clear error
    /// that says how to install it when it is not there.
    public static func installed(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> BERTEmbedder {
        let path = Locations.modelDirectory(environment)
        guard FileManager.default.fileExists(atPath: path + "/config.json") else {
            throw KBError(.modelMissing,
                "The local embedding model is not installed (no model at \(path)). Install it with `scripts/install-model.sh` "
              + "(scripts/setup.sh does it too), point KB_MODEL_DIR at a model folder, or use --embedder none for a keyword-only index.")
        }
        return try BERTEmbedder(folder: ModelFolder(path: path))
    }

    public func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]] {
        embedNow(texts, role: role)
    }

    /// Token ids of one input as the model sees it (prefix, specials, truncation).
    public func tokenIDs(_ text: String, role: EmbeddingRole = .passage) -> [Int32] {
        tokenizer.encode(prefix(role) + text, maxLength: folder.maxSequenceLength)
    }

    private func prefix(_ role: EmbeddingRole) -> String {
        role == .query ? folder.queryPrefix : folder.passagePrefix
    }

    /// Embeds synchronously on the calling thread and kb's workers.
    public func embedNow(_ texts: [String], role: EmbeddingRole) -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        lock.lock()
        defer { lock.unlock() }
        let ids = parallelMap(texts) { self.tokenIDs($0, role: role) }
        let order = ids.indices.sorted { ids[$0].count < ids[$1].count }
        let perBatch = max(1, min(batchSize, (texts.count + threads - 1) / threads))
        let batches = stride(from: 0, to: order.count, by: perBatch).map { Array(order[$0..<min($0 + perBatch, order.count)]) }
        let results = ConcurrentSlots<[Float]>(count: texts.count)
        if batches.count == 1 {
            openblas_set_num_threads(Int32(threads))
            let vectors = encoder.encode(batches[0].map { ids[$0] })
            for (index, vector) in zip(batches[0], vectors) { results.set(index, vector) }
        } else {
            openblas_set_num_threads(1)
            let next = Counter()
            DispatchQueue.concurrentPerform(iterations: min(threads, batches.count)) { _ in
                while let b = next.take(below: batches.count) {
                    let vectors = encoder.encode(batches[b].map { ids[$0] })
                    for (index, vector) in zip(batches[b], vectors) { results.set(index, vector) }
                }
            }
        }
        return results.values.map { $0! }
    }

    private func parallelMap<T: Sendable, U: Sendable>(_ items: [T], _ transform: @escaping @Sendable (T) -> U) -> [U] {
        let slots = ConcurrentSlots<U>(count: items.count)
        let chunk = max(1, (items.count + threads - 1) / threads)
        DispatchQueue.concurrentPerform(iterations: (items.count + chunk - 1) / chunk) { c in
            for i in c * chunk..<min((c + 1) * chunk, items.count) { slots.set(i, transform(items[i])) }
        }
        return slots.values.map { $0! }
    }
}

/// Hands out 0, 1, 2, … to concurrent workers.
/// @unchecked Sendable: `value` is guarded by `lock`.
final class Counter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()
    func take(below limit: Int) -> Int? {
        lock.lock(); defer { lock.unlock() }
        guard value < limit else { return nil }
        value += 1
        return value - 1
    }
}

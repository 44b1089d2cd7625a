import Crypto
import Foundation
import KBCore
import KBStore

/// What every writer embeds passages with — ingest, upload jobs, re-reads, memories, reindexing:
/// the embedder and the index's embedding cache behind one `embed`. A remote embedder's texts
/// are looked up in the cache by hash first and only the others sent; each answered batch is
/// cached at once with the tokens the endpoint reported, so a run that fails part-way does not
/// pay again for what was answered. A local model embeds directly.
///
/// ```swift
/// let vectors = try await CachingEmbedder(embedder, record: record, store: store).embed(texts)
/// ```
struct CachingEmbedder: Sendable {
    let embedder: any Embedder
    let record: EmbedderRecord
    let store: any IndexStore

    init(_ embedder: any Embedder, record: EmbedderRecord, store: any IndexStore) {
        self.embedder = embedder
        self.record = record
        self.store = store
    }

    /// Texts sent to a remote endpoint in one request.
    static let remoteBatch = 64

    /// One passage vector per text, in order, each of the record's dimension.
    func embed(_ texts: [String]) async throws -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        let vectors = try await embedder.isRemote ? throughCache(texts) : embedder.embed(texts, role: .passage)
        guard vectors.count == texts.count, vectors.allSatisfy({ $0.count == record.dimension }) else {
            throw KBError(.embedding, "\(embedder.id) returned \(vectors.count) vectors for \(texts.count) texts, or vectors of the wrong size.")
        }
        return vectors
    }

    private func throughCache(_ texts: [String]) async throws -> [[Float]] {
        let record = self.record
        let hashes = texts.map { Data(SHA256.hash(data: Data($0.utf8))) }
        var vectors = try await store.snapshot { try $0.cachedVectors(embedder: record, hashes: hashes) }.filter { $0.value.count == record.dimension }
        var seen = Set<Data>()
        let wanted = hashes.filter { vectors[$0] == nil && seen.insert($0).inserted }
        let textByHash = Dictionary(zip(hashes, texts), uniquingKeysWith: { first, _ in first })
        for start in stride(from: 0, to: wanted.count, by: Self.remoteBatch) {
            let part = Array(wanted[start..<min(start + Self.remoteBatch, wanted.count)])
            let before = embedder.tokensUsed
            let fresh = try await embedder.embed(part.map { textByHash[$0]! }, role: .passage)
            guard fresh.count == part.count, fresh.allSatisfy({ $0.count == record.dimension }) else {
                throw KBError(.embedding, "\(embedder.id) returned \(fresh.count) vectors for \(part.count) texts, or vectors of the wrong size.")
            }
            try await store.cacheVectors(embedder: record, Array(zip(part, fresh).map { (hash: $0, vector: $1) }), tokens: embedder.tokensUsed - before)
            for (hash, vector) in zip(part, fresh) { vectors[hash] = vector }
        }
        return hashes.map { vectors[$0]! }
    }
}

import Crypto
import Foundation
import KBCore
import KBEmbed
import KBStore

extension KnowledgeBase {
    /// Vectors from a remote embedder, through the index's embedding cache: cached texts are
    /// not sent, and each answered batch is cached at once, so a run that fails part-way does not
    /// pay again for what was answered.
    func embedRemotely(_ texts: [String], embedder: any Embedder, record: EmbedderRecord) async throws -> [[Float]] {
        let hashes = texts.map { Data(SHA256.hash(data: Data($0.utf8))) }
        var vectors = try await store.snapshot { try $0.cachedVectors(embedder: record, hashes: hashes) }.filter { $0.value.count == record.dimension }
        var seen = Set<Data>()
        let wanted = hashes.filter { vectors[$0] == nil && seen.insert($0).inserted }
        let textByHash = Dictionary(zip(hashes, texts), uniquingKeysWith: { first, _ in first })
        for start in stride(from: 0, to: wanted.count, by: 64) {
            let part = Array(wanted[start..<min(start + 64, wanted.count)])
            let before = (embedder as? HTTPEmbedder)?.tokensUsed ?? 0
            let fresh = try await embedder.embed(part.map { textByHash[$0]! }, role: .passage)
            guard fresh.count == part.count, fresh.allSatisfy({ $0.count == record.dimension }) else {
                throw KBError(.embedding, "\(embedder.id) returned \(fresh.count) vectors for \(part.count) texts, or vectors of the wrong size.")
            }
            let used = ((embedder as? HTTPEmbedder)?.tokensUsed ?? 0) - before
            try await store.cacheVectors(embedder: record, Array(zip(part, fresh).map { (hash: $0, vector: $1) }), tokens: used)
            for (hash, vector) in zip(part, fresh) { vectors[hash] = vector }
        }
        return hashes.map { vectors[$0]! }
    }
}

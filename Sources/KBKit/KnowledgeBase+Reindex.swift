import Foundation
import KBCore
import KBStore

/// What `reindex` did.
public struct ReindexReport: Sendable, Hashable, Codable {
    public var from: String?
    public var to: String
    /// Snippets embedded by this run (a resumed run skips those done before).
    public var embedded = 0
    public var switched = false
    public var seconds = 0.0
}

extension KnowledgeBase {
    /// Re-embeds every snippet (and memory) with another embedder into a new vector set, while
    /// searches keep using the current one; when the set is complete the index switches to it in
    /// one transaction. An interrupted run resumes where it stopped. The old vectors stay (vectors
    /// from several embedders may coexist) unless `dropOld`.
    ///
    /// ```swift
    /// let report = try await kb.reindex(to: .hashing)
    /// // or an endpoint: .openAI(model: "nomic-embed-text", url: "http://127.0.0.1:11434/v1")
    /// ```
    public func reindex(to choice: EmbedderChoice, dropOld: Bool = false,
                        progress: @Sendable (IngestProgress) -> Void = { _ in }) async throws -> ReindexReport {
        let started = Date()
        let current = try await store.snapshot { try $0.embedderRecord() }
        guard let embedder = try await choice.make() else {
            throw KBError(.invalidArgument, "kb reindex needs an embedder that makes vectors (local, hashing or openai:MODEL), not none.")
        }
        let record = EmbedderChoice.record(for: embedder, choice: choice)
        var report = ReindexReport(from: current?.name, to: record.name)
        if let current, current.name == record.name, current.spec == record.spec {
            throw KBError(.invalidArgument, "The index already uses \(record.name). Name another embedder to switch to.")
        }
        let total = try await status().snippets
        for _ in 0..<4 {
            while true {
                let batch = try await store.snapshot { try $0.snippetsWithoutVectors(embedder: record, limit: 256) }
                if batch.isEmpty { break }
                progress(IngestProgress(phase: .embedding, done: total - batch.count, total: total, current: record.name))
                let texts = batch.map(\.text)
                let vectors = try await embedder.isRemote ? embedRemotely(texts, embedder: embedder, record: record)
                                                          : embedder.embed(texts, role: .passage)
                guard vectors.count == batch.count else {
                    throw KBError(.embedding, "\(embedder.id) returned \(vectors.count) vectors for \(batch.count) texts.")
                }
                try await store.addVectors(embedder: record, Array(zip(batch.map(\.id), vectors).map { (id: $0, vector: $1) }))
                report.embedded += batch.count
            }
            // Another process may have added snippets meanwhile: then go round again.
            if try await store.switchEmbedder(to: record, dropOthers: dropOld) {
                report.switched = true
                break
            }
        }
        guard report.switched else {
            throw KBError(.database, "The index kept changing while it was reindexed; run `kb reindex` again (it resumes).")
        }
        // The next search reads the new record (the store's vectors in memory follow the switch).
        retriever.forgetEmbedderRecord()
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}

import Foundation
import KBCore

extension KnowledgeBase {
    /// Readies what a service's first queries would otherwise wait for, and returns how long it
    /// took: the index's query embedder loaded (a local model's weights read and laid out for its
    /// kernels) and passes run at a short, a middling and a long query (a few words, a sentence, a
    /// paragraph of about a hundred tokens, as a conversation's planned queries are), one after another and then
    /// several at once, so that every encoder worker has run; then one search, which reads the
    /// vectors and the keyword index. A remote embedder is not called (a call may cost money), and
    /// a keyword-only index only searches. Nothing is thrown: what cannot be readied here (a model
    /// that will not load) is met by the first query, as it would have been.
    @discardableResult
    public func warm() async -> Duration {
        let started = ContinuousClock.now
        if let record = try? await store.snapshot({ try $0.embedderRecord() }), record.hasVectors,
           let embedder = try? await embedders.recorded(record), !embedder.isRemote {
            let clause = "How do the planets in the tenth house shape a career, and what does the ephemeris say about it? "
            let texts = ["warm", clause, String(repeating: clause, count: 4)]
            for text in texts { _ = try? await embedder.embed([text], role: .query) }
            let cores = ProcessInfo.processInfo.activeProcessorCount
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<(2 * max(1, cores)) {
                    group.addTask { _ = try? await embedder.embed([texts[index % texts.count] + " \(index)"], role: .query) }
                }
            }
        }
        _ = try? await retriever.search(SearchQuery("warm"))
        return ContinuousClock.now - started
    }
}

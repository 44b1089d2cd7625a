import Foundation
public import KBCore
import KBEmbed
import KBIndex

/// What searches of one knowledge base keep between calls: the query embedder and the vectors
/// in memory, with the index generation they reflect.
/// @unchecked Sendable: every field is guarded by `lock`.
final class SearchState: @unchecked Sendable {
    let lock = NSLock()
    var index: VectorIndex?
    var record: EmbedderRecord?
    var generation: Int64 = -1
    var embedder: (any Embedder)?
    var embedderName: String?
}

extension KnowledgeBase {
    /// Ranked snippets for a query.
    ///
    /// Keyword mode ranks with FTS5 bm25; vector mode embeds the query and scans the vectors;
    /// hybrid runs both to `query.candidates` and fuses the ranks (RRF, k = 60). Filters select
    /// snippets before ranking. Near-duplicate snippets are collapsed (the best-ranked stays);
    /// then `groupBySource` and `diversity` apply, and the first `limit` hits are returned.
    public func search(_ query: SearchQuery) async throws -> SearchResults {
        try await search(query, queryVector: nil)
    }

    /// The query's embedding, for callers that run several searches with one text.
    func queryVector(_ text: String) async throws -> [Float]? {
        guard let record = try store.embedderRecord(), record.dimension > 0 else { return nil }
        let embedder = try queryEmbedder(record)
        let vectors = try await embedder.embed([text], role: .query)
        guard let vector = vectors.first, vector.count == record.dimension else {
            throw KBError(.embedding, "\(embedder.id) returned no usable query vector.")
        }
        return vector
    }

    /// `search`, with the query's embedding already made (nil: embed it here when needed).
    func search(_ query: SearchQuery, queryVector given: [Float]?) async throws -> SearchResults {
        guard query.limit >= 1 else { throw KBError(.invalidArgument, "The number of hits (-k) must be at least 1.") }
        guard query.candidates >= 1 else { throw KBError(.invalidArgument, "The candidate depth must be at least 1.") }
        if let lambda = query.diversity, !(0...1).contains(lambda) {
            throw KBError(.invalidArgument, "Diversity λ must be between 0 and 1 (1 = relevance only); got \(lambda).")
        }
        guard query.keywordWeight >= 0, query.vectorWeight >= 0, query.keywordWeight + query.vectorWeight > 0 else {
            throw KBError(.invalidArgument, "Fusion weights must be zero or more, and not both zero.")
        }
        let record = try store.embedderRecord()
        let hasVectors = record.map { $0.dimension > 0 } ?? false
        var mode = query.mode
        if mode == .hybrid && !hasVectors { mode = .keyword }
        if mode == .vector && !hasVectors {
            throw KBError(.unsupportedMode,
                "This index has no vectors (it was built with --embedder none, or is empty), so vector search cannot run. Use --mode keyword.")
        }
        var depth = max(query.candidates, query.limit)
        if query.groupBySource || query.diversity != nil { depth = max(depth, query.limit * 5) }
        let allowed = try store.filteredSnippetIDs(query)
        // Without filters, memories are still left out: scan deeper by their number and drop them.
        let excluded = allowed == nil && query.kinds.isEmpty ? try store.memorySnippetIDs() : []

        var keywordRanking: [(id: Int64, score: Double)] = []
        if mode != .vector {
            do {
                keywordRanking = try store.keywordRanking(query, limit: depth)
            } catch let error as KBError where error.code == .invalidArgument && mode == .hybrid {
                keywordRanking = []   // no words to match; the vector ranking still runs
            }
        }
        var vectorEntries: [TopK.Entry] = []
        var index: VectorIndex?
        if mode != .keyword, let record {
            var vector: [Float]
            if let given, given.count == record.dimension {
                vector = given
            } else {
                let embedder = try queryEmbedder(record)
                let vectors = try await embedder.embed([query.text], role: .query)
                guard let first = vectors.first, first.count == record.dimension else {
                    throw KBError(.embedding, "\(embedder.id) returned no usable query vector.")
                }
                vector = first
            }
            index = try vectorIndex(record)
            if query.quantized { index!.enableQuantization() }
            vectorEntries = index!.search(vector, k: depth + excluded.count, allowed: allowed, quantized: query.quantized)
            if !excluded.isEmpty { vectorEntries = Array(vectorEntries.filter { !excluded.contains($0.id) }.prefix(depth)) }
        }

        // One ordering with scores.
        var ordered: [(id: Int64, score: Double)]
        switch mode {
        case .keyword: ordered = keywordRanking
        case .vector: ordered = vectorEntries.map { ($0.id, Double($0.score)) }
        case .hybrid:
            ordered = RankFusion.reciprocalRank(
                [keywordRanking.map(\.id), vectorEntries.map(\.id)],
                weights: [query.keywordWeight, query.vectorWeight]).map { ($0.id, $0.score) }
        }
        let summaries = try store.snippetSummaries(ordered.map(\.id))
        ordered = ordered.filter { summaries[$0.id] != nil }
        if query.groupBySource {
            var seen = Set<String>()
            ordered = ordered.filter { seen.insert(summaries[$0.id]!.sourcePath).inserted }
        }

        // Keyword mode compares texts only; the vector modes also compare vectors. (A mode's results
        // must not depend on whether an earlier search happened to load the vectors.)
        var vectors: [Int64: [Float]] = [:]
        if let index { for (id, _) in ordered { vectors[id] = index.vector(for: id) } }

        // Near-duplicates go (keeping enough candidates for diversity to choose from).
        let wanted = query.diversity == nil ? query.limit : max(query.limit, query.candidates)
        let kept = Set(RankFusion.collapseNearDuplicates(ordered.map { ($0.id, summaries[$0.id]!.text) }, vectors: vectors, limit: wanted))
        ordered = ordered.filter { kept.contains($0.id) }
        if let lambda = query.diversity {
            let scores = Dictionary(uniqueKeysWithValues: ordered.map { ($0.id, $0.score) })
            let picked = RankFusion.maximalMarginalRelevance(ordered.map { ($0.id, $0.score) }, vectors: vectors, lambda: lambda, k: query.limit)
            ordered = picked.map { ($0, scores[$0]!) }
        }
        let final = Array(ordered.prefix(query.limit))
        let hitsByID = try store.hits(for: final.map(\.id), highlighting: mode == .vector || !query.excerpts ? nil : query.text)
        let hits = final.enumerated().compactMap { i, entry -> SearchHit? in
            guard var hit = hitsByID[entry.id] else { return nil }
            hit.rank = i + 1
            hit.score = entry.score
            return hit
        }
        return SearchResults(query: query.text, mode: mode, embedder: mode == .keyword ? nil : record?.name, hits: hits)
    }

    /// The embedder for queries: the one the index records. Loaded once per knowledge base.
    func queryEmbedder(_ record: EmbedderRecord) throws -> any Embedder {
        if let cached = searchState.lock.withLock({ searchState.embedderName == record.name ? searchState.embedder : nil }) {
            return cached
        }
        guard let embedder = try EmbedderChoice(record.spec).make(dimension: record.dimension > 0 ? record.dimension : nil) else {
            throw KBError(.unsupportedMode, "This index has no vectors; use --mode keyword.")
        }
        guard embedder.id == record.name, embedder.dimension == record.dimension else {
            throw KBError(.embedderMismatch,
                "The index holds \(record.dimension)-dim vectors from '\(record.name)', but '\(embedder.id)' returns \(embedder.dimension). "
              + "Install the model the index was built with (or point KB_MODEL_DIR at it), or rebuild the index with --db.")
        }
        searchState.lock.withLock {
            searchState.embedder = embedder
            searchState.embedderName = record.name
        }
        return embedder
    }

    /// The vectors in memory, loaded on first use and reloaded when another process changed the index.
    func vectorIndex(_ record: EmbedderRecord) throws -> VectorIndex {
        let generation = try store.generation()
        if let current = searchState.lock.withLock({
            searchState.record == record && searchState.generation == generation ? searchState.index : nil
        }) {
            return current
        }
        let loaded = try store.loadVectors(embedder: record)
        let index = VectorIndex(dimension: record.dimension)
        index.reset(ids: loaded.ids, matrix: loaded.matrix)
        searchState.lock.withLock {
            searchState.index = index
            searchState.record = record
            searchState.generation = loaded.generation
        }
        return index
    }

    /// Applies this process's own write to the vectors in memory, without reloading. A write
    /// that does not directly follow the loaded generation (another process wrote in between)
    /// marks them stale instead.
    func followWrite(_ effect: WriteEffect, vectors: [[Float]]?, record: EmbedderRecord?) {
        guard effect.generation != 0 else { return }
        searchState.lock.withLock {
            guard let index = searchState.index else { return }
            guard effect.generation == searchState.generation + 1,
                  record == nil || record == searchState.record || vectors == nil else {
                searchState.generation = -1
                return
            }
            index.remove(effect.removedSnippets)
            if let vectors, record == searchState.record {
                index.upsert(zip(effect.insertedSnippets, vectors).map { ($0, $1) })
            }
            searchState.generation = effect.generation
        }
    }
}

import Foundation
public import KBCore
import KBContext
import KBEmbed
import KBStore

extension KnowledgeBase {
    /// Ranked snippets for a query built in code (checked here; requests are checked where they
    /// are decoded, `SearchRequest.validated`).
    ///
    /// Keyword mode ranks with bm25; vector mode embeds the query and ranks the vectors;
    /// hybrid runs both to `query.candidates` and fuses the ranks (RRF, k = 60). Filters select
    /// snippets before ranking. Near-duplicate snippets are collapsed (the best-ranked stays);
    /// then `groupBySource` and `diversity` apply, and the first `limit` hits are returned.
    /// The index is read in one snapshot, off the caller's thread.
    public func search(_ query: SearchQuery) async throws -> SearchResults {
        try Self.check(query)
        return try await searches([query]) { _, _ in }.searches[0]
    }

    /// The embedder record, from memory when one was read before (the snapshot that ranks
    /// confirms it).
    func assumedRecord() async throws -> EmbedderRecord? {
        if let known = searchState.lock.withLock({ searchState.knownRecord }) { return known }
        let record = try await store.snapshot { try $0.embedderRecord() }
        searchState.lock.withLock { searchState.knownRecord = .some(record) }
        return record
    }

    /// The queries' embeddings for an index with `record` (nil when the index has no vectors),
    /// in one call to the embedder.
    func queryVectors(_ texts: [String], record: EmbedderRecord?) async throws -> [[Float]]? {
        guard let record, record.hasVectors else { return nil }
        let embedder = try await queryEmbedder(record)
        let vectors = try await embedder.embed(texts, role: .query)
        guard vectors.count == texts.count, vectors.allSatisfy({ $0.count == record.dimension }) else {
            throw KBError(.embedding, "\(embedder.id) returned no usable query vector.")
        }
        return vectors
    }

    /// Runs several checked searches that share one query text and history (so one set of
    /// embeddings) in one snapshot, and `more` in the same snapshot. When the index's embedder
    /// changed since it was last read, embeds again and reruns.
    func searches<Extra: Sendable>(
        _ queries: [SearchQuery], collapsing: Bool = true, more: @escaping @Sendable (any IndexSnapshot, [SearchResults]) throws -> Extra
    ) async throws -> (searches: [SearchResults], extra: Extra) {
        guard let first = queries.first else { return ([], try await store.snapshot { try more($0, []) }) }
        let plan = ConversationPlan.queries(turn: first.text, history: first.history, use: first.historyUse)
        let needsVector = queries.contains { $0.mode != .keyword }
        let mayDegrade = !queries.contains { $0.mode == .vector }
        return try await withQueryVectors(plan.map(\.text), needed: needsVector, mayDegrade: mayDegrade) { snapshot, vectors, record, degraded in
            let results = try queries.map {
                try self.rank($0, plan: plan, vectors: vectors, record: record, degraded: degraded, collapsing: collapsing, in: snapshot)
            }
            return (results, try more(snapshot, results))
        }
    }

    /// A search for a turn of a conversation: each planned query ranked as `query` says, the
    /// rankings fused by reciprocal rank with the plan's weights. The turn alone is a plain
    /// `rank`. `vectors` holds one per planned query (or none).
    func rank(_ query: SearchQuery, plan: [PlannedQuery], vectors: [[Float]]?, record: EmbedderRecord?, degraded: Degraded?,
              collapsing: Bool, approximatingLargeScans: Bool = false, in snapshot: any IndexSnapshot) throws -> SearchResults {
        if plan.count == 1, plan[0].text == query.text {
            return try rank(query, vector: vectors?.first, record: record, degraded: degraded, collapsing: collapsing,
                            approximatingLargeScans: approximatingLargeScans, in: snapshot)
        }
        let lists = try plan.indices.map { index -> SearchResults in
            var part = query
            part.text = plan[index].text
            part.limit = max(query.limit, query.candidates)
            return try rank(part, vector: vectors?[index], record: record, degraded: degraded, collapsing: collapsing,
                            approximatingLargeScans: approximatingLargeScans, in: snapshot)
        }
        var byID: [Int64: SearchHit] = [:]
        for hit in lists.flatMap(\.hits) where byID[hit.snippetID] == nil { byID[hit.snippetID] = hit }
        var hits: [SearchHit] = []
        var sources = Set<String>()
        for entry in RankFusion.reciprocalRank(lists.map { $0.hits.map(\.snippetID) }, weights: plan.map(\.weight), k: ConversationPlan.fusionK) {
            guard hits.count < query.limit, var hit = byID[entry.id] else { break }
            if query.groupBySource, !sources.insert(hit.sourcePath).inserted { continue }
            hit.rank = hits.count + 1
            hit.score = entry.score
            hits.append(hit)
        }
        var results = SearchResults(query: query.text, mode: lists[0].mode, embedder: lists[0].embedder, hits: hits, degraded: lists[0].degraded)
        results.queries = plan
        return results
    }

    /// Embeds `text` (when `needed` and the index has vectors) with the embedder the index was
    /// last known to use, then runs `body` in one snapshot with the vector and the index's actual
    /// embedder record. Should the record have changed meanwhile (a reindex, a first ingest), it
    /// embeds again and reruns, once. When the query cannot be embedded and `mayDegrade`, `body`
    /// gets no vector and the reason instead (searches then rank by keywords alone).
    func withQueryVector<T: Sendable>(
        _ text: String, needed: Bool, mayDegrade: Bool,
        _ body: @escaping @Sendable (any IndexSnapshot, [Float]?, EmbedderRecord?, Degraded?) throws -> T
    ) async throws -> T {
        try await withQueryVectors([text], needed: needed, mayDegrade: mayDegrade) { snapshot, vectors, record, degraded in
            try body(snapshot, vectors?.first, record, degraded)
        }
    }

    /// `withQueryVector` for several texts, embedded together: `body` gets one vector per text
    /// (or none at all).
    func withQueryVectors<T: Sendable>(
        _ texts: [String], needed: Bool, mayDegrade: Bool,
        _ body: @escaping @Sendable (any IndexSnapshot, [[Float]]?, EmbedderRecord?, Degraded?) throws -> T
    ) async throws -> T {
        var record = try await assumedRecord()
        for _ in 0..<2 {
            let (vectors, degraded) = needed ? try await queryVectorsOrDegraded(texts, record: record, mayDegrade: mayDegrade) : (nil, nil)
            let assumed = record
            let (actual, outcome) = try await store.snapshot { snapshot -> (EmbedderRecord?, T?) in
                let actual = try snapshot.embedderRecord()
                guard actual == assumed else { return (actual, nil) }
                return (actual, try body(snapshot, vectors, actual, degraded))
            }
            searchState.lock.withLock { searchState.knownRecord = .some(actual) }
            if let outcome {
                if degraded != nil { health.countDegradedAnswer() }
                return outcome
            }
            record = actual
        }
        throw KBError(.database, "The index's embedder kept changing during the search; try again.")
    }

    /// Loads what searches keep in memory (the vectors and, for a large index, their int8 copy;
    /// the keyword postings) now, so that the first request does not wait for it: `kb serve`
    /// calls it as it starts. Searches that come meanwhile wait for the same load.
    public func prepareSearches() async throws {
        try await store.snapshot { snapshot in
            try snapshot.prepareSearches(embedder: try snapshot.embedderRecord(), quantizingFrom: Self.approximateScanFrom)
        }
    }

    /// Allowed snippets from which a context search scans the int8 copy of the vectors.
    static let approximateScanFrom = 20_000

    /// Sanity checks of a query built in code (requests are validated where they are decoded).
    static func check(_ query: SearchQuery) throws {
        guard query.limit >= 1 else { throw KBError(.invalidArgument, "The number of hits must be at least 1.") }
        guard query.candidates >= 1 else { throw KBError(.invalidArgument, "The candidate depth must be at least 1.") }
        if let lambda = query.diversity, !(0...1).contains(lambda) {
            throw KBError(.invalidArgument, "Diversity λ must be between 0 and 1 (1 = relevance only); got \(lambda).")
        }
        guard query.keywordWeight >= 0, query.vectorWeight >= 0, query.keywordWeight + query.vectorWeight > 0 else {
            throw KBError(.invalidArgument, "Fusion weights must be zero or more, and not both zero.")
        }
    }

    /// One search inside a snapshot: filters, both rankings, fusion, near-duplicates, diversity,
    /// hits. A hybrid search whose query could not be embedded (`degraded`) ranks by keywords.
    /// Without `collapsing`, near-duplicates stay for the caller to choose among (context
    /// assembly deduplicates its candidates itself).
    ///
    /// With `approximatingLargeScans` (a bot's knowledge for its context), a vector ranking over
    /// at least `approximateScanFrom` allowed snippets scans the int8 copy with exact rescoring.
    func rank(_ query: SearchQuery, vector given: [Float]?, record: EmbedderRecord?, degraded: Degraded? = nil,
              collapsing: Bool = true, approximatingLargeScans: Bool = false, in snapshot: any IndexSnapshot) throws -> SearchResults {
        try searchState.ranking { coreIdle in
            try rank(query, vector: given, record: record, degraded: degraded, collapsing: collapsing,
                     approximatingLargeScans: approximatingLargeScans, besideKeywords: coreIdle, in: snapshot)
        }
    }

    /// `rank`; with `besideKeywords`, a quantized vector ranking of a hybrid search runs on another
    /// thread while this one ranks keywords — worth it only while searches leave cores idle
    /// (otherwise the handing over costs more than it saves).
    private func rank(_ query: SearchQuery, vector given: [Float]?, record: EmbedderRecord?, degraded: Degraded?,
                      collapsing: Bool, approximatingLargeScans: Bool, besideKeywords: Bool, in snapshot: any IndexSnapshot) throws -> SearchResults {
        let mode = try query.mode.effective(indexHasVectors: record.hasVectors, queryEmbedded: given != nil)
        var depth = max(query.candidates, query.limit)
        if query.groupBySource || query.diversity != nil { depth = max(depth, query.limit * 5) }
        let generation = try snapshot.generation()
        let allowed = try allowedSnippets(query, generation: generation, in: snapshot)
        // Without filters, memories and other users' private sources are still left out.
        let excluded = allowed == nil ? try hiddenSnippets(user: query.user, generation: generation, in: snapshot) : []

        var vectorWork: (@Sendable () throws -> [(id: Int64, score: Float)])?
        var quantized = false
        if mode != .keyword, let record {
            guard let vector = given, vector.count == record.dimension else {
                throw KBError(.embedding, "No query vector of \(record.dimension) dimensions for \(record.name).")
            }
            // The int8 copy is a quarter of a float scan's memory traffic, which at 100,000 snippets
            // is most of a context request; exact rescoring of the best candidates gave the same
            // context for all 40 queries checked on the shelf benchmark.
            quantized = query.quantized || (approximatingLargeScans && (allowed?.count ?? 0) >= Self.approximateScanFrom)
            vectorWork = try snapshot.vectorRankingWork(vector, embedder: record, k: depth, allowed: allowed, excluded: excluded,
                                                        quantized: quantized, rows: VectorRows(kinds: query.kinds))
        }
        // A large scan runs on another thread while this one (the snapshot's) ranks keywords, when
        // a core is idle for it.
        let background = quantized && mode == .hybrid && besideKeywords ? vectorWork.map(BackgroundWork.init) : nil
        defer { background?.finish() }
        var keywordRanking: [(id: Int64, score: Double)] = []
        if mode != .vector {
            do {
                keywordRanking = try snapshot.keywordRanking(query, limit: depth, allowed: allowed)
            } catch let error as KBError where error.code == .unprocessable && mode == .hybrid {
                keywordRanking = []   // no words to match; the vector ranking still runs
            }
        }
        let vectorRanking = try background?.result() ?? vectorWork?() ?? []

        // One ordering with scores.
        var ordered: [(id: Int64, score: Double)]
        switch mode {
        case .keyword: ordered = keywordRanking
        case .vector: ordered = vectorRanking.map { ($0.id, Double($0.score)) }
        case .hybrid:
            ordered = RankFusion.reciprocalRank(
                [keywordRanking.map(\.id), vectorRanking.map(\.id)],
                weights: [query.keywordWeight, query.vectorWeight]).map { ($0.id, $0.score) }
        }
        // Texts only where near-duplicates are compared by them.
        let summaries = try snapshot.snippetSummaries(ordered.map(\.id), texts: collapsing)
        ordered = ordered.filter { summaries[$0.id] != nil }
        // Records' weights reorder the candidates (a stable sort: equal scores keep their order).
        if ordered.contains(where: { summaries[$0.id]?.weight != nil }) {
            let weighted: [(id: Int64, score: Double)] = ordered.map { entry in
                (entry.id, SearchHit.weighted(entry.score, by: summaries[entry.id]?.weight))
            }
            let order = weighted.indices.sorted { a, b in
                weighted[a].score != weighted[b].score ? weighted[a].score > weighted[b].score : a < b
            }
            ordered = order.map { weighted[$0] }
        }
        if query.groupBySource {
            var seen = Set<String>()
            ordered = ordered.filter { summaries[$0.id].map { seen.insert($0.sourcePath).inserted } ?? false }
        }

        // Keyword mode compares texts only; the vector modes also compare vectors (the store's
        // own, whether or not it keeps them in memory, so a mode's results never depend on it).
        let vectors = mode != .keyword && (collapsing || query.diversity != nil)
            ? try record.map { try snapshot.vectors(of: ordered.map(\.id), embedder: $0) } ?? [:] : [:]

        // Near-duplicates go (keeping enough candidates for diversity to choose from).
        if collapsing {
            let wanted = query.diversity == nil ? query.limit : max(query.limit, query.candidates)
            let kept = Set(RankFusion.collapseNearDuplicates(ordered.map { ($0.id, summaries[$0.id]?.text ?? "") }, vectors: vectors, limit: wanted))
            ordered = ordered.filter { kept.contains($0.id) }
        }
        if let lambda = query.diversity {
            let picked = RankFusion.maximalMarginalRelevance(ordered.map { ($0.id, $0.score) }, vectors: vectors, lambda: lambda, k: query.limit)
            let scores = Dictionary(ordered.map { ($0.id, $0.score) }, uniquingKeysWith: { first, _ in first })
            ordered = picked.map { ($0, scores[$0] ?? 0) }
        }
        let final = Array(ordered.prefix(query.limit))
        let hitsByID = try snapshot.hits(for: final.map(\.id), highlighting: mode == .vector || !query.excerpts ? nil : query.text)
        let hits = final.enumerated().compactMap { i, entry -> SearchHit? in
            guard var hit = hitsByID[entry.id] else { return nil }
            hit.rank = i + 1
            hit.score = entry.score
            return hit
        }
        return SearchResults(query: query.text, mode: mode, embedder: mode == .keyword ? nil : record?.name, hits: hits,
                             degraded: mode == .keyword && query.mode == .hybrid ? degraded : nil)
    }

    /// The snippets a query's filters let through (nil: all), kept per index generation.
    func allowedSnippets(_ query: SearchQuery, generation: Int64, in snapshot: any IndexSnapshot) throws -> Set<Int64>? {
        guard query.hasFilters else { return nil }
        var query = query
        if let user = query.user, !query.everyUser, !(try owns(user, generation: generation, in: snapshot)) { query.user = nil }
        return try searchState.cached(\.filters, FilterKey(query), generation: generation) { try snapshot.filteredSnippetIDs(query) ?? [] }
    }

    /// Whether `user` owns a private source (else their filters are everyone's).
    func owns(_ user: String, generation: Int64, in snapshot: any IndexSnapshot) throws -> Bool {
        try searchState.ownsSources(user, generation: generation) { try snapshot.sourceOwners() }
    }

    /// The snippets a search without filters leaves out (memories, other users' private
    /// sources), kept per index generation and user.
    func hiddenSnippets(user: String?, generation: Int64, in snapshot: any IndexSnapshot) throws -> Set<Int64> {
        let user = try user.flatMap { try owns($0, generation: generation, in: snapshot) ? $0 : nil }
        return try searchState.cached(\.hidden, user ?? "", generation: generation) { try snapshot.hiddenSnippetIDs(user: user) }
    }

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

    /// The embedder for queries: the one the index records. Loaded once per knowledge base.
    func queryEmbedder(_ record: EmbedderRecord) async throws -> any Embedder {
        if let cached = searchState.lock.withLock({ searchState.embedderName == record.name ? searchState.embedder : nil }) {
            return cached
        }
        guard let embedder = try await recordedChoice(record).make(environment: environment, dimension: record.hasVectors ? record.dimension : nil,
                                                                   forQueries: true) else {
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
}

import Foundation
public import KBCore
public import KBStore

/// Retrieval as a pipeline of named stages, the one every search, recall, bot context, report
/// section and evaluation runs:
///
/// ```
/// plan ─► embed ─► candidates (keyword, vector; inside one store snapshot) ─► fuse ─► turns
///      ─► weight ─► collapse / group ─► diversify ─► [asynchronous stage] ─► hydrate
/// ```
///
/// - **plan**: the turn, and with a history the pairings `ConversationPlan` makes of it;
/// - **embed**: every planned query in one call to the query embedder (`QueryEncoding`), before
///   the snapshot — keywords alone, marked `degraded`, when the embedder is down and the search
///   may fall back;
/// - **candidates**: in one snapshot, each list's filters, keyword and vector rankings;
/// - **fuse**: adaptive fusion of the rankings (or reciprocal rank), then reciprocal rank fusion
///   of the planned queries' lists;
/// - **turns**: turns of conversations lifted by the turns around them;
/// - **weight**: records' weights reorder the candidates;
/// - **collapse / group**: near-duplicates go, or one hit per source stays;
/// - **diversify**: maximal marginal relevance, when asked;
/// - **asynchronous stage**: a `RetrievalStage` (a re-ranker) on each list after the snapshot
///   closed — none by default;
/// - **hydrate**: the hits' snippets, sources and excerpts (in the ranking's own snapshot when no
///   stage runs, else in a second one).
///
/// Every depth and limit comes from one `RetrievalProfile`.
///
/// ```swift
/// let retriever = Retriever(store: store, encoding: embeddings)
/// let results = try await retriever.search(SearchQuery("saturn return"))
/// ```
public final class Retriever: Sendable {
    let store: any IndexStore
    /// Every depth and limit the stages use.
    public let profile: RetrievalProfile
    let encoding: any QueryEncoding
    let state = SearchState()
    private let installedStage: LockedValue<any RetrievalStage>
    private let installedRewriter = LockedValue<(any QueryRewriter)?>(nil)

    public init(store: any IndexStore, profile: RetrievalProfile = .standard, encoding: any QueryEncoding,
                stage: any RetrievalStage = PassThroughStage()) {
        self.store = store
        self.profile = profile
        self.encoding = encoding
        installedStage = LockedValue(stage)
    }

    /// The asynchronous stage every retrieval runs (`PassThroughStage` unless another was set).
    public var stage: any RetrievalStage { installedStage.withLock { $0 } }

    /// Runs `stage` in every retrieval from now on.
    public func use(_ stage: any RetrievalStage) { installedStage.withLock { $0 = stage } }

    /// The rewriter conversational retrievals ask, if any.
    public var rewriter: (any QueryRewriter)? { installedRewriter.withLock { $0 } }

    /// Asks `rewriter` (nil: none) about every turn that comes with a history, from now on.
    public func use(rewriter: (any QueryRewriter)?) { installedRewriter.withLock { $0 = rewriter } }

    /// One ranked list a retrieval makes: its search, and how its ranking ends.
    public struct Arm: Sendable {
        public var query: SearchQuery
        /// Collapse near-duplicates (a search's answer); without, they stay for context assembly
        /// to choose among. The default is true.
        public var collapsing = true
        /// A vector ranking over at least `RetrievalProfile.approximateScanFrom` allowed snippets
        /// scans the int8 copy of the vectors and rescores the best exactly (a bot's knowledge).
        /// The default is false.
        public var approximatingLargeScans = false
        /// Whether the candidates carry their fusion signals (for a second stage that reads them).
        var carriesSignals = false

        public init(_ query: SearchQuery, collapsing: Bool = true, approximatingLargeScans: Bool = false) {
            self.query = query
            self.collapsing = collapsing
            self.approximatingLargeScans = approximatingLargeScans
        }
    }

    /// Ranked snippets for a checked query (see `check`): one arm, collapsing near-duplicates.
    public func search(_ query: SearchQuery) async throws -> SearchResults {
        try await search(query) { _, _ in () }.results
    }

    /// One arm's search, and `extra` read with its hits (in the same snapshot).
    public func search<Extra: Sendable>(
        _ query: SearchQuery, collapsing: Bool = true, extra: @escaping @Sendable (any IndexSnapshot, SearchResults) throws -> Extra
    ) async throws -> (results: SearchResults, extra: Extra) {
        let found = try await retrieve(query.text, history: query.history, use: query.historyUse,
                                       needsVectors: query.mode != .keyword, mayDegrade: query.mode != .vector,
                                       arms: { _ in ((), [Arm(query, collapsing: collapsing)]) },
                                       extra: { snapshot, _, results in try extra(snapshot, results[0]) })
        return (found.results[0], found.extra)
    }

    /// One retrieval: the planned queries are embedded, then one snapshot makes the arms (from
    /// what it holds: a bot and its sources, say) and ranks each, the asynchronous stage reorders
    /// each list, and the hits are read with `extra` (the memories behind recalled snippets, say).
    ///
    /// - Parameters:
    ///   - text: the turn or query every arm searches (a report section adds its own words).
    ///   - needsVectors: whether any arm ranks by vectors.
    ///   - mayDegrade: whether the arms may answer from keywords alone when the query cannot be
    ///     embedded (no arm is vector-only).
    public func retrieve<Made: Sendable, Extra: Sendable>(
        _ text: String, history: [ConversationTurn] = [], use: HistoryUse = .fused, needsVectors: Bool, mayDegrade: Bool,
        arms: @escaping @Sendable (any IndexSnapshot) throws -> (made: Made, arms: [Arm]),
        extra: @escaping @Sendable (any IndexSnapshot, Made, [SearchResults]) throws -> Extra
    ) async throws -> (made: Made, results: [SearchResults], extra: Extra) {
        var plan = planQueries(text, history: history, use: use)
        var rewriting: Degraded?
        if use == .fused, !history.isEmpty, let rewriter {
            do {
                plan = QueryRewrites.plan(plan, adding: try await rewriter.rewrite(text, history: history))
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                rewriting = Degraded(reason: "The query rewriter \(rewriter.name) failed (\(error)); the turn was searched without rewriting.")
            }
        }
        let finalPlan = plan, rewritingProblem = rewriting
        let stage = self.stage
        let outcome = try await withQueryVectors(finalPlan.map(\.text), needed: needsVectors, mayDegrade: mayDegrade) {
            snapshot, vectors, record, degraded -> Outcome<Made, Extra> in
            let (made, arms) = try arms(snapshot)
            // The arms the second stage sees: all that ask for it, when there is one.
            let staging = arms.map { !stage.isPassThrough && $0.query.secondStage }
            let ranked = try zip(arms, staging).map { arm, staged in
                let cut = staged ? max(arm.query.limit, stage.candidateDepth ?? self.profile.stageCandidates) : arm.query.limit
                var arm = arm
                arm.carriesSignals = staged
                var list = try self.rank(arm, plan: finalPlan, vectors: vectors, record: record, degraded: degraded, cut: cut, in: snapshot)
                if list.degraded == nil { list.degraded = rewritingProblem }
                return list
            }
            if staging.contains(true) {
                return .staged(made, try zip(ranked, staging).map { list, staged in (list, staged ? try self.candidates(list, in: snapshot).1 : nil) })
            }
            let results = try ranked.map { try self.hydrate($0, in: snapshot) }
            return .done(made, results, try extra(snapshot, made, results))
        }
        switch outcome {
        case .done(let made, let results, let extraValue):
            return (made, results, extraValue)
        case .staged(let made, let lists):
            var staged: [Ranked] = []
            for (ranked, candidates) in lists {
                if let candidates { staged.append(await apply(stage, to: ranked, candidates: candidates)) } else { staged.append(ranked) }
            }
            let finished = staged
            let (results, extraValue) = try await store.snapshot { snapshot in
                let results = try finished.map { try self.hydrate($0, in: snapshot) }
                return (results, try extra(snapshot, made, results))
            }
            return (made, results, extraValue)
        }
    }

    /// What the snapshot hands on: the finished answers, or the lists the asynchronous stage is
    /// still to see (with their candidates' texts; nil for a list the stage skips).
    enum Outcome<Made: Sendable, Extra: Sendable>: Sendable {
        case done(Made, [SearchResults], Extra)
        case staged(Made, [(Ranked, [RetrievalCandidate]?)])
    }

    // MARK: - plan

    /// Stage 1: what a turn searches — the turn alone, the turns concatenated, or kb's way (the
    /// turn and its pairings with earlier turns, fused by weight).
    public func planQueries(_ text: String, history: [ConversationTurn], use: HistoryUse) -> [PlannedQuery] {
        ConversationPlan.queries(turn: text, history: history, use: use)
    }

    // MARK: - embed

    /// The embedder record, from memory when one was read before (the snapshot that ranks
    /// confirms it).
    public func assumedRecord() async throws -> EmbedderRecord? {
        if let known = state.lock.withLock({ state.knownRecord }) { return known }
        let record = try await store.snapshot { try $0.embedderRecord() }
        state.lock.withLock { state.knownRecord = .some(record) }
        return record
    }

    /// Forgets the embedder record read last (after a reindex changed it).
    public func forgetEmbedderRecord() { state.lock.withLock { state.knownRecord = nil } }

    /// Stage 2, then `body` in one snapshot: embeds `texts` (when `needed` and the index has
    /// vectors) with the embedder the index was last known to use, then runs `body` with the
    /// vectors and the index's actual embedder record. Should the record have changed meanwhile
    /// (a reindex, a first ingest), it embeds again and reruns, once. When the queries cannot be
    /// embedded and `mayDegrade`, `body` gets no vectors and the reason instead.
    public func withQueryVectors<T: Sendable>(
        _ texts: [String], needed: Bool, mayDegrade: Bool,
        _ body: @escaping @Sendable (any IndexSnapshot, [[Float]]?, EmbedderRecord?, Degraded?) throws -> T
    ) async throws -> T {
        var record = try await assumedRecord()
        for _ in 0..<2 {
            let (vectors, degraded) = needed && (record?.hasVectors ?? false)
                ? try await encoding.vectors(texts, record: record, mayDegrade: mayDegrade) : (nil, nil)
            let assumed = record
            let (actual, outcome) = try await store.snapshot { snapshot -> (EmbedderRecord?, T?) in
                let actual = try snapshot.embedderRecord()
                guard actual == assumed else { return (actual, nil) }
                return (actual, try body(snapshot, vectors, actual, degraded))
            }
            state.lock.withLock { state.knownRecord = .some(actual) }
            if let outcome {
                if degraded != nil { encoding.countDegradedAnswer() }
                return outcome
            }
            record = actual
        }
        throw KBError(.database, "The index's embedder kept changing during the search; try again.")
    }

    // MARK: - after the snapshot

    /// The asynchronous stage on one list: its new order and scores, at most the arm's limit.
    /// Candidates it invents are ignored; when it fails, the list keeps its order and says why.
    func apply(_ stage: any RetrievalStage, to ranked: Ranked, candidates: [RetrievalCandidate]) async -> Ranked {
        var ranked = ranked
        do {
            let reordered = try await stage.apply(candidates, query: ranked.query)
            let known = Dictionary(ranked.entries.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            var seen = Set<Int64>()
            ranked.entries = reordered.compactMap { candidate -> Ranked.Entry? in
                guard var entry = known[candidate.snippetID], seen.insert(candidate.snippetID).inserted else { return nil }
                entry.score = candidate.score
                return entry
            }
            ranked.secondStage = stage.name
        } catch {
            ranked.degraded = ranked.degraded
                ?? Degraded(reason: "The retrieval stage \(stage.name) failed (\(error)); the answer keeps the ranking before it.")
        }
        ranked.entries = Array(ranked.entries.prefix(ranked.limit))
        return ranked
    }

    /// The loads searches keep in memory (vectors, their int8 copy for a large index, keyword
    /// postings), now rather than at the first search.
    @discardableResult
    public func prepareSearches() async throws -> [String] {
        let from = profile.approximateScanFrom
        return try await store.snapshot { snapshot in
            try snapshot.prepareSearches(embedder: try snapshot.embedderRecord(), quantizingFrom: from)
        }
    }

    /// Saves the loads of `prepareSearches` beside the index (see `IndexSnapshot.saveSearches`).
    public func saveSearches() async throws -> [String] {
        try await store.snapshot { try $0.saveSearches() }
    }

    /// Sanity checks of a query built in code (requests are validated where they are decoded).
    public static func check(_ query: SearchQuery) throws {
        guard query.limit >= 1 else { throw KBError(.invalidArgument, "The number of hits must be at least 1.") }
        guard query.candidates >= 1 else { throw KBError(.invalidArgument, "The candidate depth must be at least 1.") }
        if let lambda = query.diversity, !SearchQuery.diversityRange.contains(lambda) {
            throw KBError(.invalidArgument, "Diversity λ must be between \(SearchQuery.diversityRange.lowerBound) and \(SearchQuery.diversityRange.upperBound) (1 = relevance only); got \(lambda).")
        }
        guard query.keywordWeight >= 0, query.vectorWeight >= 0, query.keywordWeight + query.vectorWeight > 0 else {
            throw KBError(.invalidArgument, "Fusion weights must be zero or more, and not both zero.")
        }
    }
}

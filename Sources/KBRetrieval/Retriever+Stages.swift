import Foundation
import KBCore
import KBStore

/// One list as the stages hand it on: snippet ids with scores (best first) and where each comes
/// from, the arm's limit, and how the ranking was made.
struct Ranked: Sendable {
    struct Entry: Sendable {
        var id: Int64
        var score: Double
        var sourcePath: String
        /// The words an excerpt of this hit marks (the planned query that found it), if excerpts are made.
        var highlight: String?
        /// Why it is there, when the search explains.
        var explanation: HitExplanation? = nil
        /// What each ranking said of it (hybrid search, adaptive fusion).
        var signals: FusionSignals? = nil
    }
    var entries: [Entry]
    /// The query the list answers (the stage is told it).
    var query: String
    /// Hits the answer keeps.
    var limit: Int
    var mode: SearchMode
    var embedder: String?
    var degraded: Degraded?
    /// The planned queries fused, when there was more than the turn.
    var plan: [PlannedQuery]? = nil
    /// The second stage that reordered the list, when one did.
    var secondStage: String? = nil
}

// The stages inside the snapshot: candidates, fuse, weight, collapse / group, diversify; and hydrate.
extension Retriever {
    /// One arm over the plan. The turn alone is one ranking; with a history each planned query
    /// is ranked as the arm says and the lists are fused by reciprocal rank with the plan's
    /// weights (`ConversationPlan.fusionK`), one hit per source when the arm groups. `cut` is how
    /// many entries the list keeps (the arm's limit, or deeper for the asynchronous stage).
    func rank(_ arm: Arm, plan: [PlannedQuery], vectors: [[Float]]?, record: EmbedderRecord?, degraded: Degraded?,
              cut: Int, in snapshot: any IndexSnapshot) throws -> Ranked {
        let query = arm.query
        if plan.count == 1, plan[0].text == query.text {
            return try rank(arm, vector: vectors?.first, record: record, degraded: degraded, cut: cut, in: snapshot)
        }
        let lists = try plan.indices.map { index -> Ranked in
            var part = arm
            part.query.text = plan[index].text
            part.query.limit = max(query.limit, query.candidates)
            return try rank(part, vector: vectors?[index], record: record, degraded: degraded, cut: max(part.query.limit, cut), in: snapshot)
        }
        var byID: [Int64: Ranked.Entry] = [:]
        for (index, list) in lists.enumerated() {
            for var entry in list.entries where byID[entry.id] == nil {
                entry.explanation?.query = plan[index].text   // the planned query that found it first
                entry.signals = nil   // one planned query's rankings no longer explain the fused list
                byID[entry.id] = entry
            }
        }
        var entries: [Ranked.Entry] = []
        var sources = Set<String>()
        for fused in Ranking.reciprocalRank(lists.map { $0.entries.map(\.id) }, weights: plan.map(\.weight), k: ConversationPlan.fusionK) {
            guard entries.count < cut, var entry = byID[fused.id] else { break }
            if query.groupBySource, !sources.insert(entry.sourcePath).inserted { continue }
            entry.score = fused.score
            entries.append(entry)
        }
        return Ranked(entries: entries, query: query.text, limit: query.limit, mode: lists[0].mode, embedder: lists[0].embedder,
                      degraded: lists[0].degraded, plan: plan)
    }

    /// One planned query: filters, both rankings, fusion, weights, near-duplicates or one hit per
    /// source, diversity; the first `cut` entries. A hybrid search whose query could not be
    /// embedded (`degraded`) ranks by keywords.
    func rank(_ arm: Arm, vector: [Float]?, record: EmbedderRecord?, degraded: Degraded?, cut: Int, in snapshot: any IndexSnapshot) throws -> Ranked {
        try state.ranking { coreIdle in
            try rank(arm, vector: vector, record: record, degraded: degraded, cut: cut, besideKeywords: coreIdle, in: snapshot)
        }
    }

    /// `rank`; with `besideKeywords`, a quantized vector ranking of a hybrid search runs on another
    /// thread while this one ranks keywords — worth it only while searches leave cores idle
    /// (otherwise the handing over costs more than it saves).
    private func rank(_ arm: Arm, vector given: [Float]?, record: EmbedderRecord?, degraded: Degraded?, cut limit: Int,
                      besideKeywords: Bool, in snapshot: any IndexSnapshot) throws -> Ranked {
        let query = arm.query
        let mode = try query.mode.effective(indexHasVectors: record.hasVectors, queryEmbedded: given != nil)
        // Candidates: each ranking's depth, the filters, both rankings.
        var depth = max(query.candidates, limit)
        if query.groupBySource || query.diversity != nil { depth = max(depth, limit * profile.widening) }
        let (keywordRanking, vectorRanking) = try readable(
            try candidates(query, mode: mode, vector: given, record: record, depth: depth, approximating: arm.approximatingLargeScans,
                           besideKeywords: besideKeywords, in: snapshot),
            mode: mode, query: query, record: record, in: snapshot)
        // The rankings are fused over the query's candidates however deep they were read, so that
        // the first hits do not depend on how many are asked for (`Ranking.adaptiveFusion`).
        let fusing = min(query.candidates, depth)
        // How much of the question a short keyword ranking's first ten hold at best, which adaptive
        // fusion weighs it by.
        let coverage = mode == .hybrid && query.fusion == .adaptive && !vectorRanking.isEmpty && keywordRanking.count < fusing
            ? try snapshot.keywordCoverage(query, of: keywordRanking.prefix(Ranking.coverageDepth).map(\.id)).map(\.share).max() : nil
        let (fused, keywordShare) = fuse(mode: mode, keywords: keywordRanking, vectors: vectorRanking, query: query, depth: fusing,
                                         keywordCoverage: coverage ?? 1)
        // Only a list a second stage will see carries them: no work on searches without one.
        let signals = keywordShare.flatMap { share in arm.carriesSignals ? share : nil }.map {
            Ranking.fusionSignals(keywords: keywordRanking, vectors: vectorRanking.map { ($0.id, Double($0.score)) }, keywordShare: $0, depth: fusing)
        } ?? [:]
        var ordered = try turns(fused, query: query, in: snapshot)
        var explaining = query.explain ? explanations(keywordRanking, vectorRanking, fused: ordered, query: query) : [:]
        if let keywordShare { for id in explaining.keys { explaining[id]?.keywordShare = keywordShare } }
        // Texts only where near-duplicates are compared by them.
        let summaries = try snapshot.snippetSummaries(ordered.map(\.id), texts: arm.collapsing)
        ordered = ordered.filter { summaries[$0.id] != nil }
        ordered = weight(ordered, summaries: summaries)
        if query.groupBySource {
            var seen = Set<String>()
            ordered = ordered.filter { summaries[$0.id].map { seen.insert($0.sourcePath).inserted } ?? false }
        }
        // Keyword mode compares texts only; the vector modes also compare vectors (the store's
        // own, whether or not it keeps them in memory, so a mode's results never depend on it).
        let vectors = mode != .keyword && (arm.collapsing || query.diversity != nil)
            ? try record.map { try snapshot.vectors(of: ordered.map(\.id), embedder: $0) } ?? [:] : [:]
        if arm.collapsing {
            ordered = collapse(ordered, summaries: summaries, vectors: vectors, keeping: query.diversity == nil ? limit : max(limit, query.candidates))
        }
        if let lambda = query.diversity {
            ordered = diversify(ordered, vectors: vectors, lambda: lambda, k: limit)
        }
        let highlight = mode == .vector || !query.excerpts ? nil : query.text
        return Ranked(entries: ordered.prefix(limit).map { entry in
                          var explanation = explaining[entry.id]
                          explanation?.weight = summaries[entry.id]?.weight
                          return Ranked.Entry(id: entry.id, score: entry.score, sourcePath: summaries[entry.id]!.sourcePath, highlight: highlight,
                                              explanation: explanation, signals: signals[entry.id])
                      },
                      query: query.text, limit: query.limit, mode: mode, embedder: mode == .keyword ? nil : record?.name,
                      degraded: mode == .keyword && query.mode == .hybrid ? degraded : nil)
    }

    /// Stage 3, candidates: the filters, then the keyword ranking and the vector ranking to
    /// `depth` (the vector ranking on another thread when a core is idle and it is a large
    /// quantized scan).
    func candidates(_ query: SearchQuery, mode: SearchMode, vector given: [Float]?, record: EmbedderRecord?, depth: Int,
                    approximating: Bool, besideKeywords: Bool, in snapshot: any IndexSnapshot)
        throws -> (keywords: [(id: Int64, score: Double)], vectors: [(id: Int64, score: Float)]) {
        let generation = try snapshot.generation()
        let filters = try appliedFilters(query, generation: generation, in: snapshot)
        let allowed = try allowedSnippets(query, generation: generation, in: snapshot)
        // Without filters, memories and other users' private sources are still left out.
        let hiddenFrom = filters == nil ? try searchingUser(query.user, generation: generation, in: snapshot) : nil
        let excluded = filters == nil ? try hiddenSnippets(user: query.user, generation: generation, in: snapshot) : []

        var vectorWork: (@Sendable () throws -> [(id: Int64, score: Float)])?
        var quantized = false
        if mode != .keyword, let record {
            guard let vector = given, vector.count == record.dimension else {
                throw KBError(.embedding, "No query vector of \(record.dimension) dimensions for \(record.name).")
            }
            // The int8 copy is a quarter of a float scan's memory traffic, which at 100,000 snippets
            // is most of a context request; exact rescoring of the best candidates gave the same
            // context for all 40 queries checked on the shelf benchmark.
            quantized = query.quantized || (approximating && (allowed?.count ?? 0) >= profile.approximateScanFrom)
            let candidates = VectorCandidates(allowed: allowed, excluded: excluded, filters: filters, user: hiddenFrom)
            vectorWork = try snapshot.vectorRankingWork(vector, embedder: record, k: depth, candidates: candidates,
                                                        quantized: quantized, rows: VectorRows(kinds: query.kinds))
        }
        // A large scan runs on another thread while this one (the snapshot's) ranks keywords, when
        // a core is idle for it.
        let background = quantized && mode == .hybrid && besideKeywords ? vectorWork.map(BackgroundWork.init) : nil
        defer { background?.finish() }
        var keywordRanking: [(id: Int64, score: Double)] = []
        if mode != .vector {
            do {
                keywordRanking = try snapshot.keywordRanking(query, limit: depth, allowed: allowed, excluded: excluded)
            } catch let error as KBError where error.code == .unprocessable && mode == .hybrid {
                keywordRanking = []   // no words to match; the vector ranking still runs
            }
        }
        return (keywordRanking, try background?.result() ?? vectorWork?() ?? [])
    }

    /// Stage 3b, languages: what each ranking of a hybrid search can say in the query's language
    /// (`LanguageDetector`; nothing changes when it cannot tell). A keyword match in a snippet
    /// whose `lang:` tag names another language is an accident — a name, a number, a stray
    /// English phrase in a Russian page — and leaves the keyword ranking; a vector ranking by a
    /// model that does not read the query's language (`ModelLanguages`) is noise and leaves the
    /// fusion to the keywords.
    func readable(_ rankings: (keywords: [(id: Int64, score: Double)], vectors: [(id: Int64, score: Float)]), mode: SearchMode,
                  query: SearchQuery, record: EmbedderRecord?, in snapshot: any IndexSnapshot)
        throws -> (keywords: [(id: Int64, score: Double)], vectors: [(id: Int64, score: Float)]) {
        guard mode == .hybrid else { return rankings }
        // The languages it may be in (Spanish or Portuguese, say); without any, its script.
        let candidates = LanguageDetector.candidates(of: query.text)
        guard let script = candidates?.first.flatMap(LanguageDetector.script(ofLanguage:)) ?? LanguageDetector.dominantScript(of: query.text)
        else { return rankings }
        var (keywords, vectors) = rankings
        if !keywords.isEmpty {
            let languages = try snapshot.tagValues(of: keywords.map(\.id), prefix: "lang:")
            keywords = keywords.filter { hit in
                guard let tagged = languages[hit.id].map(ModelLanguages.primary), let taggedScript = LanguageDetector.script(ofLanguage: tagged)
                else { return true }   // no language, or one kb does not detect: nothing to compare
                guard let candidates else { return taggedScript == script }
                return candidates.contains { LanguageDetector.mayShareWords(tagged, $0) }
            }
        }
        if let candidates, let record, !keywords.isEmpty, !candidates.contains(where: { ModelLanguages.reads(record.name, $0) }) { vectors = [] }
        return (keywords, vectors)
    }

    /// Stage 4, fuse: one ordering with scores — a ranking alone, or both fused as the query says
    /// (adaptively by default, with the keyword ranking's share; or by reciprocal rank with the
    /// query's weights) over each ranking's first `depth` entries; entries further down follow
    /// by their best rank.
    func fuse(mode: SearchMode, keywords: [(id: Int64, score: Double)], vectors: [(id: Int64, score: Float)],
              query: SearchQuery, depth: Int, keywordCoverage: Double = 1) -> (ordered: [(id: Int64, score: Double)], keywordShare: Double?) {
        switch mode {
        case .keyword: return (keywords, nil)
        case .vector: return (vectors.map { ($0.id, Double($0.score)) }, nil)
        case .hybrid:
            switch query.fusion {
            case .adaptive:
                let (fused, share) = Ranking.adaptiveFusion(keywords: keywords, vectors: vectors.map { ($0.id, Double($0.score)) },
                                                            keywordWeight: query.keywordWeight, vectorWeight: query.vectorWeight,
                                                            keywordCoverage: keywordCoverage, depth: depth)
                return (fused.map { ($0.id, $0.score) }, share)
            case .reciprocalRank:
                let lists = [keywords.map(\.id), vectors.map(\.id)]
                var ordered = Ranking.reciprocalRank(lists.map { Array($0.prefix(depth)) }, weights: [query.keywordWeight, query.vectorWeight])
                    .map { (id: $0.id, score: $0.score) }
                // Below the candidates: by rank, the smaller id first at one rank, each once.
                var placed = Set(ordered.map(\.id))
                for rank in stride(from: depth, to: lists.map(\.count).max() ?? 0, by: 1) {
                    for id in lists.compactMap({ rank < $0.count ? $0[rank] : nil }).sorted() where placed.insert(id).inserted {
                        ordered.append((id, 0))
                    }
                }
                return (ordered, nil)
            }
        }
    }

    /// Stage 4b, turns: on an index that holds conversations, each turn among the candidates is
    /// lifted by the candidates around it, and the turns next to candidates join them when the
    /// query's filters let them through (`Ranking.neighbourSmoothing`); when the query names one
    /// of the candidates' speakers, that speaker's turns gain a little (`Ranking.speakerBoost`), and
    /// when it names a date (`NamedDate`), so do the turns said on a date that agrees with it.
    func turns(_ ordered: [(id: Int64, score: Double)], query: SearchQuery, in snapshot: any IndexSnapshot) throws -> [(id: Int64, score: Double)] {
        guard !ordered.isEmpty else { return ordered }
        let generation = try snapshot.generation()
        guard try state.holdsConversations(generation: generation, read: { try snapshot.hasConversations() }) else { return ordered }
        let neighbours = try snapshot.conversationNeighbours(of: ordered.map(\.id), within: Ranking.turnNeighbourWeights.count)
        guard !neighbours.isEmpty else { return ordered }
        let allowed = try allowedSnippets(query, generation: generation, in: snapshot)
        let excluded = allowed == nil ? try hiddenSnippets(user: query.user, generation: generation, in: snapshot) : []
        let smoothed = Ranking.neighbourSmoothing(ordered, neighbours: neighbours) { id in allowed.map { $0.contains(id) } ?? !excluded.contains(id) }
        // A question that names one of the speakers is most often answered by that speaker.
        var ranked = smoothed
        let speakers = try snapshot.tagValues(of: ranked.map(\.id), prefix: "speaker:")
        if let named = Ranking.namedSpeaker(in: query.text, among: Set(speakers.values)) {
            ranked = Ranking.speakerBoost(ranked, speakers: speakers, speaker: named)
        }
        // A question that names a date is most often answered by what was said then.
        if let date = NamedDate.find(in: query.text) {
            let dates = try snapshot.tagValues(of: ranked.map(\.id), prefix: "date:")
            ranked = Ranking.boost(ranked, share: Ranking.namedDateShare) { dates[$0].map(date.matches) ?? false }
        }
        return ranked
    }

    /// What `explain` tells of each candidate: its place and score in each ranking, the fused
    /// score, and the filters the search applied.
    func explanations(_ keywords: [(id: Int64, score: Double)], _ vectors: [(id: Int64, score: Float)], fused: [(id: Int64, score: Double)],
                      query: SearchQuery) -> [Int64: HitExplanation] {
        var filters: [String] = []
        if !query.tags.isEmpty { filters.append("tags: " + query.tags.map(\.name).joined(separator: ", ")) }
        if !query.anyTags.isEmpty { filters.append("any of the tags: " + query.anyTags.map(\.name).joined(separator: ", ")) }
        if !query.kinds.isEmpty { filters.append("kinds: " + query.kinds.map(\.rawValue).sorted().joined(separator: ", ")) }
        if !query.sourcePrefixes.isEmpty { filters.append("sources: " + query.sourcePrefixes.joined(separator: ", ")) }
        if !query.selectors.isEmpty { filters.append("a bot's sources: " + query.selectors.map(\.description).joined(separator: ", ")) }
        if !query.scopes.isEmpty { filters.append("scopes: " + query.scopes.map(\.name).joined(separator: ", ")) }
        if let user = query.user { filters.append("user: \(user)") }
        var byID: [Int64: HitExplanation] = [:]
        for (id, score) in fused { byID[id] = HitExplanation(fused: score, filters: filters) }
        for (index, entry) in keywords.enumerated() where byID[entry.id] != nil {
            (byID[entry.id]!.keywordRank, byID[entry.id]!.keywordScore) = (index + 1, entry.score)
        }
        for (index, entry) in vectors.enumerated() where byID[entry.id] != nil {
            (byID[entry.id]!.vectorRank, byID[entry.id]!.cosine) = (index + 1, Double(entry.score))
        }
        return byID
    }

    /// Stage 5, weight: records' weights reorder the candidates (a stable sort: equal scores keep
    /// their order).
    func weight(_ ordered: [(id: Int64, score: Double)], summaries: [Int64: SnippetSummary]) -> [(id: Int64, score: Double)] {
        guard ordered.contains(where: { summaries[$0.id]?.weight != nil }) else { return ordered }
        let weighted: [(id: Int64, score: Double)] = ordered.map { entry in
            (entry.id, SearchHit.weighted(entry.score, by: summaries[entry.id]?.weight))
        }
        let order = weighted.indices.sorted { a, b in
            weighted[a].score != weighted[b].score ? weighted[a].score > weighted[b].score : a < b
        }
        return order.map { weighted[$0] }
    }

    /// Stage 6, collapse: near-duplicates go, the better-ranked stays, until `keeping` are kept.
    func collapse(_ ordered: [(id: Int64, score: Double)], summaries: [Int64: SnippetSummary], vectors: [Int64: [Float]],
                  keeping: Int) -> [(id: Int64, score: Double)] {
        let kept = Set(Ranking.collapseNearDuplicates(ordered.map { ($0.id, summaries[$0.id]?.text ?? "") }, vectors: vectors, limit: keeping))
        return ordered.filter { kept.contains($0.id) }
    }

    /// Stage 7, diversify: maximal marginal relevance over the candidates' vectors.
    func diversify(_ ordered: [(id: Int64, score: Double)], vectors: [Int64: [Float]], lambda: Double, k: Int) -> [(id: Int64, score: Double)] {
        let picked = Ranking.maximalMarginalRelevance(ordered.map { ($0.id, $0.score) }, vectors: vectors, lambda: lambda, k: k)
        let scores = Dictionary(ordered.map { ($0.id, $0.score) }, uniquingKeysWith: { first, _ in first })
        return picked.map { ($0, scores[$0] ?? 0) }
    }

    /// What the asynchronous stage is shown of a list: each candidate's text.
    func candidates(_ ranked: Ranked, in snapshot: any IndexSnapshot) throws -> (Ranked, [RetrievalCandidate]) {
        let summaries = try snapshot.snippetSummaries(ranked.entries.map(\.id), texts: true)
        let shown = ranked.entries.compactMap { entry in
            summaries[entry.id].map {
                RetrievalCandidate(snippetID: entry.id, score: entry.score, sourcePath: entry.sourcePath, text: $0.text, signals: entry.signals)
            }
        }
        return (ranked, shown)
    }

    /// Stage 9, hydrate: the hits of a list's first `limit` entries, numbered from 1 (excerpts
    /// mark the words of the planned query that found each).
    func hydrate(_ ranked: Ranked, in snapshot: any IndexSnapshot) throws -> SearchResults {
        let final = ranked.entries.prefix(ranked.limit)
        var hitsByID: [Int64: SearchHit] = [:]
        for (highlight, entries) in Dictionary(grouping: final, by: \.highlight) {
            hitsByID.merge(try snapshot.hits(for: entries.map(\.id), highlighting: highlight)) { first, _ in first }
        }
        var hits: [SearchHit] = []
        for entry in final {
            guard var hit = hitsByID[entry.id] else { continue }
            hit.rank = hits.count + 1
            hit.score = entry.score
            hit.explanation = entry.explanation
            hits.append(hit)
        }
        var results = SearchResults(query: ranked.query, mode: ranked.mode, embedder: ranked.embedder, hits: hits, degraded: ranked.degraded)
        results.queries = ranked.plan
        results.secondStage = ranked.secondStage
        return results
    }

    /// The query whose filters a search applies (a user who owns no private source searches as
    /// everyone does); nil when it has none.
    func appliedFilters(_ query: SearchQuery, generation: Int64, in snapshot: any IndexSnapshot) throws -> SearchQuery? {
        guard query.hasFilters else { return nil }
        var query = query
        if let user = query.user, !query.everyUser, !(try owns(user, generation: generation, in: snapshot)) { query.user = nil }
        return query
    }

    /// The snippets a query's filters let through (nil: all), kept per index generation.
    func allowedSnippets(_ query: SearchQuery, generation: Int64, in snapshot: any IndexSnapshot) throws -> Set<Int64>? {
        guard let query = try appliedFilters(query, generation: generation, in: snapshot) else { return nil }
        guard query.kinds.contains(.memory), !query.includeSuperseded, query.memoriesAsOf == nil, query.memoriesDuring == nil else {
            return try state.cached(\.filters, FilterKey(query), generation: generation) { try snapshot.filteredSnippetIDs(query) ?? [] }
        }
        // The memories that hold now: the same set until the next memory starts, stops or expires.
        let now = Date()
        return try state.cached(\.filters, FilterKey(query), generation: generation, at: now) {
            (try snapshot.filteredSnippetIDs(query) ?? [], try snapshot.nextMemoryChange(after: now))
        }
    }

    /// Whether `user` owns a private source (else their filters are everyone's).
    func owns(_ user: String, generation: Int64, in snapshot: any IndexSnapshot) throws -> Bool {
        try state.ownsSources(user, generation: generation) { try snapshot.sourceOwners() }
    }

    /// The user a search without filters shows private sources of: `user` when they own one.
    func searchingUser(_ user: String?, generation: Int64, in snapshot: any IndexSnapshot) throws -> String? {
        try user.flatMap { try owns($0, generation: generation, in: snapshot) ? $0 : nil }
    }

    /// The snippets a search without filters leaves out (memories, other users' private
    /// sources), kept per index generation and user.
    func hiddenSnippets(user: String?, generation: Int64, in snapshot: any IndexSnapshot) throws -> Set<Int64> {
        let user = try searchingUser(user, generation: generation, in: snapshot)
        return try state.cached(\.hidden, user ?? "", generation: generation) { try snapshot.hiddenSnippetIDs(user: user) }
    }
}

public import Foundation
public import KBCore

/// One consistent view of an index, valid only inside the `IndexStore.snapshot` call that hands
/// it out. Its calls block their (non-cooperative) thread.
public protocol IndexSnapshot: StoredReads {
    /// Where the index is, as `IndexStore.location`.
    var location: String { get }
    /// A number that grows with every write that changes what searches see.
    func generation() throws -> Int64
    func status() throws -> IndexStatus
    /// The storage engine's own consistency check: "ok", or what is damaged.
    func integrityCheck() throws -> String

    // Sources
    /// Content hash of every source by path.
    func contentHashes() throws -> [String: String]
    func sourcePaths(under prefix: String) throws -> [String]
    func sources() throws -> [StoredSource]
    /// The language keyword search is tuned for.
    func keywordLanguage() throws -> KeywordLanguage
    /// How OCR read each source it read (`Source.ocr`), by path.
    func ocrRecords() throws -> [String: String]
    /// Paths of the sources whose page starts the index keeps (books read since kb kept them).
    func pagedSources() throws -> Set<String>
    /// Pages recognised earlier in the file with this hash, under the same settings.
    func ocrPages(contentHash: String, key: String) throws -> [OCRPage]

    // Embedders and vectors
    /// The stored vectors of a source's snippets, by what was embedded in an index that embeds
    /// with `context` (`SnippetText.embeddingInput`: the snippet's text after its source's title,
    /// a conversation's turn after the turn before it), so an update re-embeds only changed text.
    func vectorsByText(path: String, embedder: String, context: EmbeddingInput.Context) throws -> [String: [Float]]
    func cachedVectors(embedder: EmbedderRecord, hashes: [Data]) throws -> [Data: [Float]]
    func snippetsWithoutVectors(embedder: EmbedderRecord, limit: Int) throws -> [SnippetText]
    /// The `k` snippets nearest to `vector` (cosine, best first), among `allowed` when given,
    /// leaving out `excluded`; a filter never shrinks `k`. With `quantized`, a store that keeps an
    /// int8 copy of the vectors scans it and rescores the best candidates exactly; others ignore it.
    ///
    /// `rows` says which vectors can be among the answers (memories' or the rest's, from the
    /// query's kinds): a store that keeps them apart scans only those.
    func vectorRanking(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?, excluded: Set<Int64>,
                       quantized: Bool, rows: VectorRows) throws -> [(id: Int64, score: Float)]
    /// `vectorRanking` in two steps: what needs the snapshot's connection happens in the call,
    /// and the work it returns ranks — on any thread, while the snapshot's own thread goes on (a
    /// keyword ranking beside it). A store whose ranking is a query of its connection ranks in the
    /// call (the default).
    func vectorRankingWork(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?, excluded: Set<Int64>,
                           quantized: Bool, rows: VectorRows) throws -> @Sendable () throws -> [(id: Int64, score: Float)]
    /// `vectorRankingWork` given the candidates in both their forms (`VectorCandidates`): a store
    /// that ranks in a database states a large set as the conditions it came from instead of
    /// sending its ids (the default ranks by the ids).
    func vectorRankingWork(_ vector: [Float], embedder: EmbedderRecord, k: Int, candidates: VectorCandidates,
                           quantized: Bool, rows: VectorRows) throws -> @Sendable () throws -> [(id: Int64, score: Float)]
    func vectors(of snippetIDs: [Int64], embedder: EmbedderRecord) throws -> [Int64: [Float]]
    /// Loads what a store keeps in memory for searches (vectors, their int8 copy when there are
    /// at least `quantizingFrom`, keyword postings) now rather than at the first search; returns
    /// one line per copy read back from a saved one (and whether it caught up with writes since).
    /// Stores that keep nothing in memory do nothing.
    @discardableResult
    func prepareSearches(embedder: EmbedderRecord?, quantizingFrom: Int) throws -> [String]
    /// Saves what `prepareSearches` loaded beside the index, for the next process that opens it
    /// (stores that keep nothing, or whose copies are small, save nothing); one line per copy written.
    func saveSearches() throws -> [String]

    // Search
    /// Snippet ids and scores (higher is better) of the best keyword matches. `allowed`, when
    /// given, is what the query's filters let through (`filteredSnippetIDs`): a store may rank
    /// only those instead of applying the filters again (the answer is the same either way).
    func keywordRanking(_ query: SearchQuery, limit: Int, allowed: Set<Int64>?) throws -> [(id: Int64, score: Double)]
    /// `keywordRanking` given, when the query has no filters, the snippets a search without
    /// filters leaves out (`hiddenSnippetIDs`, which the caller keeps): a store that ranks outside
    /// SQL checks its candidates against them instead of reading them again (the default reads
    /// them as `keywordRanking` does).
    func keywordRanking(_ query: SearchQuery, limit: Int, allowed: Set<Int64>?, excluded: Set<Int64>) throws -> [(id: Int64, score: Double)]
    /// How much of a keyword query each of the snippets `ids` holds (`KeywordCoverage`, in their
    /// order): its search terms' document frequencies, whether the snippet holds each, and the
    /// number of snippets, as the keyword ranking reads them. Empty when the query has no words.
    func keywordCoverage(_ query: SearchQuery, of ids: [Int64]) throws -> [KeywordCoverage]
    /// Ids of the snippets that pass a query's filters; nil when it has none.
    func filteredSnippetIDs(_ query: SearchQuery) throws -> Set<Int64>?
    /// Paths of the sources with a snippet that passes a query's filters.
    func sourcePaths(passing query: SearchQuery) throws -> Set<String>
    /// The users who own at least one private source.
    func sourceOwners() throws -> Set<String>
    /// Ids of the snippets a search without filters leaves out: every memory's, and those of
    /// private sources that do not belong to `user` (all private sources without a user).
    func hiddenSnippetIDs(user: String?) throws -> Set<Int64>
    /// Hits for snippet ids (rank and score 0); with `highlighting`, excerpts mark its words.
    func hits(for ids: [Int64], highlighting text: String?) throws -> [Int64: SearchHit]
    /// Where snippets come from, their weights and (with `texts`; else "") their texts.
    func snippetSummaries(_ ids: [Int64], texts: Bool) throws -> [Int64: SnippetSummary]
    /// Whether the index holds a conversation (a source of kind `conversation`).
    func hasConversations() throws -> Bool
    /// For each of `ids` that is a turn of a conversation: the other turns of that conversation
    /// at most `within` places away, with their distance (1 for the turns next to it).
    func conversationNeighbours(of ids: [Int64], within: Int) throws -> [Int64: [(id: Int64, distance: Int)]]
    /// The value of each of `ids`' tag that starts with `prefix` (`speaker:`, `date:`), for the
    /// snippets that carry one.
    func tagValues(of ids: [Int64], prefix: String) throws -> [Int64: String]

    // Memories
    /// Memories, oldest first; `scopes` empty means all; every tag must be present.
    func memories(scopes: [MemoryScope], tags: [Tag], includeSuperseded: Bool) throws -> [Memory]
    func memories(sourcePaths paths: [String]) throws -> [String: Memory]
    /// The request log since `since`, grouped.
    func usage(since: Date, by grouping: UsageGrouping) throws -> [UsageRow]
    /// Every row of the request log, oldest first.
    func requestLogEntries() throws -> [RequestLogEntry]

    // Bots
    func bots() throws -> [Bot]

    // Copying a whole index (`kb export`)
    /// A stored source's metadata (tags and keywords included), or nil.
    func source(path: String) throws -> Source?
    /// Ids of a source's snippets, in ordinal order.
    func snippetIDs(ofSource path: String) throws -> [Int64]
    /// Where each page of a book starts in its text; empty for a source without pages (or a
    /// book indexed before kb kept them).
    func pageStarts(ofSource path: String) throws -> [PageStart]
    /// Names and dimensions of every embedder with vectors in the index (the current one and
    /// any kept by a reindex).
    func embedderDimensions() throws -> [(name: String, dimension: Int)]
    /// The embedding cache of one embedder: text hash and vector.
    func cacheEntries(embedder: EmbedderRecord) throws -> [(hash: Data, vector: [Float])]

    // Jobs and originals
    /// A job's bytes, in order.
    func jobChunks(id: String) throws -> [Data]
    /// Jobs not finished (receiving, queued, running), oldest first.
    func unfinishedJobs() throws -> [StoredJob]
}

/// The snippets a vector ranking may answer with, in the two forms stores use: their ids, and
/// what the ids were read from. A store that keeps vectors in memory checks ids; one that ranks
/// in a database states the same set as conditions of its statement when the list would be long
/// (a bot's sources on a large shelf are most of it).
public struct VectorCandidates: Sendable {
    /// With filters, the snippets that pass them (`filteredSnippetIDs(filters)`); nil without.
    public var allowed: Set<Int64>?
    /// Without filters, the snippets a search leaves out (`hiddenSnippetIDs(user:)`); else empty.
    public var excluded: Set<Int64>
    /// The query whose filters `allowed` was read with (its user as the search applied it); nil
    /// when the search has no filters.
    public var filters: SearchQuery?
    /// The user `excluded` was read for (nil: every private source is left out).
    public var user: String?

    public init(allowed: Set<Int64>?, excluded: Set<Int64>, filters: SearchQuery?, user: String?) {
        self.allowed = allowed
        self.excluded = excluded
        self.filters = filters
        self.user = user
    }
}

/// Which snippets' vectors a vector ranking can answer with.
public enum VectorRows: Sendable, Hashable {
    /// Everything but memories.
    case knowledge
    /// Memories only.
    case memories
    /// Both.
    case all

    /// The rows a search of these kinds can answer with (no kinds: everything but memories).
    public init(kinds: Set<SourceKind>) {
        if kinds.isEmpty || !kinds.contains(.memory) {
            self = .knowledge
        } else {
            self = kinds == [.memory] ? .memories : .all
        }
    }
}

extension IndexSnapshot {
    /// `vectorRanking` over every vector.
    public func vectorRanking(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?, excluded: Set<Int64>,
                              quantized: Bool) throws -> [(id: Int64, score: Float)] {
        try vectorRanking(vector, embedder: embedder, k: k, allowed: allowed, excluded: excluded, quantized: quantized, rows: .all)
    }

    @discardableResult
    public func prepareSearches(embedder: EmbedderRecord?, quantizingFrom: Int) throws -> [String] { [] }

    public func keywordRanking(_ query: SearchQuery, limit: Int, allowed: Set<Int64>?, excluded: Set<Int64>) throws -> [(id: Int64, score: Double)] {
        try keywordRanking(query, limit: limit, allowed: allowed)
    }

    public func saveSearches() throws -> [String] { [] }

    public func vectorRankingWork(_ vector: [Float], embedder: EmbedderRecord, k: Int, allowed: Set<Int64>?, excluded: Set<Int64>,
                                  quantized: Bool, rows: VectorRows) throws -> @Sendable () throws -> [(id: Int64, score: Float)] {
        let ranking = try vectorRanking(vector, embedder: embedder, k: k, allowed: allowed, excluded: excluded, quantized: quantized, rows: rows)
        return { ranking }
    }

    public func vectorRankingWork(_ vector: [Float], embedder: EmbedderRecord, k: Int, candidates: VectorCandidates,
                                  quantized: Bool, rows: VectorRows) throws -> @Sendable () throws -> [(id: Int64, score: Float)] {
        try vectorRankingWork(vector, embedder: embedder, k: k, allowed: candidates.allowed, excluded: candidates.excluded,
                              quantized: quantized, rows: rows)
    }

    /// A stored source with its snippets, as ingest wrote it; nil when there is none at `path`.
    public func document(path: String) throws -> SourceDocument? {
        guard let source = try source(path: path) else { return nil }
        let ids = try snippetIDs(ofSource: path)
        let hits = try self.hits(for: ids, highlighting: nil)
        let pages = try pageStarts(ofSource: path)
        return SourceDocument(source: source, snippets: try ids.map { id in
            guard let hit = hits[id] else { throw KBError(.database, "The snippet \(id) of \(path) vanished while it was being read.") }
            return hit.snippet
        }, pageStarts: pages.isEmpty ? nil : pages)
    }

    /// Every embedder with vectors in the index; the current one carries the spec the index
    /// records, the others their name.
    public func embedders() throws -> [EmbedderRecord] {
        let current = try embedderRecord()
        return try embedderDimensions().map { name, dimension in
            EmbedderRecord(name: name, dimension: dimension, spec: current?.name == name ? current!.spec : name)
        }
    }

    public func memories(scopes: [MemoryScope] = [], tags: [Tag] = []) throws -> [Memory] {
        try memories(scopes: scopes, tags: tags, includeSuperseded: false)
    }

    public func hits(for ids: [Int64]) throws -> [Int64: SearchHit] { try hits(for: ids, highlighting: nil) }

    /// Keyword search: the ranking with its hits.
    public func keywordSearch(_ query: SearchQuery) throws -> [SearchHit] {
        let ranking = try keywordRanking(query, limit: query.limit, allowed: nil)
        let hits = try self.hits(for: ranking.map(\.id), highlighting: query.text)
        return ranking.enumerated().compactMap { index, entry in
            guard var hit = hits[entry.id] else { return nil }
            hit.rank = index + 1
            hit.score = entry.score
            return hit
        }
    }
}

/// What ranking needs of a snippet beyond its id: its source (for grouping), its text (for
/// near-duplicates) and its weight (nil: 1).
public struct SnippetSummary: Sendable, Hashable {
    public var sourcePath: String
    public var text: String
    public var weight: Double?

    public init(sourcePath: String, text: String, weight: Double? = nil) {
        self.sourcePath = sourcePath
        self.text = text
        self.weight = weight
    }
}

public import KBCore
public import KBRequests
import KBRetrieval
import KBStore

extension KnowledgeBase {
    /// Ranked snippets for a query built in code (checked here; requests are checked where they
    /// are decoded, `SearchRequest.validated`).
    ///
    /// Keyword mode ranks with bm25; vector mode embeds the query and ranks the vectors;
    /// hybrid runs both to `query.candidates` and fuses the ranks (RRF, k = 60). Filters select
    /// snippets before ranking. Near-duplicate snippets are collapsed (the best-ranked stays);
    /// then `groupBySource` and `diversity` apply, and the first `limit` hits are returned.
    /// The index is read in one snapshot, off the caller's thread (`Retriever`). Every snippet may
    /// be reached this way: the admin's only (a scoped token searches through its bots, `SearchRequest`).
    public func search(_ query: SearchQuery, as caller: Caller) async throws -> SearchResults {
        try caller.requireBot(nil)
        try Retriever.check(query)
        return try await retriever.search(query)
    }

    /// Ranked snippets (see `search(_:as:)` of a `SearchQuery`); with `bot`, only what that bot may
    /// see. A scoped token searches only through its bots, for users of its scopes.
    public func search(_ request: SearchRequest, as caller: Caller) async throws -> SearchResults {
        try await search(try request.checked(limits), as: caller)
    }

    /// As `search(_:as:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func search(_ checked: Checked<SearchRequest>, as caller: Caller) async throws -> SearchResults {
        let valid = try inForce(checked).valid
        try caller.requireBot(valid.bot)
        if let user = valid.query.user { try caller.requireScopes([try MemoryScope.user(user)], writing: false) }
        let query = valid.query
        guard let name = valid.bot else { return try await retriever.search(query) }
        // The bot is read in the ranking's own snapshot.
        let (seen, results, _) = try await retriever.retrieve(
            query.text, history: query.history, use: query.historyUse, needsVectors: query.mode != .keyword, mayDegrade: query.mode != .vector,
            arms: { snapshot in
                let bot = try snapshot.bot(named: name)
                guard !bot.sources.isEmpty else { return (false, []) }
                var query = query
                query.selectors = bot.sources
                query.kinds.remove(.memory)
                return (true, [Retriever.Arm(query)])
            }, extra: { _, _, _ in () })
        return seen ? results[0] : SearchResults(query: query.text, mode: query.mode, embedder: nil, hits: [])
    }

    /// Loads what searches keep in memory (the vectors and, for a large index, their int8 copy;
    /// the keyword postings) now, so that the first request does not wait for it: `kb serve`
    /// calls it as it starts. Searches that come meanwhile wait for the same load. Returns one
    /// line per copy read back from a saved one (and whether it caught up with writes since).
    @discardableResult
    public func prepareSearches() async throws -> [String] {
        try await retriever.prepareSearches()
    }

    /// Saves what `prepareSearches` loaded beside the index file (an SQLite index of 50,000
    /// snippets or more: the vectors with their int8 copy, the keyword postings; in the folder
    /// `<index>-search`), so that the next process opens it by reading them back instead of
    /// deriving them again. `kb serve` calls it once loaded and as it stops. Returns one line per
    /// copy written (none when the saved ones are current).
    @discardableResult
    public func saveSearches() async throws -> [String] {
        try await retriever.saveSearches()
    }
}

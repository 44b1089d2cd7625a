public import KBCore
import KBRetrieval

extension KnowledgeBase {
    /// Ranked snippets for a query built in code (checked here; requests are checked where they
    /// are decoded, `SearchRequest.validated`).
    ///
    /// Keyword mode ranks with bm25; vector mode embeds the query and ranks the vectors;
    /// hybrid runs both to `query.candidates` and fuses the ranks (RRF, k = 60). Filters select
    /// snippets before ranking. Near-duplicate snippets are collapsed (the best-ranked stays);
    /// then `groupBySource` and `diversity` apply, and the first `limit` hits are returned.
    /// The index is read in one snapshot, off the caller's thread (`Retriever`).
    public func search(_ query: SearchQuery) async throws -> SearchResults {
        try Retriever.check(query)
        return try await retriever.search(query)
    }

    /// Loads what searches keep in memory (the vectors and, for a large index, their int8 copy;
    /// the keyword postings) now, so that the first request does not wait for it: `kb serve`
    /// calls it as it starts. Searches that come meanwhile wait for the same load.
    public func prepareSearches() async throws {
        try await retriever.prepareSearches()
    }
}

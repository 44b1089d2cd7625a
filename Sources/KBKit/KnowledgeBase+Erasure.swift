import KBCore
public import KBRequests

extension KnowledgeBase {
    /// Erases a scope: every memory with all its versions, vectors, keyword rows and cached
    /// embeddings, and for `user:ID` that user's private sources, their originals and pending
    /// jobs; then scrubs the index files (`IndexStore.scrub`: on SQLite, deleted text is
    /// zeroed, the keyword index merged and the write-ahead log truncated). Hand a user their
    /// data first with `kb memory export --scope`.
    /// The caller must be allowed to write the scope.
    public func erase(_ request: EraseRequest, as caller: Caller) async throws -> Erasure {
        try await erase(try request.checked(limits), as: caller)
    }

    /// As `erase(_:as:)`, for a request checked before (`KBRequest.checked(_:)`).
    public func erase(_ checked: Checked<EraseRequest>, as caller: Caller) async throws -> Erasure {
        let scope = try inForce(checked).valid
        try caller.requireScopes([scope], writing: true)
        let erased = try await memoryBook.erase(scope)
        var sources = SourcesErased(user: "", sources: 0, jobs: 0)
        if scope.name.hasPrefix("user:") {
            sources = try await sourceDesk.eraseSources(user: String(scope.name.dropFirst("user:".count)))   // scrubs too
        } else {
            try await store.scrub()
        }
        return Erasure(scope: scope.name, memories: erased.memories, versions: erased.versions, cachedVectors: erased.cachedVectors,
                       sources: sources.sources, jobs: sources.jobs)
    }
}

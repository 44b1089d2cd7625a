import Crypto
public import Foundation
public import KBCore
import KBStore

/// What an erasure removed.
public struct Erasure: Sendable, Hashable, Codable {
    public var scope: String
    /// Memories, superseded ones included.
    public var memories: Int
    /// Their versions, the current ones included.
    public var versions: Int
    /// Cached remote vectors of those texts.
    public var cachedVectors: Int
    /// The user's private sources, with their snippets, vectors and stored originals (user scopes).
    public var sources: Int
    /// The user's jobs that had not stored their source yet.
    public var jobs: Int
}

extension KnowledgeBase {
    /// Erases a scope: every memory with all its versions, vectors, keyword rows and cached
    /// embeddings, and for `user:ID` that user's private sources, their originals and pending
    /// jobs; then scrubs the index files (`IndexStore.scrub`: on SQLite, deleted text is
    /// zeroed, the keyword index merged and the write-ahead log truncated). Hand a user their
    /// data first with `kb memory export --scope`.
    /// The caller must be allowed to write the scope.
    public func erase(_ request: EraseRequest, as caller: Caller = .admin) async throws -> Erasure {
        let scope = try request.validated(limits)
        try caller.requireScopes([scope], writing: true)
        let erased = try await store.eraseMemories(scope: scope) { Data(SHA256.hash(data: Data($0.utf8))) }
        var sources = SourcesErased(user: "", sources: 0, jobs: 0)
        if scope.name.hasPrefix("user:") {
            sources = try await eraseSources(user: String(scope.name.dropFirst("user:".count)))   // scrubs too
        } else {
            try await store.scrub()
        }
        return Erasure(scope: scope.name, memories: erased.memories, versions: erased.versions, cachedVectors: erased.cachedVectors,
                       sources: sources.sources, jobs: sources.jobs)
    }
}

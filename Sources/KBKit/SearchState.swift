import Foundation
import KBCore
import KBEmbed
import KBStore

/// What searches of one knowledge base keep between calls: the embedder record last read, the
/// query embedder, and the filter results of the index generation they reflect. (The vectors in
/// memory are the SQLite store's own.)
///
/// @unchecked Sendable: every field is guarded by `lock`.
final class SearchState: @unchecked Sendable {
    let lock = NSLock()
    var embedder: (any Embedder)?
    var embedderName: String?
    /// The embedder record last read, to embed a query before the snapshot that confirms it.
    var knownRecord: EmbedderRecord??
    /// Snippet ids that pass a filter, and those a search without filters leaves out (by user;
    /// "" for none), at `filtersGeneration`.
    var filters: [FilterKey: Set<Int64>] = [:]
    var hidden: [String: Set<Int64>] = [:]
    /// The users who own private sources, at `filtersGeneration`.
    var owners: Set<String>?
    var filtersGeneration: Int64 = -1

    /// Whether `user` owns a private source at `generation`. A user who owns none sees exactly
    /// what a query without a user sees, so such queries share one cached filter result instead
    /// of making one per user (10,000 users would each rebuild a 100,000-id set).
    func ownsSources(_ user: String, generation: Int64, read: () throws -> Set<String>) rethrows -> Bool {
        if let owners = lock.withLock({ filtersGeneration == generation ? self.owners : nil }) { return owners.contains(user) }
        let owners = try read()
        lock.withLock {
            forget(unless: generation)
            self.owners = owners
        }
        return owners.contains(user)
    }

    /// The set `key` names in one of the caches, made by `make` unless the cache holds it for
    /// `generation`. A new generation empties both caches; each keeps at most 256 sets.
    func cached<Key: Hashable>(_ cache: ReferenceWritableKeyPath<SearchState, [Key: Set<Int64>]>, _ key: Key, generation: Int64,
                               make: () throws -> Set<Int64>) rethrows -> Set<Int64> {
        if let found = lock.withLock({ filtersGeneration == generation ? self[keyPath: cache][key] : nil }) { return found }
        let made = try make()
        lock.withLock {
            forget(unless: generation)
            if self[keyPath: cache].count >= 256 { self[keyPath: cache] = [:] }
            self[keyPath: cache][key] = made
        }
        return made
    }

    /// Empties the caches when they reflect another generation than `generation` (under `lock`).
    private func forget(unless generation: Int64) {
        guard filtersGeneration != generation else { return }
        filters = [:]
        hidden = [:]
        owners = nil
        filtersGeneration = generation
    }
}

/// The parts of a query that decide which snippets pass its filters.
struct FilterKey: Hashable {
    var tags: [Tag]
    var anyTags: [Tag]
    var kinds: Set<SourceKind>
    var scopes: [MemoryScope]
    var selectors: [SourceSelector]
    var includeSuperseded: Bool
    var sourcePrefixes: [String]
    var user: String?
    var everyUser: Bool

    init(_ query: SearchQuery) {
        tags = query.tags
        anyTags = query.anyTags
        kinds = query.kinds
        scopes = query.scopes
        selectors = query.selectors
        includeSuperseded = query.includeSuperseded
        sourcePrefixes = query.sourcePrefixes
        user = query.user
        everyUser = query.everyUser
    }
}

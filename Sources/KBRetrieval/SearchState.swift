import Foundation
import KBCore
import KBStore

/// What a retriever keeps between searches: the embedder record last read, and the filter
/// results of the index generation they reflect. (The vectors in memory are the SQLite store's
/// own; the query embedder is the knowledge base's.)
///
/// @unchecked Sendable: every field is guarded by `lock`.
final class SearchState: @unchecked Sendable {
    let lock = NSLock()
    /// The embedder record last read, to embed a query before the snapshot that confirms it.
    var knownRecord: EmbedderRecord??
    /// Snippet ids that pass a filter, and those a search without filters leaves out (by user;
    /// "" for none), at `filtersGeneration`.
    var filters: [FilterKey: CachedIDs] = [:]
    var hidden: [String: CachedIDs] = [:]
    /// Counts lookups, to tell which cached sets were used last.
    private var clock: UInt64 = 0
    /// The users who own private sources, at `filtersGeneration`.
    var owners: Set<String>?
    /// Whether the index holds a conversation, at `filtersGeneration`.
    var conversations: Bool?
    var filtersGeneration: Int64 = -1
    /// Searches ranking now, in this process.
    private var rankingNow = 0
    private let cores = ProcessInfo.processInfo.activeProcessorCount

    /// Runs `body` counted among the searches ranking now; it is told whether they (this one
    /// included) leave a core idle.
    func ranking<T>(_ body: (_ coreIdle: Bool) throws -> T) rethrows -> T {
        let running = lock.withLock { rankingNow += 1; return rankingNow }
        defer { lock.withLock { rankingNow -= 1 } }
        return try body(running < cores)
    }

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

    /// Whether the index holds a conversation at `generation` (read once per generation).
    func holdsConversations(generation: Int64, read: () throws -> Bool) rethrows -> Bool {
        if let known = lock.withLock({ filtersGeneration == generation ? conversations : nil }) { return known }
        let holds = try read()
        lock.withLock {
            forget(unless: generation)
            conversations = holds
        }
        return holds
    }

    /// The set `key` names in one of the caches, made by `make` unless the cache holds it for
    /// `generation`. A new generation empties both caches; each keeps at most `capacity` sets and,
    /// when full, forgets the half used least recently — so a bot's large set, used by every
    /// request, stays while 10,000 users' memory filters come and go.
    func cached<Key: Hashable>(_ cache: ReferenceWritableKeyPath<SearchState, [Key: CachedIDs]>, _ key: Key, generation: Int64,
                               make: () throws -> Set<Int64>) rethrows -> Set<Int64> {
        try cached(cache, key, generation: generation, at: nil) { (try make(), nil) }
    }

    /// The same, for a set that holds only until a time (`make` says until when; nil: for the
    /// generation): a lookup at `time` at or past it makes the set again.
    func cached<Key: Hashable>(_ cache: ReferenceWritableKeyPath<SearchState, [Key: CachedIDs]>, _ key: Key, generation: Int64,
                               at time: Date?, make: () throws -> (ids: Set<Int64>, until: Date?)) rethrows -> Set<Int64> {
        let found = lock.withLock { () -> Set<Int64>? in
            guard filtersGeneration == generation, let entry = self[keyPath: cache][key] else { return nil }
            if let until = entry.until, let time, time >= until { return nil }
            clock += 1
            self[keyPath: cache][key]!.used = clock
            return entry.ids
        }
        if let found { return found }
        let made = try make()
        lock.withLock {
            forget(unless: generation)
            if self[keyPath: cache].count >= Self.capacity {
                let oldest = self[keyPath: cache].sorted { $0.value.used < $1.value.used }.prefix(Self.capacity / 2)
                for (key, _) in oldest { self[keyPath: cache][key] = nil }
            }
            clock += 1
            self[keyPath: cache][key] = CachedIDs(ids: made.ids, used: clock, until: made.until)
        }
        return made.ids
    }

    /// Sets each cache keeps at most.
    static let capacity = 256

    /// Empties the caches when they reflect another generation than `generation` (under `lock`).
    private func forget(unless generation: Int64) {
        guard filtersGeneration != generation else { return }
        filters = [:]
        hidden = [:]
        owners = nil
        conversations = nil
        filtersGeneration = generation
    }
}

/// A cached filter result and when it was last used.
struct CachedIDs {
    var ids: Set<Int64>
    var used: UInt64
    /// The time from which the set no longer holds (memories that start, stop or expire); nil:
    /// it holds for its generation.
    var until: Date? = nil
}

/// The parts of a query that decide which snippets pass its filters.
struct FilterKey: Hashable {
    var tags: [Tag]
    var anyTags: [Tag]
    var kinds: Set<SourceKind>
    var scopes: [MemoryScope]
    var selectors: [SourceSelector]
    var includeSuperseded: Bool
    var memoriesAsOf: Date?
    var memoriesDuring: TimeWindow?
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
        memoriesAsOf = query.memoriesAsOf
        memoriesDuring = query.memoriesDuring
        sourcePrefixes = query.sourcePrefixes
        user = query.user
        everyUser = query.everyUser
    }
}

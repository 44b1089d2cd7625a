public import KBCore

/// Query embeddings kept in memory, so that a text asked again — a chat app resends the same
/// history turns and questions every turn — is embedded once: keyed by the embedder (its id and
/// the precision its queries run in), the role and the text, bounded by bytes (the vectors' and
/// the texts'), the least recently used going first. Counts its hits and misses for `/metrics`.
///
/// ```swift
/// let cache = QueryVectorCache(capacity: 1 << 20)
/// cache.store([0.6, 0.8], for: "what is a transit?", embedder: "all-MiniLM-L6-v2 int8", role: .query)
/// cache.vector(for: "what is a transit?", embedder: "all-MiniLM-L6-v2 int8", role: .query)   // [0.6, 0.8]
/// ```
public final class QueryVectorCache: Sendable {
    public struct Counts: Sendable, Hashable {
        public var hits = 0
        public var misses = 0
        public var entries = 0
        public var bytes = 0
    }

    struct Key: Hashable {
        var embedder: String
        var role: EmbeddingRole
        var text: String
    }

    struct Entry {
        var vector: [Float]
        var bytes: Int
        var used: UInt64
    }

    struct State {
        var entries: [Key: Entry] = [:]
        var counts = Counts()
        var clock: UInt64 = 0
    }

    /// At most this many bytes of vectors and texts are kept.
    public let capacity: Int
    private let state = LockedValue(State())

    /// The default bound: 64 MiB, about 40,000 MiniLM queries of a few words.
    public static let defaultCapacity = 64 << 20

    public init(capacity: Int = QueryVectorCache.defaultCapacity) {
        self.capacity = max(0, capacity)
    }

    /// The vector stored for `text`, counted as a hit; nil (a miss) when there is none.
    public func vector(for text: String, embedder: String, role: EmbeddingRole) -> [Float]? {
        state.withLock { state in
            let key = Key(embedder: embedder, role: role, text: text)
            state.clock += 1
            guard var entry = state.entries[key] else {
                state.counts.misses += 1
                return nil
            }
            entry.used = state.clock
            state.entries[key] = entry
            state.counts.hits += 1
            return entry.vector
        }
    }

    /// Keeps `vector` for `text`, letting the least recently used go when past the capacity.
    public func store(_ vector: [Float], for text: String, embedder: String, role: EmbeddingRole) {
        let bytes = vector.count * MemoryLayout<Float>.size + text.utf8.count + embedder.utf8.count + 64
        guard bytes <= capacity else { return }
        state.withLock { state in
            let key = Key(embedder: embedder, role: role, text: text)
            state.clock += 1
            if let old = state.entries[key] { state.counts.bytes -= old.bytes }
            state.entries[key] = Entry(vector: vector, bytes: bytes, used: state.clock)
            state.counts.bytes += bytes
            if state.counts.bytes > capacity {
                // Down to three quarters at once, so that a full cache does not sort on every store.
                var byAge = state.entries.map { ($0.key, $0.value.used, $0.value.bytes) }
                byAge.sort { $0.1 < $1.1 }
                for (old, _, size) in byAge where state.counts.bytes > capacity * 3 / 4 && old != key {
                    state.entries[old] = nil
                    state.counts.bytes -= size
                }
            }
            state.counts.entries = state.entries.count
        }
    }

    public var counts: Counts { state.withLock { $0.counts } }
}

import Foundation
import KBCore
import Testing
@testable import KBEmbed

@Suite struct QueryVectorCacheTests {
    @Test func aTextAskedAgainIsAHitAndOtherEmbeddersOrRolesAreNot() {
        let cache = QueryVectorCache(capacity: 1 << 20)
        #expect(cache.vector(for: "saturn return", embedder: "m int8", role: .query) == nil)
        cache.store([0.6, 0.8], for: "saturn return", embedder: "m int8", role: .query)
        #expect(cache.vector(for: "saturn return", embedder: "m int8", role: .query) == [0.6, 0.8])
        // Another precision, another model or the passage role is another vector.
        #expect(cache.vector(for: "saturn return", embedder: "m fp32", role: .query) == nil)
        #expect(cache.vector(for: "saturn return", embedder: "other int8", role: .query) == nil)
        #expect(cache.vector(for: "saturn return", embedder: "m int8", role: .passage) == nil)
        #expect(cache.vector(for: "Saturn return", embedder: "m int8", role: .query) == nil)
        let counts = cache.counts
        #expect(counts.hits == 1 && counts.misses == 5 && counts.entries == 1 && counts.bytes > 8)
    }

    @Test func pastItsBytesTheLeastRecentlyUsedGoFirst() {
        // Each entry: 4 floats (16 bytes) + its text + the embedder's name + 64 bytes of overhead.
        let entry = 16 + 2 + 1 + 64
        let cache = QueryVectorCache(capacity: entry * 4)
        for name in ["t0", "t1", "t2", "t3"] { cache.store([1, 2, 3, 4], for: name, embedder: "m", role: .query) }
        #expect(cache.counts.entries == 4 && cache.counts.bytes == entry * 4)
        _ = cache.vector(for: "t0", embedder: "m", role: .query)   // t0 used again: t1 is now the oldest
        cache.store([5, 6, 7, 8], for: "t4", embedder: "m", role: .query)
        // Over the capacity: down to three quarters, the least recently used first.
        #expect(cache.counts.bytes <= entry * 3)
        #expect(cache.vector(for: "t1", embedder: "m", role: .query) == nil)
        #expect(cache.vector(for: "t2", embedder: "m", role: .query) == nil)
        #expect(cache.vector(for: "t0", embedder: "m", role: .query) == [1, 2, 3, 4])
        #expect(cache.vector(for: "t4", embedder: "m", role: .query) == [5, 6, 7, 8])
    }

    @Test func aCacheOfNoBytesKeepsNothing() {
        let cache = QueryVectorCache(capacity: 0)
        cache.store([1], for: "a", embedder: "m", role: .query)
        #expect(cache.vector(for: "a", embedder: "m", role: .query) == nil)
        #expect(cache.counts.entries == 0 && cache.counts.bytes == 0)
    }
}

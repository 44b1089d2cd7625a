@testable import KBPostgres
import Testing

/// The keyword walk's filter test on PostgreSQL (`IDBitmap`, `IDBitmapCache`): the same answers as
/// the set it stands for, for every id, and a cached bitmap only ever for an equal set.
@Suite struct IDBitmapTests {
    /// Ids from `start`, each present with probability `share` (seeded).
    static func ids(from start: Int64, span: Int64, share: Double, seed: UInt64) -> Set<Int64> {
        var random = XorShift(state: seed | 1)
        return Set((start..<(start + span)).filter { _ in Double(random.next(1_000)) < share * 1_000 })
    }

    @Test func answersAsTheSetDoes() throws {
        for (start, share) in [(Int64(1), 0.9), (700_001, 0.3), (-5_000, 0.05)] {
            let set = Self.ids(from: start, span: 20_000, share: share, seed: UInt64(start.magnitude) + 3)
            let bits = try #require(IDBitmap(set))
            #expect(bits.count == set.count)
            var differing = 0
            for id in (start - 200)...(start + 20_200) where bits.contains(id) != set.contains(id) { differing += 1 }
            #expect(differing == 0)
            for id in [Int64.min, Int64.min + 1, -1, 0, Int64.max - 1, Int64.max] {
                #expect(bits.contains(id) == set.contains(id))
            }
        }
        // One id, and ids at both ends of Int64's range (a span that overflows): no bitmap.
        #expect(try #require(IDBitmap([42])).contains(42))
        #expect(IDBitmap([Int64.min, Int64.max]) == nil)
        #expect(IDBitmap([]) == nil)
    }

    @Test func sparseSetsKeepTheirSet() {
        // 100 ids over ten million: bits would take more room than the set.
        #expect(IDBitmap(Set((0..<100).map { Int64($0) * 100_000 })) == nil)
    }

    @Test func theCacheGivesABitmapOnlyForAnEqualSet() throws {
        let cache = IDBitmapCache(capacity: 2)
        let small = Set(Int64(1)...100)
        #expect(cache.bitmap(small) == nil)   // tested as it is
        let a = Self.ids(from: 1, span: 40_000, share: 0.5, seed: 1)
        var b = a
        // The same count, other ids: a bitmap of its own, not `a`'s.
        let removed = try #require(a.first { a.contains($0 + 1) == false && $0 > 100 })
        b.remove(removed)
        b.insert(40_005)
        #expect(a.count == b.count)
        let bitsA = try #require(cache.bitmap(a)), bitsB = try #require(cache.bitmap(b))
        #expect(bitsA.contains(removed) && !bitsB.contains(removed) && bitsB.contains(40_005) && !bitsA.contains(40_005))
        #expect(cache.bitmap(a) == bitsA && cache.bitmap(Set(a)) == bitsA)
        // A third set drops the least recently used (b); asking again makes it anew, the same.
        let c = Self.ids(from: 90_000, span: 40_000, share: 0.5, seed: 2)
        #expect(try #require(cache.bitmap(c)).contains(try #require(c.first)))
        #expect(cache.bitmap(b) == bitsB)
    }
}

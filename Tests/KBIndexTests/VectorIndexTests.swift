import CKBKernels
import Foundation
import KBCore
import Testing
@testable import KBIndex

/// Random unit vectors from a seed, with some exact duplicates to force ties.
func randomVectors(count: Int, dimension: Int, seed: UInt64) -> [(id: Int64, vector: [Float])] {
    var state = seed
    func next() -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: state >> 11) % 2_000_001) / 1_000_000 - 1
    }
    var result: [(Int64, [Float])] = []
    for i in 0..<count {
        var v = (0..<dimension).map { _ in next() }
        if i % 17 == 5, let earlier = result.last { v = earlier.1 }    // ties
        let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        result.append((Int64(i * 3 + 7), v.map { $0 / norm }))
    }
    return result
}

func bruteForce(_ entries: [(id: Int64, vector: [Float])], _ query: [Float], k: Int, allowed: Set<Int64>?) -> [TopK.Entry] {
    var scored: [TopK.Entry] = []
    for entry in entries where allowed?.contains(entry.id) ?? true {
        var score: Float = 0
        for i in query.indices { score += entry.vector[i] * query[i] }
        scored.append(TopK.Entry(id: entry.id, score: score))
    }
    scored.sort { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
    return Array(scored.prefix(k))
}

@Suite struct VectorIndexTests {
    static let data = randomVectors(count: 600, dimension: 24, seed: 42)

    func index() throws -> VectorIndex {
        let index = VectorIndex(dimension: 24)
        try index.upsert(Self.data)
        return index
    }

    func expectSame(_ got: [TopK.Entry], _ expected: [TopK.Entry], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(got.count == expected.count, sourceLocation: sourceLocation)
        for (g, e) in zip(got, expected) {
            #expect(abs(g.score - e.score) < 1e-5, sourceLocation: sourceLocation)
        }
        // Ids must match except where scores tie within float noise.
        let differing = zip(got, expected).filter { $0.id != $1.id && abs($0.score - $1.score) > 1e-5 }
        #expect(differing.isEmpty, "ranking differs: \(differing.prefix(3))", sourceLocation: sourceLocation)
    }

    @Test(arguments: [1, 5, 10, 50, 599, 600, 1000])
    func topKEqualsBruteForceWithoutFilters(k: Int) throws {
        let index = try index()
        for q in 0..<5 {
            let query = Self.data[q * 37].vector
            expectSame(try index.search(query, k: k), bruteForce(Self.data, query, k: k, allowed: nil))
        }
    }

    @Test(arguments: [0.02, 0.09, 0.25, 0.9])
    func filtersApplyBeforeSelectionOnBothPaths(fraction: Double) throws {
        let index = try index()
        let allowed = Set(Self.data.enumerated().filter { Double($0.offset % 100) < fraction * 100 }.map(\.element.id))
        #expect(VectorIndex.gathers(allowed: allowed.count, of: Self.data.count) == (fraction < 0.1))
        for k in [1, 10, allowed.count, allowed.count + 5] {
            let query = Self.data[11].vector
            let got = try index.search(query, k: k, allowed: allowed)
            #expect(got.count == min(k, allowed.count))
            #expect(got.allSatisfy { allowed.contains($0.id) })
            expectSame(got, bruteForce(Self.data, query, k: k, allowed: allowed))
        }
    }

    @Test func equalScoresAreOrderedBySnippetID() throws {
        let index = VectorIndex(dimension: 2)
        try index.upsert([(9, [1, 0]), (3, [1, 0]), (5, [0, 1]), (4, [1, 0])])
        #expect(try index.search([1, 0], k: 3).map(\.id) == [3, 4, 9])
    }

    @Test func vectorsOfAnotherDimensionAreRefusedAndChangeNothing() throws {
        let index = VectorIndex(dimension: 2)
        try index.upsert([(1, [1, 0])])
        #expect(throws: KBError.self) { try index.upsert([(2, [0, 1]), (3, [1, 0, 0])]) }
        #expect(index.count == 1)
        #expect(throws: KBError.self) { try index.search([1, 0, 0], k: 1) }
        #expect(throws: KBError.self) { try index.search(batch: [[1, 0], [1]], k: 1) }
        #expect(throws: KBError.self) { try index.reset(ids: [1, 2], matrix: [1, 0, 0]) }
    }

    @Test func updatesAndRemovalsKeepTheMatrixExact() throws {
        let index = try index()
        let removed = Self.data.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.id)
        index.remove(removed)
        var remaining = Self.data.filter { !removed.contains($0.id) }
        let replacement = randomVectors(count: 20, dimension: 24, seed: 7)
        let updated = remaining.prefix(20).enumerated().map { (id: $0.element.id, vector: replacement[$0.offset].vector) }
        try index.upsert(updated)
        for u in updated { remaining[remaining.firstIndex { $0.id == u.id }!] = u }
        #expect(index.count == remaining.count)
        let query = replacement[3].vector
        expectSame(try index.search(query, k: 25), bruteForce(remaining, query, k: 25, allowed: nil))
        #expect(index.vector(for: removed[0]) == nil)
        #expect(index.vector(for: updated[0].id) == updated[0].vector)
    }

    @Test func aBatchOfQueriesRanksLikeSingleQueries() throws {
        let index = try index()
        let queries = (0..<7).map { Self.data[$0 * 50 + 1].vector }
        let batch = try index.search(batch: queries, k: 12)
        for (query, result) in zip(queries, batch) { expectSame(result, try index.search(query, k: 12)) }
    }
}

@Suite struct TopKTests {
    @Test func keepsTheBestKOfRandomScoresWithTies() {
        var state: UInt64 = 9
        var entries: [TopK.Entry] = []
        for i in 0..<2000 {
            state = state &* 6364136223846793005 &+ 1
            entries.append(TopK.Entry(id: Int64(i), score: Float(state >> 58)))   // many ties
        }
        for k in [0, 1, 7, 100, 2000, 3000] {
            var top = TopK(k: k)
            for e in entries { top.offer(id: e.id, score: e.score) }
            let expected = entries.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }.prefix(k)
            #expect(top.sorted() == Array(expected))
        }
    }
}

@Suite struct QuantizedScanTests {
    static let data = randomVectors(count: 20_000, dimension: 384, seed: 3)

    @Test func recallAt10AgainstTheExactScanIsAtLeast099WithExactScores() throws {
        let index = VectorIndex(dimension: 384)
        try index.upsert(Self.data)
        index.enableQuantization()
        var found = 0
        let queries = randomVectors(count: 50, dimension: 384, seed: 99).map(\.vector)
        for query in queries {
            let exact = try index.search(query, k: 10)
            let approximate = try index.search(query, k: 10, quantized: true)
            found += Set(exact.map(\.id)).intersection(approximate.map(\.id)).count
            for hit in approximate {
                let vector = index.vector(for: hit.id)!
                let score = zip(vector, query).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                #expect(abs(score - hit.score) < 1e-4)
            }
        }
        let recall = Double(found) / Double(10 * queries.count)
        #expect(recall >= 0.99, "recall@10 \(recall)")
    }

    @Test func filtersHoldOnTheQuantizedPath() throws {
        let index = VectorIndex(dimension: 384)
        try index.upsert(Self.data)
        index.enableQuantization()
        let allowed = Set(Self.data.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.id))
        #expect(!VectorIndex.gathers(allowed: allowed.count, of: Self.data.count))
        let hits = try index.search(Self.data[5].vector, k: 20, allowed: allowed, quantized: true)
        #expect(hits.count == 20 && hits.allSatisfy { allowed.contains($0.id) })
    }

    @Test func theInt8CopyFollowsUpdatesAndRemovals() throws {
        let small = Array(Self.data.prefix(90))
        let index = VectorIndex(dimension: 384)
        try index.upsert(small)
        index.enableQuantization()
        index.remove(small.prefix(30).map(\.id))
        let replacement = randomVectors(count: 10, dimension: 384, seed: 5)
        try index.upsert(zip(small[30..<40], replacement).map { (id: $0.id, vector: $1.vector) })
        try index.upsert([(id: 999_999, vector: replacement[9].vector)])
        // With fewer rows than the rescoring depth, the quantized search must find the exact top 10
        // (ids 124 and 999999 share a vector, so only their order within the tie may differ).
        for q in replacement.prefix(5) {
            let quantized = try index.search(q.vector, k: 10, quantized: true)
            let exact = try index.search(q.vector, k: 10)
            #expect(Set(quantized.map(\.id)) == Set(exact.map(\.id)))
            for (a, b) in zip(quantized, exact) { #expect(abs(a.score - b.score) < 1e-5) }
        }
    }

    @Test func concurrentQuantizedSearchesSharingScansGetTheirOwnResults() throws {
        let index = VectorIndex(dimension: 384)
        try index.upsert(Self.data)
        index.enableQuantization()
        let queries = randomVectors(count: 24, dimension: 384, seed: 17).map(\.vector)
        let filters: [Set<Int64>?] = (0..<24).map { j in
            j % 3 == 0 ? nil : Set(Self.data.enumerated().filter { $0.offset % (j % 3 + 1) == 0 }.map(\.element.id))
        }
        let alone = try zip(queries, filters).map { try index.search($0, k: $1 == nil ? 10 : 15, allowed: $1, quantized: true) }
        let together = LockedResults(count: queries.count)
        DispatchQueue.concurrentPerform(iterations: queries.count) { j in
            together.set(j, try? index.search(queries[j], k: filters[j] == nil ? 10 : 15, allowed: filters[j], quantized: true))
        }
        for j in queries.indices {
            #expect(together.get(j) == alone[j], "query \(j)")
        }
    }

    @Test func int8DotProductsEqualTheirSums() {
        // The kernel this CPU runs (VNNI for dimensions that are multiples of 64, else AVX2 or
        // plain C) must give the exact integer sums, for row counts that are not multiples of
        // its unrolling and for the extreme values.
        var generator = SystemRandomNumberGenerator()
        for (n, d) in [(1, 64), (7, 384), (33, 128), (5, 100)] {
            var rows = (0..<(n * d)).map { _ in Int8.random(in: -127...127, using: &generator) }
            let query = (0..<d).map { _ in Int8.random(in: -127...127, using: &generator) }
            rows[0] = -128
            var out = [Int32](repeating: 0, count: n)
            kb_i8_dot_rows(rows, n, d, query, &out)
            var expected = [Int32](repeating: 0, count: n)
            for i in 0..<n {
                for j in 0..<d { expected[i] += Int32(rows[i * d + j]) * Int32(query[j]) }
            }
            #expect(out == expected, "n \(n), d \(d)")
        }
    }
}

/// Results written by concurrent callers.
final class LockedResults: @unchecked Sendable {
    // @unchecked: `values` is guarded by `lock`.
    private let lock = NSLock()
    private var values: [[TopK.Entry]?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: [TopK.Entry]?) { lock.withLock { values[index] = value } }
    func get(_ index: Int) -> [TopK.Entry]? { lock.withLock { values[index] } }
}

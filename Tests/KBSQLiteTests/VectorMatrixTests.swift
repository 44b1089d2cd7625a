import CKBKernels
import Foundation
import KBCore
import Testing
@testable import KBSQLite

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

@Suite struct VectorMatrixTests {
    static let data = randomVectors(count: 600, dimension: 24, seed: 42)

    func index() throws -> VectorMatrix {
        let index = VectorMatrix(dimension: 24)
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
        #expect(VectorMatrix.gathers(allowed: allowed.count, of: Self.data.count) == (fraction < 0.1))
        for k in [1, 10, allowed.count, allowed.count + 5] {
            let query = Self.data[11].vector
            let got = try index.search(query, k: k, allowed: allowed)
            #expect(got.count == min(k, allowed.count))
            #expect(got.allSatisfy { allowed.contains($0.id) })
            expectSame(got, bruteForce(Self.data, query, k: k, allowed: allowed))
        }
    }

    @Test func equalScoresAreOrderedBySnippetID() throws {
        let index = VectorMatrix(dimension: 2)
        try index.upsert([(9, [1, 0]), (3, [1, 0]), (5, [0, 1]), (4, [1, 0])])
        #expect(try index.search([1, 0], k: 3).map(\.id) == [3, 4, 9])
    }

    @Test func vectorsOfAnotherDimensionAreRefusedAndChangeNothing() throws {
        let index = VectorMatrix(dimension: 2)
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
        try index.remove(removed)
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

/// Unit vectors in groups around `clusters` random centres, as embeddings of related texts are
/// (each a centre plus 0.7 of a random unit vector, normalised).
func clusteredVectors(count: Int, dimension: Int, clusters: Int, seed: UInt64, firstID: Int64 = 7) -> [(id: Int64, vector: [Float])] {
    let centres = randomVectors(count: clusters, dimension: dimension, seed: 1234).map(\.vector)
    let noise = randomVectors(count: count, dimension: dimension, seed: seed)
    var state = seed
    return noise.enumerated().map { i, entry in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let centre = centres[Int(state >> 33) % clusters]
        let v = zip(centre, entry.vector).map { $0 + 0.7 * $1 }
        let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return (firstID + Int64(i), v.map { $0 / norm })
    }
}

@Suite struct QuantizedScanTests {
    static let data = randomVectors(count: 20_000, dimension: 384, seed: 3)

    @Test func recallAt10AgainstTheExactScanIsAtLeast099WithExactScores() throws {
        let index = VectorMatrix(dimension: 384)
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
        let index = VectorMatrix(dimension: 384)
        try index.upsert(Self.data)
        index.enableQuantization()
        let allowed = Set(Self.data.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.id))
        #expect(!VectorMatrix.gathers(allowed: allowed.count, of: Self.data.count))
        let hits = try index.search(Self.data[5].vector, k: 20, allowed: allowed, quantized: true)
        #expect(hits.count == 20 && hits.allSatisfy { allowed.contains($0.id) })
    }

    @Test func theInt8CopyFollowsUpdatesAndRemovals() throws {
        let small = Array(Self.data.prefix(90))
        let index = VectorMatrix(dimension: 384)
        try index.upsert(small)
        index.enableQuantization()
        try index.remove(small.prefix(30).map(\.id))
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
        let index = VectorMatrix(dimension: 384)
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

/// Queries as far from `rows` as a question is from its passage: each row plus a random vector
/// 1.2 times its length (cosine ≈ 0.64), normalised.
func nearbyQueries(_ rows: [[Float]], seed: UInt64, noise scale: Float = 1.2) -> [[Float]] {
    let noise = randomVectors(count: rows.count, dimension: rows.first?.count ?? 0, seed: seed).map(\.vector)
    return zip(rows, noise).map { row, noise in
        let v = zip(row, noise).map { $0 + scale * $1 }
        let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return v.map { $0 / norm }
    }
}

@Suite struct SignStageTests {
    static let data = clusteredVectors(count: 20_000, dimension: 384, clusters: 2_000, seed: 3)

    static func index() throws -> VectorMatrix {
        let index = VectorMatrix(dimension: 384)
        try index.upsert(data)
        index.enableQuantization()
        return index
    }

    /// Recall@10 of the quantized search against the exact one, checking that every score is exact.
    static func recall(_ index: VectorMatrix, _ queries: [[Float]], k: Int = 10) throws -> Double {
        var found = 0
        for query in queries {
            let exact = try index.search(query, k: k)
            let approximate = try index.search(query, k: k, quantized: true)
            found += Set(exact.map(\.id)).intersection(approximate.map(\.id)).count
            for hit in approximate {
                let score = zip(index.vector(for: hit.id)!, query).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                #expect(abs(score - hit.score) < 1e-4)
            }
        }
        return Double(found) / Double(k * queries.count)
    }

    /// Recall@10, @24 and @50 (a hybrid search's candidates) of at least 0.99, with nine searches
    /// in ten through the sign stage; its counts.
    static func expectRecallThroughTheSignStage(_ index: VectorMatrix, _ queries: [[Float]]) throws -> SignStage.Counts {
        for k in [10, 24, 50] {
            let recall = try Self.recall(index, queries, k: k)
            #expect(recall >= 0.99, "recall@\(k) \(recall)")
        }
        let counts = index.signStageCounts
        #expect(counts.searches >= queries.count * 3 * 9 / 10, "\(counts)")
        return counts
    }

    @Test func groupedVectorsAreSearchedThroughTheSignStageWithRecallAtLeast099() throws {
        let index = try Self.index()
        let depth = try #require(index.signStageDepth)
        #expect(depth < Self.data.count / 4)
        let queries = nearbyQueries(stride(from: 11, to: Self.data.count, by: 400).map { Self.data[$0].vector }, seed: 77)
        let counts = try Self.expectRecallThroughTheSignStage(index, queries)
        #expect(counts.rows / max(1, counts.searches) < Self.data.count / 4)
    }

    /// Questions that share less with their passages (cosine ≈ 0.45) than the first tier's take
    /// the second, deeper one — not the scan of every row.
    @Test func fartherQueriesTakeTheDeeperTierWithRecallAtLeast099() throws {
        let index = try Self.index()
        let depths = index.signStageDepths
        #expect(depths.count == 2 && depths[1] > depths[0] && depths[1] <= Self.data.count / 4, "\(depths)")
        let queries = nearbyQueries(stride(from: 23, to: Self.data.count, by: 400).map { Self.data[$0].vector }, seed: 78, noise: 2.0)
        let counts = try Self.expectRecallThroughTheSignStage(index, queries)
        #expect(counts.rows / max(1, counts.searches) > depths[0], "\(counts)")
    }

    @Test func queriesFarFromEveryRowGetTheInt8ScanOfEveryRow() throws {
        let index = try Self.index()
        #expect(index.signStageDepth != nil)
        let far = randomVectors(count: 20, dimension: 384, seed: 4242).map(\.vector)
        let recall = try Self.recall(index, far)
        #expect(recall >= 0.99, "recall@10 \(recall)")
        #expect(index.signStageCounts.scanned == far.count)
        #expect(index.signStageCounts.searches == 0)
    }

    /// A filter that leaves out many rows is applied before the int8 products, one that leaves out
    /// few only to the rows good enough to be kept: both hold, with recall.
    @Test(arguments: [3, -10])
    func filtersHoldOnTheSignStage(every: Int) throws {
        try Self.expectFilteredRecall(try Self.index(), Self.data, every: every)
    }

    /// Quantized searches of `index` (holding `data`) allowed every `every`-th row (all but every
    /// `-every`-th for a negative one): only allowed rows, recall@10 at least 0.99 against the
    /// exact filtered top 10, through the sign stage.
    static func expectFilteredRecall(_ index: VectorMatrix, _ data: [(id: Int64, vector: [Float])], every: Int) throws {
        let allowed = Set(data.enumerated().filter { every > 0 ? $0.offset % every == 0 : $0.offset % -every != 0 }.map(\.element.id))
        let queries = nearbyQueries(stride(from: 0, to: data.count, by: 1000).map { data[$0].vector }, seed: 5)
        var found = 0
        for query in queries {
            let hits = try index.search(query, k: 10, allowed: allowed, quantized: true)
            #expect(hits.count == 10 && hits.allSatisfy { allowed.contains($0.id) })
            let exact = bruteForce(data, query, k: 10, allowed: allowed)
            found += Set(exact.map(\.id)).intersection(hits.map(\.id)).count
        }
        #expect(Double(found) / Double(10 * queries.count) >= 0.99)
        #expect(index.signStageCounts.searches > 0)
    }

    @Test func theSignCopyFollowsUpdatesAndRemovals() throws {
        let index = try Self.index()
        _ = index.signStageDepth
        try index.remove(Self.data.prefix(3_000).map(\.id))
        // New rows near existing ones, and replaced vectors: both must be found by nearby queries.
        let moved = clusteredVectors(count: 200, dimension: 384, clusters: 2_000, seed: 91, firstID: 1_000_000)
        try index.upsert(moved)
        try index.upsert(zip(Self.data[5_000..<5_200], moved).map { (id: $0.id, vector: $1.vector) })
        let queries = nearbyQueries(moved.prefix(40).map(\.vector), seed: 8)
        let recall = try Self.recall(index, queries)
        #expect(recall >= 0.99, "recall@10 \(recall)")
        for id in Self.data.prefix(3_000).map(\.id) where id % 97 == 0 { #expect(index.vector(for: id) == nil) }
        #expect(index.signStageCounts.searches > 0)
    }

    @Test func uniformlySpreadVectorsKeepTheInt8Scan() throws {
        let index = VectorMatrix(dimension: 384)
        try index.upsert(randomVectors(count: 20_000, dimension: 384, seed: 3))
        index.enableQuantization()
        #expect(index.signStageDepth == nil)
        let small = VectorMatrix(dimension: 384)
        try small.upsert(Array(Self.data.prefix(VectorMatrix.signStageMinimumRows - 1)))
        small.enableQuantization()
        #expect(small.signStageDepth == nil)
    }

    @Test func signScoresEqualTheirSums() {
        var generator = SystemRandomNumberGenerator()
        for (n, words) in [(1, 1), (3, 6), (8, 6), (37, 6), (9, 2), (16, 8), (6, 9), (23, 12)] {
            // Blocks of 8 rows, word by word; the last block's missing rows are zeros.
            let blocks = (n + 7) / 8
            var codes = [UInt64](repeating: 0, count: blocks * 8 * words)
            for r in 0..<n { for w in 0..<words { codes[(r / 8) * 8 * words + w * 8 + r % 8] = UInt64.random(in: .min ... .max, using: &generator) } }
            for bits in [1, 2, 4, 8] {
                let top = (1 << bits) - 1
                let levels = (0..<(words * 64)).map { _ in Int.random(in: 0...top, using: &generator) }
                var planes = [UInt64](repeating: 0, count: bits * words)
                for (j, level) in levels.enumerated() {
                    for p in 0..<bits where level >> p & 1 == 1 { planes[p * words + j / 64] |= 1 << UInt64(j % 64) }
                }
                var out = [Int32](repeating: 0, count: n)
                let best = kb_sign_plane_rows(codes, n, words, planes, bits, &out)
                let expected = (0..<n).map { r in
                    (0..<(words * 64)).reduce(Int32(0)) { sum, j in
                        codes[(r / 8) * 8 * words + (j / 64) * 8 + r % 8] >> UInt64(j % 64) & 1 == 1 ? sum + Int32(2 * levels[j] - top) : sum
                    }
                }
                #expect(out == expected, "n \(n), words \(words), bits \(bits)")
                #expect(best == expected.max())
            }
        }
    }

    @Test func signQueriesTakeFourLevels() {
        let query: [Float] = [-1, -0.6, -0.1, 0.1, 0.4, 1, 0] + Array(repeating: 0.2, count: 60)
        let signQuery = SignQuery(query, words: 2, bits: 2)
        let levels = query.indices.map { j in Int(signQuery.planes[j / 64] >> UInt64(j % 64) & 1) + 2 * Int(signQuery.planes[2 + j / 64] >> UInt64(j % 64) & 1) }
        #expect(Array(levels.prefix(7)) == [0, 1, 1, 2, 2, 3, 2])
        #expect(signQuery.sum == -3 - 1 - 1 + 1 + 1 + 3 + 1 + 60)
        #expect(signQuery.magnitude == 3 + 1 + 1 + 1 + 1 + 3 + 1 + 60)
        // A row whose signs are the query's own comes as close as a row can; one with none of them set, halfway.
        #expect(signQuery.closeness(best: Int32(1 + 1 + 3 + 1 + 60)) == 1)
        #expect(signQuery.closeness(best: 0) == Float(-signQuery.sum) / Float(signQuery.magnitude))
    }

    @Test(arguments: [0, 1, 7, 500, 999, 1000, 1300])
    func topRowsAreTheLargestScores(r: Int) {
        var generator = SystemRandomNumberGenerator()
        for range in [Int32(3), 100_000] {   // many ties, and a range the histogram narrows in two steps
            let scores = (0..<1000).map { _ in Int32.random(in: -range...range, using: &generator) }
            var rows = [UInt32](repeating: 0, count: max(r, 1))
            let count = kb_top_rows(scores, scores.count, r, &rows)
            #expect(count == min(r, scores.count))
            let picked = Set(rows.prefix(count).map(Int.init))
            #expect(picked.count == count)
            let lowestPicked = picked.map { scores[$0] }.min() ?? .max
            let highestLeft = scores.indices.filter { !picked.contains($0) }.map { scores[$0] }.max() ?? .min
            #expect(lowestPicked >= highestLeft)
        }
    }

    /// Many rows and few wanted take the sampled threshold; the rows are those of the exact
    /// selection: every score above the r-th largest, then the first rows of that score.
    @Test(arguments: [1, 7, 640, 2_500])
    func topRowsOfManyAreTheExactSelection(r: Int) {
        var generator = SystemRandomNumberGenerator()
        let n = 40_000
        for range in [Int32(2), 50_000, 1 << 30] {
            var scores = (0..<n).map { _ in Int32.random(in: -range...range, using: &generator) }
            if range == 2 { scores[n - 1] = 3 }   // one best row, at the end
            var rows = [UInt32](repeating: 0, count: r)
            let count = kb_top_rows(scores, n, r, &rows)
            let cut = scores.sorted(by: >)[r - 1]
            let above = scores.indices.filter { scores[$0] > cut }
            let expected = above + scores.indices.filter { scores[$0] == cut }.prefix(r - above.count)
            #expect(count == r)
            #expect(rows.prefix(count).map(Int.init).sorted() == expected.sorted(), "range \(range)")
        }
    }

    @Test func rowsAtLeastAThresholdInOrderUpToTheirCapacity() {
        let scores = (0..<1_000).map { Int32(($0 * 7919) % 1_000) }
        let expected = scores.indices.filter { scores[$0] >= 900 }.map(UInt32.init)
        var rows = [UInt32](repeating: 0, count: 200)
        #expect(kb_rows_at_least(scores, scores.count, 900, &rows, 200) == expected.count)
        #expect(Array(rows.prefix(expected.count)) == expected)
        #expect(kb_rows_at_least(scores, scores.count, 900, &rows, expected.count - 1) == expected.count)
    }
}

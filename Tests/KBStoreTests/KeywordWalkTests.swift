import Foundation
@testable import KBPostgres
import Testing

/// The PostgreSQL keyword ranking's pure parts: block and directory bytes, block bounds, and the
/// walk over blocks held in memory against scoring every posting (no server needed).
@Suite struct KeywordWalkTests {
    /// A reproducible random source (xorshift).
    @Test func blocksAndDirectoriesReadBackAsWritten() throws {
        var random = XorShift(state: 7)
        var block = PostingBlock()
        var id: Int64 = Int64(random.next(1_000_000))
        for _ in 0..<300 {
            id += Int64(1 + random.next(5_000))
            block.append(id, UInt32(2 + random.next(40)), UInt32(100 + random.next(60_000)))
        }
        let bytes = KeywordCoding.encode(block)
        #expect(try bytes.withUnsafeBytes { try KeywordCoding.decodeBlock($0) } == block)
        let (directory, blocks) = KeywordDirectory.build(block, weighing: KeywordWeighing(n: 1_000, average: 300), version: 9)
        #expect(blocks.count == 3 && blocks.map(\.count) == [128, 128, 44])
        let encoded = KeywordCoding.encode(directory)
        #expect(try encoded.withUnsafeBytes { try KeywordCoding.decodeDirectory($0) } == directory)
        // A cut block is an error, not a wrong answer.
        #expect(throws: (any Error).self) { try Array(bytes.dropLast(3)).withUnsafeBytes { try KeywordCoding.decodeBlock($0) } }
    }

    /// A block's bound is at least the share of each of its postings, whatever the average length
    /// becomes after it was written (its frontier holds at most four points).
    @Test(arguments: [50.0, 300.0, 5_000.0])
    func aBlockBoundsEveryShareAtAnyAverage(average: Double) {
        var random = XorShift(state: UInt64(average))
        for _ in 0..<50 {
            var block = PostingBlock()
            for i in 0..<128 { block.append(Int64(i), UInt32(2 + random.next(30)), UInt32(20 + random.next(4_000))) }
            let entry = BlockEntry(block, version: 1)
            #expect(entry.frontier.count <= BlockEntry.frontierLimit)
            let weighing = KeywordWeighing(n: 10_000, average: average)
            let best = entry.bestShare(weighing)
            #expect(block.ids.indices.allSatisfy { weighing.share(halves: block.frequencies[$0], block.lengths[$0]) <= best })
        }
    }

    /// Documents of a small vocabulary with skewed frequencies (each document's other words, not
    /// asked for, as term 1,000).
    static func corpus(documents: Int, seed: UInt64) -> [[(term: Int, frequency: UInt32)]] {
        var random = XorShift(state: seed)
        return (0..<documents).map { _ in
            var terms: [Int: UInt32] = [1_000: UInt32(2 * random.next(400))]
            for _ in 0..<(3 + random.next(25)) {
                // Term 0 in nearly every document, then ever rarer ones.
                let term = min(random.next(2) == 0 ? 0 : random.next(1 + random.next(40)), 39)
                terms[term, default: 0] += UInt32([2, 3, 4][random.next(3)])
            }
            return terms.map { ($0.key, $0.value) }
        }
    }

    /// The corpus's postings under ascending ids `gap` apart (drawn with `seed`), and its weighing.
    static func index(_ corpus: [[(term: Int, frequency: UInt32)]], seed: UInt64, gap: ClosedRange<Int>)
        -> (lists: [Int: PostingBlock], weighing: KeywordWeighing) {
        var random = XorShift(state: seed)
        var ids: [Int64] = []
        var id: Int64 = 1
        for _ in corpus.indices { id += Int64(gap.lowerBound + random.next(gap.count)); ids.append(id) }
        return (postings(corpus, ids: ids), KeywordWeighing(n: Double(corpus.count), average: 60))
    }

    /// Postings of each term, with the documents' ids and lengths.
    static func postings(_ corpus: [[(term: Int, frequency: UInt32)]], ids: [Int64]) -> [Int: PostingBlock] {
        var lists: [Int: PostingBlock] = [:]
        for (document, terms) in corpus.enumerated() {
            let length = terms.reduce(UInt32(0)) { $0 + $1.frequency } + 2
            for (term, frequency) in terms.sorted(by: { $0.term < $1.term }) { lists[term, default: PostingBlock()].append(ids[document], frequency, length) }
        }
        return lists
    }

    /// Every snippet's score, summed term by term in the query's order, best first, ties to the
    /// smaller id: the ranking any walk must give.
    static func bruteForce(_ query: [Int], _ lists: [Int: PostingBlock], weighing: KeywordWeighing, limit: Int,
                           accept: (Int64) -> Bool) -> [(id: Int64, score: Double)] {
        var shares: [Int64: [Double]] = [:]
        for (slot, term) in query.enumerated() {
            guard let list = lists[term] else { continue }
            let idf = weighing.idf(Double(list.count))
            for i in list.ids.indices {
                shares[list.ids[i], default: Array(repeating: 0, count: query.count)][slot] = idf * weighing.share(halves: list.frequencies[i], list.lengths[i])
            }
        }
        var top = TopK(limit: limit)
        for (id, parts) in shares where accept(id) { top.offer(id, parts.reduce(0, +)) }
        return top.entries
    }

    /// Walks the query over blocks built from `lists`, reading them from memory.
    static func walk(_ query: [Int], _ lists: [Int: PostingBlock], weighing: KeywordWeighing, limit: Int, pruning: Bool,
                     postingsPerLookup: Int = KeywordWalk.defaultPostingsPerLookup,
                     accept: (Int64) -> Bool) throws -> (ranking: [(id: Int64, score: Double)], counts: KeywordWalk.Counts) {
        let present = query.filter { lists[$0] != nil }
        var built: [Int: [PostingBlock]] = [:]
        var terms: [(idf: Double, directory: KeywordDirectory?)] = []
        for term in present {
            let (directory, blocks) = KeywordDirectory.build(lists[term]!, weighing: weighing, version: 1)
            built[term] = blocks
            terms.append((weighing.idf(Double(lists[term]!.count)), directory))
        }
        var walk = KeywordWalk(terms: terms, limit: limit, weighing: weighing)
        walk.postingsPerLookup = postingsPerLookup
        let lists = walk.lists
        let ranking = try walk.rank(tail: [], accept: accept, pruning: pruning) { wanted in
            wanted.map { built[present[lists[$0.list].slot]]![lists[$0.list].offset + $0.entry] }
        }
        return (ranking, walk.counts)
    }

    @Test(arguments: [1, 10, 50])
    func theWalkGivesEveryPostingsRankingAndReadsLess(limit: Int) throws {
        let (lists, weighing) = Self.index(Self.corpus(documents: 9_000, seed: UInt64(limit)), seed: 99, gap: 1...3)
        var readLess = 0, lookedUp = 0
        for query in [[0], [0, 1], [5, 0, 17], [39], [2, 3, 4, 5, 6, 7], [0, 38, 1, 37], [12, 99]] {
            let expected = Self.bruteForce(query, lists, weighing: weighing, limit: limit) { _ in true }
            let whole = try Self.walk(query, lists, weighing: weighing, limit: limit, pruning: false) { _ in true }
            let pruned = try Self.walk(query, lists, weighing: weighing, limit: limit, pruning: true) { _ in true }
            for ranking in [whole.ranking, pruned.ranking] {
                #expect(ranking.map(\.id) == expected.map(\.id), "query \(query)")
                #expect(ranking.map(\.score) == expected.map(\.score), "query \(query)")
            }
            if pruned.counts.postings < whole.counts.postings { readLess += 1 }
            lookedUp += pruned.counts.lookups
        }
        // Some snippets were scored whole by looking them up in blocks read after the first pass.
        #expect(lookedUp > 0)
        // A word in nearly every document costs its best postings, not all of them.
        let common = try Self.walk([0], lists, weighing: weighing, limit: limit, pruning: true) { _ in true }
        #expect(common.counts.postings <= KeywordDirectory.tierSize + 16 * KeywordDirectory.blockSize)
        #expect(common.counts.postings < lists[0]!.count / 2)
        #expect(readLess >= 2)
    }

    /// When step 2 finds that too many snippets would stay open for step 3's lookups (tens of
    /// thousands on a large index, for a question of many words none rare enough to set a floor),
    /// it gives up, reads every block and scores in one pass instead: the same ranking, to the bit.
    /// Here the cost of a lookup is set so high that any walk left with open snippets gives up.
    @Test(arguments: [10, 50])
    func aWalkThatGivesUpItsLookupsStaysExact(limit: Int) throws {
        // Ids spread over many of step 2's windows, as a large index's are.
        let (lists, weighing) = Self.index(Self.corpus(documents: 9_000, seed: 3), seed: 5, gap: 20...59)
        var gaveUp = 0, lookedUp = 0
        for query in [[0], [0, 1], [5, 0, 17], [39], [2, 3, 4, 5, 6, 7], [0, 38, 1, 37], [12, 99]] {
            let expected = Self.bruteForce(query, lists, weighing: weighing, limit: limit) { _ in true }
            for postingsPerLookup in [KeywordWalk.defaultPostingsPerLookup, 1_000_000_000] {
                let pruned = try Self.walk(query, lists, weighing: weighing, limit: limit, pruning: true,
                                           postingsPerLookup: postingsPerLookup) { _ in true }
                #expect(pruned.ranking.map(\.id) == expected.map(\.id), "query \(query)")
                #expect(pruned.ranking.map(\.score) == expected.map(\.score), "query \(query)")
                if pruned.counts.gaveUp {
                    gaveUp += 1
                    #expect(pruned.counts.passes == 2 && pruned.counts.lookups == 0, "query \(query)")
                } else {
                    lookedUp += pruned.counts.lookups
                }
            }
        }
        #expect(gaveUp > 0)
        #expect(lookedUp > 0)
    }

    /// Filters are applied while walking: the best `limit` of the snippets allowed, never fewer
    /// because better ones were left out.
    @Test func aFilterNeverShrinksTheLimit() throws {
        let corpus = Self.corpus(documents: 6_000, seed: 3)
        let ids = (0..<Int64(corpus.count)).map { $0 * 2 + 5 }
        let lists = Self.postings(corpus, ids: ids)
        let weighing = KeywordWeighing(n: Double(corpus.count), average: 60)
        let allowed = Set(ids.filter { $0 % 7 == 3 })
        for query in [[0], [0, 4], [9, 10, 11]] {
            let expected = Self.bruteForce(query, lists, weighing: weighing, limit: 20) { allowed.contains($0) }
            let pruned = try Self.walk(query, lists, weighing: weighing, limit: 20, pruning: true) { allowed.contains($0) }
            #expect(pruned.ranking.map(\.id) == expected.map(\.id) && pruned.ranking.map(\.score) == expected.map(\.score))
            #expect(pruned.ranking.allSatisfy { allowed.contains($0.id) })
        }
    }

    /// Step 3's groups: the best candidates by bound (ties to the smaller id) are moved to the
    /// front, the same set a sort would put there, with ties and repeated bounds.
    @Test func aGroupIsTheBestCandidates() {
        var random = XorShift(state: 11)
        for size in [1, 2, 3, 10, 100, 1_000] {
            let candidates = (0..<size).map { KeywordWalk.Candidate(id: Int64(random.next(1_000_000)) * 1_000 + Int64($0),
                                                                   bound: Double(random.next(40)) / 8) }
            let sorted = candidates.sorted { $0.bound != $1.bound ? $0.bound > $1.bound : $0.id < $1.id }
            for count in Set([1, 2, size / 3, size / 2, size - 1, size]) where count >= 1 && count <= size {
                var selected = candidates
                KeywordWalk.selectBest(count, of: &selected)
                #expect(Set(selected[0..<count].map(\.id)) == Set(sorted[0..<count].map(\.id)), "size \(size), count \(count)")
                #expect(Set(selected.map(\.id)) == Set(candidates.map(\.id)))
            }
        }
    }

    /// A block's reach: its bound and, for every other term, the largest bound of that term's
    /// blocks over its ids — the sweep gives what searching each block's range gives.
    @Test func aBlocksReachIsWhatASearchGives() {
        let corpus = Self.corpus(documents: 5_000, seed: 21)
        let ids = (0..<Int64(corpus.count)).map { $0 * 3 + 1 }
        let lists = Self.postings(corpus, ids: ids)
        let weighing = KeywordWeighing(n: Double(corpus.count), average: 60)
        let query = [0, 3, 17, 38, 1]
        let terms = query.map { term in (weighing.idf(Double(lists[term]!.count)), KeywordDirectory.build(lists[term]!, weighing: weighing, version: 1).0 as KeywordDirectory?) }
        let walk = KeywordWalk(terms: terms, limit: 10, weighing: weighing)
        #expect(walk.lists.count > query.count)   // term 0 has its best postings in a list of their own
        for list in walk.lists {
            for (j, entry) in list.entries.enumerated() {
                var perSlot = [Double](repeating: 0, count: query.count)
                for other in walk.lists where other.slot != list.slot {
                    for (k, block) in other.entries.enumerated() where block.last >= entry.first && block.first <= entry.last {
                        perSlot[other.slot] = max(perSlot[other.slot], other.bounds[k])
                    }
                }
                #expect(list.reach[j] == perSlot.reduce(list.bounds[j], +))
            }
        }
    }
}

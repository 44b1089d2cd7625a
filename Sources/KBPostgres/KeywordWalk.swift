import Foundation

/// The best `limit` snippets of a keyword query over postings kept in blocks, reading only the
/// blocks that can still change the answer, and exactly what scoring every posting would give.
///
/// Each query term has up to two lists: its best postings in one block (frequent terms,
/// `KeywordDirectory.tier`) and the rest in blocks of ascending ids, each with the most any of its
/// postings can add (`BlockEntry.bestShare` × idf). The walk
///
/// 1. reads the blocks that can still lift a snippet into the best, best bound first, in batches:
///    a list is *essential* while the lists bounded below it could not, together, reach the
///    `limit`-th best score known so far (a floor: lower bounds of distinct accepted snippets), and
///    an essential list's block is read only while it and the other terms' blocks over its ids
///    could reach the floor (block-max MaxScore);
/// 2. scores every snippet of the blocks read, as far as they say, and keeps those whose score,
///    with what the blocks not read could add, can still reach the floor;
/// 3. looks those up, best bound first, in the blocks that span them (reading the ones not read
///    yet, a group of snippets at a time), until the next one's bound is below the floor.
///
/// A snippet that is never seen holds only non-essential terms (so scores below the floor) or sits
/// in a block skipped because nothing there could reach it. Scores add up term by term in the
/// query's order whatever was read, so they are the same to the bit with pruning on or off;
/// ties go to the smaller id. Filters (`accept`) are checked while walking, before the limit, so
/// they never shrink it.
struct KeywordWalk {
    /// One list of postings: the blocks of one term's directory from `offset`.
    struct List {
        /// The query term (its position among the query's terms) whose postings these are.
        var slot: Int
        var idf: Double
        /// Where the list's blocks start in the term's directory.
        var offset: Int
        var entries: [BlockEntry]
        /// Per block: the most a posting of it adds to a score (idf × best share), a little over.
        var bounds: [Double] = []
        /// The largest of `bounds`.
        var bound = 0.0
        /// Per block: the most a snippet holding the term within the block's ids can score.
        var reach: [Double] = []
    }

    /// A block to read: a list's `entry`.
    struct Wanted: Hashable {
        var list: Int
        var entry: Int
    }

    /// What reading cost (for tests and benchmarks).
    struct Counts: Sendable, Equatable {
        var blocks = 0
        var postings = 0
        var batches = 0
        /// Passes over the blocks read (step 2: one).
        var passes = 0
        /// Snippets step 3 looked up to score them whole.
        var lookups = 0
        /// Step 2 gave up on the blocks read so far (too many snippets would stay open for step
        /// 3): every block was read and the pass made again.
        var gaveUp = false
    }

    let slots: Int
    let limit: Int
    /// What looking one snippet up in step 3 is taken to cost, in postings of a pass (step 2
    /// gives up beyond it); `defaultPostingsPerLookup` but in tests.
    var postingsPerLookup = KeywordWalk.defaultPostingsPerLookup
    let weighing: KeywordWeighing
    var lists: [List]
    /// Blocks read so far, by `flat` position, and whether each is.
    private var read: [PostingBlock?] = []
    private var isRead: [Bool] = []
    /// The lists' entries in flat arrays.
    private var flat = FlatEntries([])
    private(set) var counts = Counts()

    /// `terms[i]` is the i-th query term's idf and directory (nil: no blocks).
    init(terms: [(idf: Double, directory: KeywordDirectory?)], limit: Int, weighing: KeywordWeighing) {
        slots = terms.count
        self.limit = limit
        self.weighing = weighing
        var lists: [List] = []
        for (slot, term) in terms.enumerated() {
            guard let directory = term.directory else { continue }
            let tier = min(directory.tier, directory.entries.count)
            if tier > 0 { lists.append(List(slot: slot, idf: term.idf, offset: 0, entries: Array(directory.entries[0..<tier]))) }
            if directory.entries.count > tier {
                lists.append(List(slot: slot, idf: term.idf, offset: tier, entries: Array(directory.entries[tier...])))
            }
        }
        for l in lists.indices {
            let idf = lists[l].idf
            lists[l].bounds = lists[l].entries.map { $0.count == 0 ? 0 : idf * $0.bestShare(weighing) * (1 + 1e-9) + 1e-12 }
            lists[l].bound = lists[l].bounds.max() ?? 0
        }
        let reaches = Self.reaches(of: lists, slots: slots)
        for l in lists.indices { lists[l].reach = reaches[l] }
        self.lists = lists
        flat = FlatEntries(self.lists)
        isRead = Array(repeating: false, count: flat.firsts.count)
        read = Array(repeating: nil, count: flat.firsts.count)
    }

    /// Per list and block: the most a snippet holding the list's term within the block's ids can
    /// score — the block's bound and, for every other term, the largest bound of its blocks over
    /// those ids, added in the terms' order. A list's blocks come in id order (or it is one block,
    /// a term's best postings), so each other list is swept once with a cursor rather than
    /// searched again for every block.
    static func reaches(of lists: [List], slots: Int) -> [[Double]] {
        let firsts = lists.map { $0.entries.map(\.first) }, lasts = lists.map { $0.entries.map(\.last) }
        return lists.indices.map { l in
            let count = firsts[l].count
            var reach = lists[l].bounds
            var largest = [Double](repeating: 0, count: count)
            for slot in 0..<slots where slot != lists[l].slot {
                var any = false
                for o in lists.indices where lists[o].slot == slot {
                    any = true
                    let otherLasts = lasts[o], otherFirsts = firsts[o], bounds = lists[o].bounds, otherCount = otherLasts.count
                    var cursor = 0
                    for j in 0..<count {
                        cursor = gallop(otherLasts, base: 0, count: otherCount, from: cursor, to: firsts[l][j])
                        var k = cursor, best = largest[j]
                        while k < otherCount, otherFirsts[k] <= lasts[l][j] {
                            best = max(best, bounds[k])
                            k += 1
                        }
                        largest[j] = best
                    }
                }
                guard any else { continue }
                for j in 0..<count {
                    reach[j] += largest[j]
                    largest[j] = 0
                }
            }
            return reach
        }
    }

    /// The first entry whose last id is `id` or after it; entries after the first are in id
    /// order. (A list of one block is its own answer.)
    static func firstEntry(in entries: [BlockEntry], endingAtOrAfter id: Int64, from start: Int = 0) -> Int {
        var low = start, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].last < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The block of `list` whose ids span `id`, if one does.
    static func covering(_ id: Int64, in list: List, from start: Int = 0) -> Int? {
        let j = firstEntry(in: list.entries, endingAtOrAfter: id, from: start)
        return j < list.entries.count && list.entries[j].first <= id ? j : nil
    }

    /// The ranking. `tail` holds the snippets whose postings are not in blocks yet, each with its
    /// share per query term (0 where it lacks the term); `accept` says whether a snippet may be
    /// among the answers (filters, snippets deleted since their blocks were written); `fetch` reads
    /// blocks, in the order asked. Without `pruning` every block is read.
    mutating func rank(tail: [(id: Int64, shares: [Double])], accept: (Int64) -> Bool, pruning: Bool = true,
                       fetch: ([Wanted]) throws -> [PostingBlock]) throws -> [(id: Int64, score: Double)] {
        guard limit > 0 else { return [] }
        var floor = Floor(limit: limit)
        // The tail's snippets are scored whole already.
        let tailScores: [(id: Int64, score: Double)] = tail.compactMap { snippet in
            let score = snippet.shares.reduce(0, +)
            return score > 0 && accept(snippet.id) ? (snippet.id, score) : nil
        }
        var answers = TopK(limit: limit)
        for (id, score) in tailScores {
            floor.offer(id, score)
            answers.offer(id, score)
        }
        let total = lists.reduce(0) { sum, list in sum + list.entries.reduce(0) { $0 + $1.count } }
        // 1. Essential blocks, best first.
        var batch = pruning ? 8 : Int.max
        var readAll = false
        while true {
            let threshold = floor.lowest
            let essential = pruning ? essentialLists(floor: threshold) : Set(lists.indices)
            var wanted: [(Wanted, Double)] = []
            var wantedPostings = 0
            for l in essential.sorted() {
                let base = flat.offsets[l]
                for j in 0..<flat.counts[l] where !flat.empty[base + j] && !isRead[base + j] && reaches(flat.reach[base + j], threshold) {
                    wanted.append((Wanted(list: l, entry: j), flat.reach[base + j]))
                    wantedPostings += lists[l].entries[j].count
                }
            }
            guard !wanted.isEmpty else { break }
            // Once a floor is known, when the blocks that could still reach it hold more than
            // half of the postings, the walk would read most of them in several more round trips
            // and passes: all are read at once instead (step 2 is then one pass, with no block
            // missing).
            if pruning, counts.batches > 0, 2 * (counts.postings + wantedPostings) >= total {
                readAll = true
                break
            }
            if wanted.count > batch {
                wanted.sort { $0.1 != $1.1 ? $0.1 > $1.1 : ($0.0.list, $0.0.entry) < ($1.0.list, $1.0.entry) }
                wanted.removeLast(wanted.count - batch)
            }
            let blocks = try readBlocks(wanted.map(\.0), fetch)
            if pruning {
                for (want, block) in zip(wanted.map(\.0), blocks) {
                    let idf = lists[want.list].idf
                    for i in block.ids.indices {
                        let part = idf * weighing.share(halves: block.frequencies[i], block.lengths[i])
                        if part > floor.lowest, accept(block.ids[i]) { floor.offer(block.ids[i], part) }
                    }
                }
                batch = max(batch, counts.blocks)
            }
        }
        // When the walk read everything at once above, or the floor let it stop only after half
        // of the postings were read, the rest costs less than the passes that would decide which
        // of them to read: all are read, and one pass scores every snippet whole.
        if pruning, readAll || (counts.batches > 2 && 2 * counts.postings >= total) {
            _ = try readBlocks(unread(), fetch)
        }
        // 2. Every snippet of the blocks read, scored as far as they say.
        // When step 2 finds that more snippets would stay open than step 3 could look up for less
        // than one pass over the postings not read (the question's words are many and none rare
        // enough to set a floor: tens of thousands of snippets, each needing the blocks of every
        // word it was not found with), it stops; every block is read and the pass is made again,
        // as without pruning. The floor it raised holds (a partial score is at most the whole
        // one); the answers start again.
        let unreadPostings = total - counts.postings
        var pending: [Candidate]
        if let found = candidates(floor: &floor, answers: &answers, accept: accept,
                                  giveUpBeyond: pruning ? unreadPostings / max(1, postingsPerLookup) : nil) {
            pending = found
        } else {
            counts.gaveUp = true
            _ = try readBlocks(unread(), fetch)
            answers = TopK(limit: limit)
            for (id, score) in tailScores { answers.offer(id, score) }
            pending = candidates(floor: &floor, answers: &answers, accept: accept, giveUpBeyond: nil) ?? []
        }
        // 3. Each snippet that can still reach the floor, scored whole by looking it up in the
        // blocks that span it.
        try complete(pending, floor: &floor, answers: &answers, fetch: fetch)
        return answers.entries
    }

    /// Step 3 by lookups: the snippets that can still reach the floor, best bound first, each
    /// scored whole from the blocks that span its id, a group at a time (the best `2 × limit`, to
    /// raise the floor; then four times as many each round, of those that still reach it): the
    /// blocks a group needs are read together, then the group's snippets are looked up list by
    /// list in id order, each search in a block starting where the one before ended, and scored
    /// in id order while their bounds still reach the floor. A snippet's shares add up term by
    /// term in the query's order, as step 2 adds them, so its score is the same to the bit; a
    /// block whose reach is below the floor is not read, as in step 2 (a snippet it could complete
    /// cannot reach the floor).
    private mutating func complete(_ pending: [Candidate], floor: inout Floor, answers: inout TopK,
                                   fetch: ([Wanted]) throws -> [PostingBlock]) throws {
        var open = pending.filter { reaches($0.bound, floor.lowest) }
        guard !open.isEmpty else { return }   // most questions: nothing left open after step 2
        let listCount = lists.count
        var marked = [Bool](repeating: false, count: flat.firsts.count)
        var group = 2 * limit
        while true {
            let threshold = floor.lowest
            open.removeAll { !reaches($0.bound, threshold) }
            guard !open.isEmpty else { break }
            // The group: the best `group` by bound (ties to the smaller id), taken in id order.
            let taken = min(group, open.count)
            if taken < open.count { Self.selectBest(taken, of: &open) }
            let members = open[0..<taken].sorted { $0.id < $1.id }
            open.removeFirst(taken)
            group *= 4
            // The flat position of the block of each list that spans each member (-1: none).
            var spans = [Int](repeating: -1, count: members.count * listCount)
            var wanted: [Wanted] = []
            for l in 0..<listCount {
                let base = flat.offsets[l], count = flat.counts[l]
                var cursor = 0
                for (m, member) in members.enumerated() {
                    cursor = count == 1 ? (flat.lasts[base] < member.id ? 1 : 0)
                        : Self.gallop(flat.lasts, base: base, count: count, from: cursor, to: member.id)
                    guard cursor < count else { break }   // the later members' ids are larger still
                    let k = base + cursor
                    guard flat.firsts[k] <= member.id, !flat.empty[k] else { continue }
                    spans[m * listCount + l] = k
                    if !isRead[k], !marked[k], reaches(flat.reach[k], threshold) {
                        marked[k] = true
                        wanted.append(Wanted(list: l, entry: cursor))
                    }
                }
            }
            _ = try readBlocks(wanted, fetch)
            for want in wanted { marked[flat.offsets[want.list] + want.entry] = false }
            // Each member's share of each term, list by list (0: not in the blocks read).
            var shares = [Double](repeating: 0, count: members.count * slots)
            for l in 0..<listCount {
                let idf = lists[l].idf, slot = flat.slots[l]
                var current = -1, position = 0
                var block = PostingBlock()
                for m in members.indices {
                    let k = spans[m * listCount + l]
                    guard k >= 0 else { continue }
                    if k != current {
                        guard let next = read[k] else { continue }
                        current = k
                        block = next
                        position = 0
                    }
                    position = Self.gallop(block.ids, base: 0, count: block.count, from: position, to: members[m].id)
                    guard position < block.count, block.ids[position] == members[m].id else { continue }
                    shares[m * slots + slot] = idf * weighing.share(halves: block.frequencies[position], block.lengths[position])
                }
            }
            for (m, member) in members.enumerated() where reaches(member.bound, floor.lowest) {
                var score = 0.0
                for s in 0..<slots { score += shares[m * slots + s] }
                counts.lookups += 1
                floor.offer(member.id, score)
                answers.offer(member.id, score)
            }
        }
    }

    /// Moves the best `count` candidates (by bound, ties to the smaller id) to the front of
    /// `candidates`, in no particular order: a selection, not a sort (most rounds keep a few
    /// hundred of many thousands).
    static func selectBest(_ count: Int, of candidates: inout [Candidate]) {
        func better(_ a: Candidate, _ b: Candidate) -> Bool { a.bound != b.bound ? a.bound > b.bound : a.id < b.id }
        var low = 0, high = candidates.count - 1
        while low < high {
            // Median of three as the pivot; after the partition, everything before `i` is better
            // than the pivot and everything after `j` is not.
            let middle = low + (high - low) / 2
            if better(candidates[middle], candidates[low]) { candidates.swapAt(middle, low) }
            if better(candidates[high], candidates[low]) { candidates.swapAt(high, low) }
            if better(candidates[high], candidates[middle]) { candidates.swapAt(high, middle) }
            let pivot = candidates[middle]
            var i = low, j = high
            while i <= j {
                while better(candidates[i], pivot) { i += 1 }
                while better(pivot, candidates[j]) { j -= 1 }
                if i <= j {
                    candidates.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            // [low, j] ≥ pivot ≥ [i, high]: go on in the part that holds position `count`.
            if count - 1 <= j { high = j } else if count - 1 >= i { low = i } else { return }
        }
    }

    /// The ranking of a few snippets (`ids`, ascending): each one looked up in the blocks that span
    /// it, not a walk (which, with few snippets allowed, would find no floor to stop at).
    mutating func rank(among ids: [Int64], tail: [(id: Int64, shares: [Double])], accept: (Int64) -> Bool,
                       fetch: ([Wanted]) throws -> [PostingBlock]) throws -> [(id: Int64, score: Double)] {
        guard limit > 0 else { return [] }
        var answers = TopK(limit: limit)
        for snippet in tail where accept(snippet.id) {
            let score = snippet.shares.reduce(0, +)
            if score > 0 { answers.offer(snippet.id, score) }
        }
        var wanted: [Wanted] = [], seen = Set<Wanted>()
        for l in lists.indices {
            var cursor = 0
            for id in ids {
                cursor = Self.firstEntry(in: lists[l].entries, endingAtOrAfter: id, from: lists[l].entries.count == 1 ? 0 : cursor)
                guard cursor < lists[l].entries.count, lists[l].entries[cursor].first <= id, lists[l].entries[cursor].count > 0 else { continue }
                let want = Wanted(list: l, entry: cursor)
                if seen.insert(want).inserted { wanted.append(want) }
            }
        }
        let blocks = try readBlocks(wanted, fetch)
        var shares: [Int64: [Double]] = [:]
        for (want, block) in zip(wanted, blocks) {
            let slot = lists[want.list].slot, idf = lists[want.list].idf
            for id in ids {
                guard let position = block.position(of: id) else { continue }
                shares[id, default: [Double](repeating: 0, count: slots)][slot] = idf * weighing.share(halves: block.frequencies[position], block.lengths[position])
            }
        }
        for (id, parts) in shares where accept(id) { answers.offer(id, parts.reduce(0, +)) }
        return answers.entries
    }

    /// Whether a score bounded by `best` may reach `floor` (with a margin over rounding).
    @inline(__always)
    private func reaches(_ best: Double, _ floor: Double) -> Bool { best * (1 + 1e-9) + 1e-12 >= floor }

    /// The lists whose postings can lift a snippet to the floor: all but the least-bounded ones
    /// whose bounds (the largest per term: a snippet is in one list of a term at most) add up to
    /// less than it.
    private func essentialLists(floor: Double) -> Set<Int> {
        guard floor > -Double.infinity else { return Set(lists.indices) }
        var perSlot = [Double](repeating: 0, count: slots)
        var sum = 0.0
        var skipped = Set<Int>()
        for l in lists.indices.sorted(by: { lists[$0].bound != lists[$1].bound ? lists[$0].bound < lists[$1].bound : $0 < $1 }) {
            let slot = lists[l].slot
            let added = max(0, lists[l].bound - perSlot[slot])
            guard reaches(sum + added, floor) == false else { break }
            sum += added
            perSlot[slot] = max(perSlot[slot], lists[l].bound)
            skipped.insert(l)
        }
        return Set(lists.indices).subtracting(skipped)
    }

    /// Every block not read yet that holds postings.
    private func unread() -> [Wanted] {
        lists.indices.flatMap { l in
            (0..<flat.counts[l]).compactMap { j in !flat.empty[flat.offsets[l] + j] && !isRead[flat.offsets[l] + j] ? Wanted(list: l, entry: j) : nil }
        }
    }

    private mutating func readBlocks(_ wanted: [Wanted], _ fetch: ([Wanted]) throws -> [PostingBlock]) throws -> [PostingBlock] {
        guard !wanted.isEmpty else { return [] }
        let blocks = try fetch(wanted)
        guard blocks.count == wanted.count else { throw KeywordCoding.corrupt }
        counts.batches += 1
        for (want, block) in zip(wanted, blocks) {
            read[flat.offsets[want.list] + want.entry] = block
            isRead[flat.offsets[want.list] + want.entry] = true
            counts.blocks += 1
            counts.postings += block.count
        }
        return blocks
    }

    /// A snippet seen in the blocks read whose score is not whole yet, and the most it can score.
    struct Candidate {
        var id: Int64
        var bound: Double
    }

    /// Step 2: every snippet in the blocks read, scored as far as they say; whole scores go to
    /// `answers`, the others that can still reach the floor come back. Snippets are taken a range
    /// of ids at a time (`window`), their shares added up in arrays term by term in the query's
    /// order (so a whole score is the same sum, to the bit, however the blocks were read).
    ///
    /// With `giveUpBeyond`, the pass stops (nil) once, an eighth of the ids or more behind it, the
    /// snippets left open so far point to more than that many by its end.
    private mutating func candidates(floor: inout Floor, answers: inout TopK, accept: (Int64) -> Bool,
                                     giveUpBeyond limitOpen: Int?) -> [Candidate]? {
        counts.passes += 1
        // Each list's blocks read, in id order (a list's first block may span every id: its best postings).
        let streams: [[PostingBlock]] = lists.indices.map { l in
            read[flat.offsets[l]..<flat.offsets[l] + flat.counts[l]].compactMap { $0 }.filter { $0.count > 0 }
        }
        guard let low = streams.compactMap({ $0.map { $0.ids[0] }.min() }).min(),
              let high = streams.compactMap({ $0.map { $0.ids[$0.count - 1] }.max() }).max() else { return [] }
        let bySlot = (0..<slots).map { slot in lists.indices.filter { lists[$0].slot == slot } }
        let globalSlotBound: [Double] = lists.reduce(into: [Double](repeating: 0, count: slots)) { $0[$1.slot] = max($0[$1.slot], $1.bound) }
        // What the terms a snippet was not found with can add at most, by the mask of those it
        // was found with (a table while it is small; summed term by term otherwise).
        let missingBound: [Double] = slots <= Self.maskTableSlots ? (0..<(1 << slots)).map { mask in
            (0..<slots).reduce(0.0) { sum, s in mask & (1 << s) == 0 ? sum + globalSlotBound[s] : sum }
        } : []
        let window = Self.window
        var scores = [Double](repeating: 0, count: window)
        var found = [UInt64](repeating: 0, count: window)
        var marks = [UInt64](repeating: 0, count: window / 64)
        var cursors = [Int](repeating: 0, count: lists.count)       // next block of each stream
        var entryCursors = [Int](repeating: 0, count: lists.count)  // directory position, for missing blocks
        var pending: [Candidate] = []
        var counted = 0   // `pending`'s size when it was last rid of what the floor left behind
        var slotBound = [Double](repeating: 0, count: slots)
        // The directory's arrays as locals (the loops below run once a snippet).
        let listCount = lists.count, offsets = flat.offsets, counts_ = flat.counts, slotOf = flat.slots, bits_ = flat.bits
        let firsts = flat.firsts, lasts = flat.lasts, empty = flat.empty, reach = flat.reach, bounds = flat.bounds, isRead = self.isRead
        // Lists with every block read (all, without pruning) never have one missing: skipped below.
        let open = (0..<listCount).filter { l in (0..<counts_[l]).contains { !empty[offsets[l] + $0] && !isRead[offsets[l] + $0] } }
        var start = low
        while start <= high {
            let end = start + Int64(window)
            // Shares, term by term in the query's order.
            for slot in 0..<slots {
                let bit: UInt64 = 1 << UInt64(slot)
                for l in bySlot[slot] {
                    let idf = lists[l].idf, stream = streams[l]
                    var b = cursors[l]
                    // A list of one block spanning many ids (best postings) is searched; others are walked.
                    let spanning = lists[l].entries.count == 1
                    if spanning { b = 0 }
                    while b < stream.count {
                        let block = stream[b]
                        if !spanning, block.ids[0] >= end { break }
                        let first = spanning ? Self.firstIndex(of: start, in: block.ids) : 0
                        Self.accumulate(block, from: first, start: start, end: end, idf: idf, bit: bit, weighing: weighing,
                                        scores: &scores, found: &found, marks: &marks)
                        if spanning || block.ids[block.count - 1] >= end { break }
                        b += 1
                    }
                    if !spanning { cursors[l] = b }
                }
            }
            // The snippets touched, in id order.
            let threshold = floor.lowest
            for word in marks.indices where marks[word] != 0 {
                var bits = marks[word]
                marks[word] = 0
                while bits != 0 {
                    let local = word * 64 + bits.trailingZeroBitCount
                    bits &= bits - 1
                    let partial = scores[local], mask = found[local]
                    scores[local] = 0
                    found[local] = 0
                    let id = start + Int64(local)
                    var quick = partial
                    if missingBound.isEmpty {
                        for s in 0..<slots where mask & (1 << UInt64(s)) == 0 { quick += globalSlotBound[s] }
                    } else {
                        quick += missingBound[Int(truncatingIfNeeded: mask)]
                    }
                    guard reaches(quick, threshold) else { continue }
                    // The unread blocks that may hold its other terms, and the most they add.
                    var anyMissing = false
                    var boundSum = 0.0
                    for s in 0..<slots { slotBound[s] = 0 }
                    for l in open where mask & bits_[l] == 0 {
                        let base = offsets[l], count = counts_[l]
                        let j = count == 1 ? (lasts[base] < id ? 1 : 0) : Self.gallop(lasts, base: base, count: count, from: entryCursors[l], to: id)
                        entryCursors[l] = j
                        guard j < count else { continue }
                        let k = base + j
                        guard firsts[k] <= id, !empty[k], !isRead[k], reaches(reach[k], threshold) else { continue }
                        anyMissing = true
                        let slot = slotOf[l]
                        if bounds[k] > slotBound[slot] {
                            boundSum += bounds[k] - slotBound[slot]
                            slotBound[slot] = bounds[k]
                        }
                    }
                    if !anyMissing {
                        // (Filters are checked only for a score that can change something.)
                        guard partial > floor.lowest || answers.admits(id, partial), accept(id) else { continue }
                        floor.offer(id, partial)
                        answers.offer(id, partial)
                        continue
                    }
                    guard reaches(partial + boundSum, threshold), accept(id) else { continue }
                    floor.offer(id, partial)
                    pending.append(Candidate(id: id, bound: partial + boundSum))
                }
            }
            start = end
            // Step 3 costs about `postingsPerLookup` postings of a pass for each open snippet.
            // The floor rises as the pass goes: the snippets it has left behind are dropped before
            // they are counted (as step 3 would drop them), at most once each time they double.
            if let limitOpen, !pending.isEmpty, start <= high {
                let done = Double(start - low), span = Double(high - low) + 1
                let beyond = { (open: Int) in 8 * done >= span && Double(open) * span / done > Double(limitOpen) }
                if beyond(pending.count), pending.count >= 2 * counted {
                    let lowest = floor.lowest
                    pending.removeAll { !reaches($0.bound, lowest) }
                    counted = pending.count
                }
                if beyond(pending.count) { return nil }
            }
        }
        return pending
    }

    /// Every list's directory entries in flat arrays (no array of arrays in the loop over snippets).
    struct FlatEntries {
        var offsets: [Int] = [], counts: [Int] = [], slots: [Int] = [], bits: [UInt64] = []
        var firsts: [Int64] = [], lasts: [Int64] = [], empty: [Bool] = [], reach: [Double] = [], bounds: [Double] = []

        init(_ lists: [List]) {
            for list in lists {
                offsets.append(firsts.count)
                counts.append(list.entries.count)
                slots.append(list.slot)
                bits.append(1 << UInt64(list.slot))
                for (j, entry) in list.entries.enumerated() {
                    firsts.append(entry.first)
                    lasts.append(entry.last)
                    empty.append(entry.count == 0)
                    reach.append(list.reach[j])
                    bounds.append(list.bounds[j])
                }
            }
        }

        /// `KeywordWalk.firstEntry` within list `l`'s entries.
        func firstEntry(endingAtOrAfter id: Int64, list l: Int, from start: Int) -> Int {
            let base = offsets[l]
            var low = start, high = counts[l]
            while low < high {
                let middle = (low + high) / 2
                if lasts[base + middle] < id { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// Adds a block's shares (from position `first`, while ids are below `end`) to the window's
    /// sums at `start`, marking the term found and the snippet touched.
    @inline(__always)
    static func accumulate(_ block: PostingBlock, from first: Int, start: Int64, end: Int64, idf: Double, bit: UInt64, weighing: KeywordWeighing,
                           scores: inout [Double], found: inout [UInt64], marks: inout [UInt64]) {
        block.ids.withUnsafeBufferPointer { ids in
            block.frequencies.withUnsafeBufferPointer { frequencies in
                block.lengths.withUnsafeBufferPointer { lengths in
                    scores.withUnsafeMutableBufferPointer { scores in
                        found.withUnsafeMutableBufferPointer { found in
                            marks.withUnsafeMutableBufferPointer { marks in
                                var i = first
                                while i < ids.count, ids[i] < end {
                                    let id = ids[i]
                                    if id >= start {
                                        let local = Int(truncatingIfNeeded: id &- start)
                                        scores[local] += idf * weighing.share(halves: frequencies[i], lengths[i])
                                        found[local] |= bit
                                        marks[local >> 6] |= 1 << UInt64(local & 63)
                                    }
                                    i += 1
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The first position from `from` among `count` entries at `base` of `lasts` whose last id is
    /// `id` or after it, by galloping: the snippets come in id order, so each search starts where
    /// the one before ended and costs the log of the distance.
    @inline(__always)
    static func gallop(_ lasts: [Int64], base: Int, count: Int, from: Int, to id: Int64) -> Int {
        var low = min(from, count)
        guard low < count, lasts[base + low] < id else { return low }
        var step = 1
        while low + step < count, lasts[base + low + step] < id {
            low += step
            step <<= 1
        }
        var first = low + 1, last = min(low + step, count)
        while first < last {
            let middle = (first + last) / 2
            if lasts[base + middle] < id { first = middle + 1 } else { last = middle }
        }
        return first
    }

    /// Snippets scored at a time in step 2 (their sums stay in the core's cache).
    static let window = 1 << 15

    /// What looking one snippet up in step 3 costs, in postings of a pass over blocks: measured on
    /// the million-snippet benchmark (2026-12-05), a pass took ~16 ns a posting and step 3 ~160
    /// ns a snippet (docs/benchmarks.md, *The keyword walk's tail*).
    static let defaultPostingsPerLookup = 10

    /// Up to this many query terms, step 2 looks the bound of a snippet's missing terms up in a
    /// table by the mask of those it has (4,096 entries).
    static let maskTableSlots = 12

    /// The first position in ascending `ids` holding `id` or a later one.
    static func firstIndex(of id: Int64, in ids: [Int64]) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

}

/// The `limit` largest lower bounds of distinct snippets' scores: the floor a walk prunes
/// against (the `limit`-th best score is at least its lowest once it is full).
struct Floor {
    let limit: Int
    private var scores: [Int64: Double] = [:]
    private var order: [(id: Int64, score: Double)] = []   // descending
    private(set) var lowest = -Double.infinity

    init(limit: Int) { self.limit = limit }

    mutating func offer(_ id: Int64, _ score: Double) {
        // A score at or below the lowest kept changes nothing (a snippet kept has one above it).
        if order.count == limit, score <= lowest { return }
        if let known = scores[id] {
            guard score > known else { return }
            order.removeAll { $0.id == id }
        } else if order.count == limit, score <= lowest {
            return
        }
        scores[id] = score
        var position = order.count
        while position > 0, order[position - 1].score < score { position -= 1 }
        order.insert((id, score), at: position)
        if order.count > limit { scores[order.removeLast().id] = nil }
        if order.count == limit { lowest = order[limit - 1].score }
    }
}

/// The best `limit` (id, score) pairs offered, best first, ties to the smaller id.
struct TopK {
    let limit: Int
    private(set) var entries: [(id: Int64, score: Double)] = []

    init(limit: Int) {
        self.limit = limit
        entries.reserveCapacity(min(limit, 1_024) + 1)
    }

    /// Whether `offer` would keep the pair.
    func admits(_ id: Int64, _ score: Double) -> Bool {
        guard entries.count == limit, let last = entries.last else { return true }
        return score > last.score || (score == last.score && id < last.id)
    }

    mutating func offer(_ id: Int64, _ score: Double) {
        guard admits(id, score) else { return }
        var position = entries.count
        while position > 0, score > entries[position - 1].score || (score == entries[position - 1].score && id < entries[position - 1].id) {
            position -= 1
        }
        entries.insert((id, score), at: position)
        if entries.count > limit { entries.removeLast() }
    }
}

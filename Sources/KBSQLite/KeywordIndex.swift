import Foundation
import KBCore

/// The keyword table's postings in memory: for every term, the documents (snippets) holding it
/// with its column-weighted frequency, and every document's length in tokens. A ranking scores
/// only the postings of the query's terms, with FTS5's own `bm25()` formula, column weights and
/// statistics, so it returns what `ORDER BY bm25(…), rowid` would — bit for bit — without FTS5
/// computing `bm25()` for every matching row (tens of thousands for common words at 100,000
/// snippets, ~40 ms; the postings take about a millisecond).
///
/// ```swift
/// let index = KeywordIndex(weights: [1, 2, 1.5, 1.5])
/// index.add(7, columns: [["saturn", "return"], ["astrolog"], [], []])
/// index.ranking(["saturn"], limit: 10, allowed: nil)   // [(id: 7, score: 0.0…)]
/// ```
///
/// Removed documents stay in the postings as dead entries until the index is rebuilt.
///
/// @unchecked Sendable: all state is guarded by `lock` (many readers, one writer).
final class KeywordIndex: @unchecked Sendable {
    /// FTS5's bm25 parameters.
    static let k1 = 1.2, b = 0.75

    /// Weight of each column, as passed to `bm25()`.
    let weights: [Double]
    private var termIDs: [String: Int] = [:]
    private var postingDocuments: [[UInt32]] = []
    private var postingFrequencies: [Frequencies] = []
    /// Per term, the highest frequency and the shortest document among its postings (removed ones
    /// included): what bounds the term's contribution to any score.
    private var highestFrequency: [Float] = []
    private var shortestDocument: [UInt32] = []
    private var snippetIDs: [Int64] = []
    private var lengths: [UInt32] = []
    private var alive: [Bool] = []
    private var documentOf: [Int64: UInt32] = [:]
    private var liveTokens = 0
    private let lock = ReadWriteLock()

    /// Documents a ranking scores at a time (`defaultPartition`; tests take fewer).
    let partitionDocuments: Int

    init(weights: [Double], partitionDocuments: Int = KeywordIndex.defaultPartition) {
        self.weights = weights
        self.partitionDocuments = max(1, partitionDocuments)
    }

    /// An index of whole posting lists at once (a load): `terms[i]`'s postings are
    /// `documents[i]` (indexes into `snippetIDs`, ascending) with `frequencies[i]`, and
    /// `lengths` has every document's length in tokens.
    init(weights: [Double], snippetIDs: [Int64], lengths: [UInt32], terms: [String], documents: [[UInt32]], frequencies: [Frequencies]) {
        self.weights = weights
        partitionDocuments = Self.defaultPartition
        self.snippetIDs = snippetIDs
        self.lengths = lengths
        alive = Array(repeating: true, count: snippetIDs.count)
        documentOf = Dictionary(uniqueKeysWithValues: snippetIDs.enumerated().map { ($1, UInt32($0)) })
        liveTokens = lengths.reduce(0) { $0 + Int($1) }
        termIDs = Dictionary(terms.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        postingDocuments = documents
        postingFrequencies = frequencies
        highestFrequency = frequencies.map(\.largest)
        shortestDocument = documents.map { $0.reduce(UInt32.max) { min($0, lengths[Int($1)]) } }
    }

    /// The index as a saved file's numbers and sections (see `SavedSearchData`), taken as they
    /// are under the read lock: later changes copy the arrays instead of changing the sections.
    func savedForm() -> (numbers: [String: [Double]], sections: [SavedFile.Section]) {
        var state = lock.read {
            (termIDs, postingDocuments, postingFrequencies, highestFrequency, shortestDocument, snippetIDs, lengths, alive, liveTokens)
        }
        var terms = [[UInt8]](repeating: [], count: state.1.count)
        for (term, id) in state.0 { terms[id] = Array(term.utf8) }
        if state.7.contains(false) {
            // Removed documents are left out (their words must not outlive them in a file), and
            // terms only they held with them; the bounds are those of the live postings.
            var renumbered = [UInt32](repeating: .max, count: state.5.count)
            var live: UInt32 = 0
            for (document, isAlive) in state.7.enumerated() where isAlive {
                renumbered[document] = live
                live += 1
            }
            var kept: [Int] = []
            for term in terms.indices {
                var documents: [UInt32] = [], frequencies = Frequencies()
                let held = state.2[term]
                for (position, document) in state.1[term].enumerated() where state.7[Int(document)] {
                    documents.append(renumbered[Int(document)])
                    frequencies.append(held[position])
                }
                state.1[term] = documents
                state.2[term] = frequencies
                if !documents.isEmpty { kept.append(term) }
            }
            state.5 = zip(state.5, state.7).filter(\.1).map(\.0)
            state.6 = zip(state.6, state.7).filter(\.1).map(\.0)
            state.7 = Array(repeating: true, count: state.5.count)
            let lengths = state.6
            terms = kept.map { terms[$0] }
            state.2 = kept.map { state.2[$0] }
            state.3 = state.2.map(\.largest)
            state.1 = kept.map { state.1[$0] }
            state.4 = state.1.map { $0.reduce(UInt32.max) { min($0, lengths[Int($1)]) } }
        }
        let numbers: [String: [Double]] = ["weights": weights, "liveTokens": [Double(state.8)]]
        return (numbers, SavedFile.Section.nested("terms", terms) + SavedFile.Section.nested("documents", state.1)
                    + SavedFile.Section.nested("frequencies", state.2.map(\.halves))
                    + Frequencies.exactSections(state.2)
                    + [.array("highest", state.3), .array("shortest", state.4), .array("ids", state.5), .array("lengths", state.6),
                       .array("alive", state.7.map { $0 ? UInt8(1) : 0 })])
    }

    /// An index read back from a saved file; an error when its parts do not fit together.
    init(saved file: SavedFile, weights: [Double]) throws {
        guard file.numbers["weights"] == weights else { throw KBError(.database, "\(file.path) was saved with other column weights.") }
        self.weights = weights
        partitionDocuments = Self.defaultPartition
        let terms: [[UInt8]] = try file.nested("terms")
        postingDocuments = try file.nested("documents")
        postingFrequencies = try Frequencies.restored(halves: file.nested("frequencies"), file: file)
        highestFrequency = try file.array("highest")
        shortestDocument = try file.array("shortest")
        snippetIDs = try file.array("ids")
        lengths = try file.array("lengths")
        alive = try file.array("alive", as: UInt8.self).map { $0 != 0 }
        liveTokens = Int(try file.number("liveTokens"))
        let documents = snippetIDs.count
        guard terms.count == postingDocuments.count, postingFrequencies.count == terms.count, highestFrequency.count == terms.count,
              shortestDocument.count == terms.count, lengths.count == documents, alive.count == documents,
              zip(postingDocuments, postingFrequencies).allSatisfy({ $0.count == $1.count && ($0.last.map { Int($0) < documents } ?? true) }) else {
            throw KBError(.database, "\(file.path): the keyword postings do not fit together.")
        }
        termIDs = Dictionary(terms.enumerated().map { (String(decoding: $1, as: UTF8.self), $0) }, uniquingKeysWith: { first, _ in first })
        for (document, id) in snippetIDs.enumerated() where alive[document] { documentOf[id] = UInt32(document) }
    }

    /// Live documents.
    var count: Int { lock.read { documentOf.count } }

    /// Documents removed but still in the postings.
    var dead: Int { lock.read { snippetIDs.count - documentOf.count } }

    /// Adds (or replaces) a document: its tokens, column by column, as the keyword table's
    /// tokenizer made them.
    func add(_ id: Int64, columns: [[String]]) {
        var frequencies: [String: Float] = [:]
        var length = 0
        for (column, tokens) in columns.enumerated() {
            let weight = Float(column < weights.count ? weights[column] : 1)
            length += tokens.count
            for token in tokens { frequencies[token, default: 0] += weight }
        }
        lock.write {
            removeLocked(id)
            let document = UInt32(snippetIDs.count)
            snippetIDs.append(id)
            lengths.append(UInt32(length))
            alive.append(true)
            documentOf[id] = document
            liveTokens += length
            for (term, frequency) in frequencies {
                let termID: Int
                if let known = termIDs[term] {
                    termID = known
                } else {
                    termID = postingDocuments.count
                    termIDs[term] = termID
                    postingDocuments.append([])
                    postingFrequencies.append(Frequencies())
                    highestFrequency.append(0)
                    shortestDocument.append(.max)
                }
                postingDocuments[termID].append(document)
                postingFrequencies[termID].append(frequency)
                highestFrequency[termID] = max(highestFrequency[termID], frequency)
                shortestDocument[termID] = min(shortestDocument[termID], UInt32(length))
            }
        }
    }

    /// Removes documents by snippet id (ids it does not hold are ignored).
    func remove(_ ids: [Int64]) {
        lock.write { for id in ids { removeLocked(id) } }
    }

    private func removeLocked(_ id: Int64) {
        guard let document = documentOf.removeValue(forKey: id) else { return }
        alive[Int(document)] = false
        liveTokens -= Int(lengths[Int(document)])
    }

    /// The best `limit` documents for an OR of single-term phrases, by FTS5's bm25 (higher is
    /// better; FTS5's `rank` is its negation), ties to the smaller id; only `allowed` ids when
    /// given, never `excluded` ones.
    ///
    /// A few allowed documents (a user's memories) are looked up in each term's postings (ascending,
    /// so by binary search) instead of scoring every posting of the terms. Otherwise the postings
    /// of terms too common to lift a document into the best `limit` on their own (see `Plan`) are
    /// only searched for the documents the other terms found.
    func ranking(_ phrases: [String], limit: Int, allowed: Set<Int64>?, excluded: Set<Int64> = []) -> [(id: Int64, score: Double)] {
        ranking(phrases, limit: limit, allowed: allowed, excluded: excluded, pruning: true).ranking
    }

    /// `ranking`, with or without skipping common terms' postings, and how many postings it
    /// read one by one (a measure for tests).
    func ranking(_ phrases: [String], limit: Int, allowed: Set<Int64>?, excluded: Set<Int64>, pruning: Bool)
        -> (ranking: [(id: Int64, score: Double)], scanned: Int) {
        lock.read {
            let rows = documentOf.count
            guard rows > 0, limit > 0 else { return ([], 0) }
            let terms = phrases.compactMap { termIDs[$0] }
            let postings = terms.reduce(0) { $0 + postingDocuments[$1].count }
            let weigh = Weighing(index: self, rows: rows)
            if let allowed, allowed.count * 16 < postings {
                return (rankingAmong(allowed, terms: terms, weigh: weigh, limit: limit, excluded: excluded), 0)
            }
            // Local copies (no copying: the arrays are shared) spare the loops the exclusivity
            // checks of class properties.
            let alive = self.alive, lengths = self.lengths, snippetIDs = self.snippetIDs
            let idfs = terms.map { idf($0, weigh) }
            var plan = pruning ? Plan(self, terms: terms, idfs: idfs, weigh: weigh, limit: limit, allowed: allowed, excluded: excluded)
                : Plan(terms: terms.count)
            var scanned = plan.scanned
            // Documents are taken a range at a time (`partitionDocuments`), so that the scores the
            // postings add to — one per document, read and written in no order — stay in the
            // core's cache: at a million documents the whole array (8 MB) did not, and a ranking
            // took 15% longer (`kb-bench keyword-ranking`). Each term's postings (ascending) are
            // read on from where the previous range left them.
            let documentCount = snippetIDs.count, partition = partitionDocuments
            let window = min(documentCount, partition)
            let ranking = Self.scratch.withScores(count: 2 * window) { buffer in
                // The range's scores, and (when terms are skipped) its marked documents' bm25
                // length parts (`Weighing.norm`), computed once a document from `lengths` read in
                // order, instead of once a posting from `lengths` read as the postings fall (a
                // cache miss each at a million documents).
                let scores = UnsafeMutableBufferPointer(rebasing: buffer[0..<window])
                let norms = UnsafeMutableBufferPointer(rebasing: buffer[window..<(2 * window)])
                var positions = [Int](repeating: 0, count: terms.count)
                var touched: [UInt32] = []
                // The best `limit`, kept sorted best first; filters are checked only for a candidate
                // good enough to enter.
                var best = Best(limit: limit)
                var marks = [UInt64](repeating: 0, count: pruning && terms.count > 1 ? (window + 63) / 64 : 0)
                for base in stride(from: 0, to: documentCount, by: partition) {
                    let end = UInt32(min(documentCount, base + partition)), offset = UInt32(base)
                    // The best so far are a floor under the final best: every range after the first
                    // may skip more terms than the plan could before any score was known.
                    if pruning, best.lowest > plan.threshold { plan.raise(to: best.lowest) }
                    let skipping = plan.skipped.contains(true)
                    touched.removeAll(keepingCapacity: true)
                    // The documents the scanned terms hold: only they can be among the best.
                    if skipping {
                        // Marked in a bitmap (4 KB a range: it stays in cache), then read from it in
                        // order (no sort); cleared once the skipped terms have been looked up in it.
                        marks.withUnsafeMutableBufferPointer { marks in
                            for (slot, term) in terms.enumerated() where !plan.skipped[slot] {
                                let documents = postingDocuments[term]
                                var index = positions[slot]
                                while index < documents.count, documents[index] < end {
                                    let document = documents[index]
                                    index += 1
                                    guard weigh.allAlive || alive[Int(document)] else { continue }
                                    let local = document - offset
                                    marks[Int(local >> 6)] |= UInt64(1) << (local & 63)
                                }
                            }
                            let words = (Int(end - offset) + 63) / 64
                            for word in 0..<words where marks[word] != 0 {
                                var bits = marks[word]
                                while bits != 0 {
                                    touched.append(offset + UInt32(word * 64 + bits.trailingZeroBitCount))
                                    bits &= bits - 1
                                }
                            }
                        }
                        for document in touched { norms[Int(document) - base] = weigh.norm(length: lengths[Int(document)]) }
                    }
                    // Scores add up term by term in the query's order, as FTS5 adds them.
                    for (slot, term) in terms.enumerated() {
                        let documents = postingDocuments[term], frequencies = postingFrequencies[term], idf = idfs[slot]
                        if plan.skipped[slot] {
                            // The marked documents among the term's postings in this range: by
                            // galloping search when they are few against the postings, else by
                            // reading the postings against the bitmap (no branch to mispredict).
                            let first = positions[slot], last = Self.firstPosition(of: end, in: documents, from: first)
                            if touched.count * Self.gallopingRatio < last - first {
                                Self.intersect(touched, documents, from: first) { i, position in
                                    let local = Int(touched[i]) - base
                                    scores[local] += idf * Weighing.share(frequency: Double(frequencies[position]), norm: norms[local])
                                }
                            } else {
                                marks.withUnsafeBufferPointer { marks in
                                    for position in first..<last {
                                        let local = Int(documents[position] &- offset)
                                        guard marks[local >> 6] & (UInt64(1) << (local & 63)) != 0 else { continue }
                                        scores[local] += idf * Weighing.share(frequency: Double(frequencies[position]), norm: norms[local])
                                    }
                                }
                            }
                            positions[slot] = last
                            continue
                        }
                        var index = positions[slot]
                        while index < documents.count, documents[index] < end {
                            let d = Int(documents[index])
                            if weigh.allAlive || alive[d] {
                                if skipping {
                                    scores[d - base] += idf * Weighing.share(frequency: Double(frequencies[index]), norm: norms[d - base])
                                } else {
                                    if scores[d - base] == 0 { touched.append(documents[index]) }
                                    scores[d - base] += weigh.score(idf: idf, frequency: frequencies[index], length: lengths[d])
                                }
                            }
                            index += 1
                        }
                        scanned += index - positions[slot]
                        positions[slot] = index
                    }
                    if skipping {
                        let words = (Int(end - offset) + 63) / 64
                        marks.withUnsafeMutableBufferPointer { marks in
                            for word in 0..<words { marks[word] = 0 }
                        }
                    }
                    for document in touched {
                        let local = Int(document) - base
                        let score = scores[local]
                        scores[local] = 0
                        norms[local] = 0   // the buffer goes back zeroed
                        // The id (a cache miss: the ids of a million documents take 8 MB) only
                        // for a score that can enter: at most ties the worst of the best.
                        guard score >= best.lowest else { continue }
                        let id = snippetIDs[Int(document)]
                        guard best.admits(id, score) else { continue }
                        if let allowed, !allowed.contains(id) { continue }
                        if excluded.contains(id) { continue }
                        best.insert(id, score)
                    }
                }
                return best.entries
            }
            return (ranking, scanned)
        }
    }

    /// A skipped term's postings in a range are looked up by galloping search for the range's
    /// marked documents when they outnumber them this many times, else read against the bitmap.
    static let gallopingRatio = 8

    /// The first position in `postings` (ascending) from `start` whose document is `document` or
    /// after it, by galloping search: cost grows with the log of the distance.
    @inline(__always)
    static func firstPosition(of document: UInt32, in postings: [UInt32], from start: Int) -> Int {
        let count = postings.count
        guard start < count, postings[start] < document else { return start }
        var low = start, step = 1
        while low + step < count, postings[low + step] < document {
            low += step
            step <<= 1
        }
        var first = low + 1, last = min(low + step, count)
        while first < last {
            let middle = (first + last) / 2
            if postings[middle] < document { first = middle + 1 } else { last = middle }
        }
        return first
    }

    /// Which terms' postings a ranking need not scan. A term adds at most what it adds to a
    /// document of its shortest length holding it its highest number of times (bm25's frequency
    /// part rises with the frequency and falls with the length), so the documents that hold only
    /// the terms with the smallest such bounds score below their sum: when that sum is below a
    /// floor under the `limit`-th best score, those terms cannot lift a document into the best on
    /// their own, so only the documents the other terms hold are scored — fully, the skipped terms
    /// looked up for them. The floor rises as the ranking goes: at first the best-bounded term's
    /// own contributions in the first range (every score is at least its part of it; further
    /// postings only when the first range holds fewer than `limit`), then the `limit`-th best score
    /// of the documents ranked so far (`raise(to:)`), so later ranges skip more terms. (Very common
    /// words — "the", "a", in more than half the documents — have an idf near zero.)
    struct Plan {
        /// Per term (in the query's order): its postings are not scanned.
        var skipped: [Bool]
        /// Postings read to decide.
        var scanned = 0
        /// The floor the skipped terms' bounds add up to less than (−∞: none yet).
        private(set) var threshold = -Double.infinity
        /// Per term, the most it adds to a score (with a margin over rounding).
        private var bounds: [Double] = []
        /// Term slots by bound, least first (ties: later slot first); the last is never skipped.
        private var order: [Int] = []

        /// A plan that skips nothing.
        init(terms: Int) {
            skipped = Array(repeating: false, count: terms)
        }

        init(_ index: KeywordIndex, terms: [Int], idfs: [Double], weigh: Weighing, limit: Int, allowed: Set<Int64>?, excluded: Set<Int64>) {
            skipped = Array(repeating: false, count: terms.count)
            guard terms.count >= 2 else { return }
            // A margin over the rounding of the bounds and of the scores they are compared with.
            bounds = terms.indices.map { slot in
                weigh.score(idf: idfs[slot], frequency: index.highestFrequency[terms[slot]], length: index.shortestDocument[terms[slot]]) * (1 + 1e-9)
            }
            order = terms.indices.sorted { bounds[$0] != bounds[$1] ? bounds[$0] < bounds[$1] : $0 > $1 }
            let top = order[terms.count - 1], documents = index.postingDocuments[terms[top]], frequencies = index.postingFrequencies[terms[top]]
            // The first floor reads the top term's postings once more, only until the first range
            // is passed with `limit` of them held (later ranges have the best scores so far), and
            // only when they are at most half of all (else scanning them is most of the work).
            guard documents.count * 2 <= terms.reduce(0, { $0 + index.postingDocuments[$1].count }) else { return }
            let firstRange = UInt32(min(index.partitionDocuments, index.snippetIDs.count))
            var floor = Best(limit: limit)
            for (position, document) in documents.enumerated() {
                if document >= firstRange, floor.entries.count == limit { break }
                scanned += 1
                guard weigh.allAlive || index.alive[Int(document)] else { continue }
                let part = weigh.score(idf: idfs[top], frequency: frequencies[position], length: index.lengths[Int(document)])
                guard part >= floor.lowest else { continue }
                let id = index.snippetIDs[Int(document)]
                guard floor.admits(id, part) else { continue }
                if let allowed, !allowed.contains(id) { continue }
                if excluded.contains(id) { continue }
                floor.insert(id, part)
            }
            if floor.entries.count == limit, let threshold = floor.entries.last?.score { raise(to: threshold) }
        }

        /// Skips the least-bounded terms whose bounds add up to less than `floor`, a score that
        /// the `limit`-th best is known to reach. Skipped terms stay skipped (the floor only rises).
        mutating func raise(to floor: Double) {
            guard floor > threshold, order.count >= 2 else { return }
            threshold = floor
            var sum = 0.0
            for slot in order.dropLast() {
                guard sum + bounds[slot] < floor * (1 - 1e-9) else { break }
                sum += bounds[slot]
                skipped[slot] = true
            }
        }
    }

    /// Calls `body` with the index in `documents` and the position in `postings` of each document
    /// both hold (both ascending; `postings` from `start`), seeking by galloping: cost grows with
    /// the documents, not the postings. Returns the position in `postings` it stopped at (none of
    /// `documents` is past it).
    @discardableResult
    static func intersect(_ documents: [UInt32], _ postings: [UInt32], from start: Int = 0, _ body: (Int, Int) -> Void) -> Int {
        var position = start
        let count = postings.count
        for (i, document) in documents.enumerated() {
            guard position < count else { return position }
            position = firstPosition(of: document, in: postings, from: position)
            if position < count, postings[position] == document { body(i, position) }
        }
        return position
    }

    /// `ranking` over a few allowed documents: each one's frequency of each term found in the
    /// term's postings by galloping search. Scores add up term by term as there, so they are the
    /// same to the bit. (Under the read lock.)
    private func rankingAmong(_ allowed: Set<Int64>, terms: [Int], weigh: Weighing, limit: Int, excluded: Set<Int64>) -> [(id: Int64, score: Double)] {
        let documents = allowed.compactMap { excluded.contains($0) ? nil : documentOf[$0] }.sorted()
        var scores = [Double](repeating: 0, count: documents.count)
        var matched = [Bool](repeating: false, count: documents.count)
        for term in terms {
            let frequencies = postingFrequencies[term], idf = idf(term, weigh)
            Self.intersect(documents, postingDocuments[term]) { slot, position in
                matched[slot] = true
                scores[slot] += weigh.score(idf: idf, frequency: frequencies[position], length: lengths[Int(documents[slot])])
            }
        }
        var best = Best(limit: limit)
        for (slot, document) in documents.enumerated() where matched[slot] {
            let id = snippetIDs[Int(document)]
            if best.admits(id, scores[slot]) { best.insert(id, scores[slot]) }
        }
        return best.entries
    }

    /// How many live documents hold each of `terms` (0 for a term no document holds), and how
    /// many live documents there are: what the ranking's idfs are computed from.
    func documentFrequencies(_ terms: [String]) -> (rows: Int, frequencies: [Int]) {
        lock.read {
            let frequencies = terms.map { term -> Int in
                guard let id = termIDs[term] else { return 0 }
                let documents = postingDocuments[id]
                return documents.count == 0 || snippetIDs.count == documentOf.count ? documents.count
                    : documents.reduce(0) { $0 + (alive[Int($1)] ? 1 : 0) }
            }
            return (documentOf.count, frequencies)
        }
    }

    /// A term's idf, from its live postings. (Under the read lock.)
    private func idf(_ term: Int, _ weigh: Weighing) -> Double {
        let documents = postingDocuments[term]
        return weigh.idf(hits: weigh.allAlive ? documents.count : documents.reduce(0) { $0 + (alive[Int($1)] ? 1 : 0) })
    }

    /// FTS5's bm25 terms for this index's statistics.
    struct Weighing {
        let n: Double, averageLength: Double
        /// No document was removed: every posting is alive.
        let allAlive: Bool

        init(index: KeywordIndex, rows: Int) {
            n = Double(rows)
            averageLength = Double(index.liveTokens) / n
            allAlive = index.snippetIDs.count == rows
        }

        /// As fts5Bm25GetData: a term in more than half the rows still counts a little.
        func idf(hits: Int) -> Double {
            let idf = log((n - Double(hits) + 0.5) / (Double(hits) + 0.5))
            return idf <= 0 ? 1e-6 : idf
        }

        func score(idf: Double, frequency: Float, length: UInt32) -> Double {
            idf * Self.share(frequency: Double(frequency), norm: norm(length: length))
        }

        /// The part of bm25's denominator a document's length makes: k1·(1 − b + b·length/avgdl).
        @inline(__always)
        func norm(length: UInt32) -> Double {
            let k1 = KeywordIndex.k1, b = KeywordIndex.b
            return k1 * (1 - b + b * Double(length) / averageLength)
        }

        /// What a term's idf is multiplied by for a frequency in a document of that `norm`:
        /// f·(k1 + 1) / (f + norm).
        @inline(__always)
        static func share(frequency: Double, norm: Double) -> Double {
            (frequency * (KeywordIndex.k1 + 1.0)) / (frequency + norm)
        }
    }

    /// The best `limit` (id, score) pairs seen, best first, ties to the smaller id.
    struct Best {
        let limit: Int
        var entries: [(id: Int64, score: Double)] = []

        init(limit: Int) {
            self.limit = limit
            entries.reserveCapacity(limit + 1)
        }

        /// The least score that may enter (a tie enters by a smaller id): −∞ until `limit` are held.
        private(set) var lowest = -Double.infinity

        func admits(_ id: Int64, _ score: Double) -> Bool {
            guard entries.count == limit, let last = entries.last else { return true }
            return score > last.score || (score == last.score && id < last.id)
        }

        mutating func insert(_ id: Int64, _ score: Double) {
            var position = entries.count
            while position > 0, score > entries[position - 1].score || (score == entries[position - 1].score && id < entries[position - 1].id) {
                position -= 1
            }
            entries.insert((id, score), at: position)
            if entries.count > limit { entries.removeLast() }
            if entries.count == limit { lowest = entries[limit - 1].score }
        }
    }

    /// Documents a ranking scores at a time by default: their scores (256 KB) stay in the core's
    /// L2 cache.
    static let defaultPartition = 32_768

    /// Score arrays of rankings, kept zeroed between them: a ranking over 200,000 documents
    /// would otherwise allocate (and the kernel zero) 1.6 MB.
    private static let scratch = ScoreScratch()
}

import Foundation

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
    private var postingFrequencies: [[Float]] = []
    private var snippetIDs: [Int64] = []
    private var lengths: [UInt32] = []
    private var alive: [Bool] = []
    private var documentOf: [Int64: UInt32] = [:]
    private var liveTokens = 0
    private let lock = ReadWriteLock()

    init(weights: [Double]) { self.weights = weights }

    /// An index of whole posting lists at once (a load): `terms[i]`'s postings are
    /// `documents[i]` (indexes into `snippetIDs`, ascending) with `frequencies[i]`, and
    /// `lengths` has every document's length in tokens.
    init(weights: [Double], snippetIDs: [Int64], lengths: [UInt32], terms: [String], documents: [[UInt32]], frequencies: [[Float]]) {
        self.weights = weights
        self.snippetIDs = snippetIDs
        self.lengths = lengths
        alive = Array(repeating: true, count: snippetIDs.count)
        documentOf = Dictionary(uniqueKeysWithValues: snippetIDs.enumerated().map { ($1, UInt32($0)) })
        liveTokens = lengths.reduce(0) { $0 + Int($1) }
        termIDs = Dictionary(terms.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        postingDocuments = documents
        postingFrequencies = frequencies
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
                    postingFrequencies.append([])
                }
                postingDocuments[termID].append(document)
                postingFrequencies[termID].append(frequency)
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
    func ranking(_ phrases: [String], limit: Int, allowed: Set<Int64>?, excluded: Set<Int64> = []) -> [(id: Int64, score: Double)] {
        lock.read {
            let rows = documentOf.count
            guard rows > 0, limit > 0 else { return [] }
            let n = Double(rows)
            let averageLength = Double(liveTokens) / n
            // Local copies (no copying: the arrays are shared) spare the loops the exclusivity
            // checks of class properties.
            let alive = self.alive, lengths = self.lengths, snippetIDs = self.snippetIDs
            var scores = [Double](repeating: 0, count: snippetIDs.count)
            var touched: [UInt32] = []
            let k1 = Self.k1, b = Self.b
            for phrase in phrases {
                guard let term = termIDs[phrase] else { continue }
                let documents = postingDocuments[term], frequencies = postingFrequencies[term]
                var hits = 0
                for document in documents where alive[Int(document)] { hits += 1 }
                // As fts5Bm25GetData: a term in more than half the rows still counts a little.
                var idf = log((n - Double(hits) + 0.5) / (Double(hits) + 0.5))
                if idf <= 0 { idf = 1e-6 }
                for (index, document) in documents.enumerated() where alive[Int(document)] {
                    let d = Int(document)
                    let frequency = Double(frequencies[index])
                    let length = Double(lengths[d])
                    if scores[d] == 0 { touched.append(document) }
                    scores[d] += idf * ((frequency * (k1 + 1.0)) / (frequency + k1 * (1 - b + b * length / averageLength)))
                }
            }
            // The best `limit`, kept sorted best first; filters are checked only for a candidate
            // good enough to enter.
            var best: [(id: Int64, score: Double)] = []
            best.reserveCapacity(limit + 1)
            for document in touched {
                let score = scores[Int(document)], id = snippetIDs[Int(document)]
                if best.count == limit, let last = best.last, !(score > last.score || (score == last.score && id < last.id)) { continue }
                if let allowed, !allowed.contains(id) { continue }
                if excluded.contains(id) { continue }
                var position = best.count
                while position > 0, score > best[position - 1].score || (score == best[position - 1].score && id < best[position - 1].id) {
                    position -= 1
                }
                best.insert((id, score), at: position)
                if best.count > limit { best.removeLast() }
            }
            return best
        }
    }
}

import Foundation

/// How much of a keyword query one snippet holds: each search term's document frequency and
/// whether the snippet holds it (in any column), with the number of snippets.
///
/// Hybrid search asks it of a short keyword ranking's first ten (every snippet that matches a word
/// at all): when none holds more than one word of the question ("fortune" of "a wealthy relative
/// dies and leaves me a fortune", most of the rest in no snippet at all), the best is a weak
/// witness, however far it stands above the few others (`Ranking.adaptiveFusion` weighs the
/// keyword ranking by the largest `share`).
public struct KeywordCoverage: Sendable, Hashable {
    public struct Term: Sendable, Hashable {
        public var term: String
        /// Snippets that hold it (0 when none does).
        public var documentFrequency: Double
        public var held: Bool

        public init(term: String, documentFrequency: Double, held: Bool) {
            self.term = term
            self.documentFrequency = documentFrequency
            self.held = held
        }
    }

    public var terms: [Term]
    public var snippets: Double

    public init(terms: [Term], snippets: Double) {
        self.terms = terms
        self.snippets = snippets
    }

    /// The query's idf-weighted share the snippet holds, 0…1: the idf of the terms it holds over
    /// the idf of all (a term no snippet holds counts as the rarest). 1 for a query without terms.
    /// idf as Lucene's bm25 (`log(1 + (n − df + 0.5) / (df + 0.5))`), never 0.
    public var share: Double {
        let n = max(snippets, 1)
        let weights = terms.map { log(1 + (n - min($0.documentFrequency, n) + 0.5) / ($0.documentFrequency + 0.5)) }
        let total = weights.reduce(0, +)
        guard total > 0 else { return 1 }
        return zip(terms, weights).reduce(0) { $0 + ($1.0.held ? $1.1 : 0) } / total
    }
}

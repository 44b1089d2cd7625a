import Dispatch
import KBCore
import KBStore

/// How a PostgreSQL index analyses keywords, fixed when it is made (`KB_TEXT_SEARCH`):
///
/// - `auto` (the default since 2026-11-28): kb's own analysis (`KeywordAnalyzer`, the `kb_fold`
///   rules SQLite uses) — each word by its script's rules, ideographs in pairs — its terms
///   written into the `tsvector` as they are and searched as they are, so an index in PostgreSQL
///   finds what the same index in SQLite finds;
/// - any text search configuration of the server's (`simple`, `english`, `russian`…): PostgreSQL's
///   parser and dictionaries (indexes made before `auto` have `simple`).
struct PostgresKeywords: Sendable {
    /// The recorded name: `auto`, or a text search configuration.
    let config: String
    /// kb's analysis, for `auto`.
    let analyzer: (any KeywordAnalyzer)?

    static let kbAnalysis = "auto"

    init(config: String, analyzer: (any KeywordAnalyzer)?) throws {
        self.config = config
        self.analyzer = config == Self.kbAnalysis ? analyzer : nil
        if config == Self.kbAnalysis, analyzer == nil {
            throw KBError(.invalidArgument, "This PostgreSQL index analyses keywords with kb's own rules (auto); open it through KnowledgeBase, which supplies them.")
        }
    }

    /// The words a keyword query searches for (function words of the languages each word may be
    /// in left out unless nothing else is left, as SQLite's `auto` does), nil when the text has
    /// none. With kb's analysis ideographs come in pairs, as it indexes them; PostgreSQL's parser
    /// keeps runs whole.
    func words(_ text: String) -> [String]? {
        KeywordQuery.searchWords(in: text, language: .auto, pairingIdeographs: analyzer != nil)
    }

    /// The lexemes of a query's words, as an SQL expression of type text[].
    func lexemes(_ words: [String], sql: inout SQL) -> String {
        if let analyzer { return "\(sql.bind(.texts(terms(of: words, analyzer))))::text[]" }
        return "ARRAY(SELECT lexeme FROM unnest(to_tsvector(\(sql.bind(.text(config)))::regconfig, \(sql.bind(.text(words.joined(separator: " ")))))))"
    }

    /// Each word's terms, without repeats.
    func terms(of words: [String], _ analyzer: any KeywordAnalyzer) -> [String] {
        var seen = Set<String>()
        return words.flatMap { analyzer.terms(in: $0) }.filter { seen.insert($0).inserted }
    }

    /// A snippet's tsvector under kb's analysis, as `tsvector` input text: the text's terms
    /// (weight C), the source title's (A), the heading path's and keywords' (B), positions
    /// counted on across them as `to_tsvector(…) || …` does.
    static func tsvector(_ analyzer: any KeywordAnalyzer, text: String, title: String, heading: String, keywords: String) -> String {
        analysed(analyzer, text: text, title: title, heading: heading, keywords: keywords).tsvector
    }

    /// A snippet's keyword rows as kb's analysis makes them: its `tsvector` text, and what the
    /// triggers would read from it: each term's frequency (the sum of its positions' weights,
    /// A 2, B 1.5, C 1) and the snippet's length (all of them), in halves.
    struct Analysis: Sendable {
        var tsvector: String
        var terms: [(term: String, frequency: UInt32)]
        var length: UInt32
    }

    /// The analyses of a document's snippets, in order.
    static func analyses(of document: SourceDocument, _ analyzer: any KeywordAnalyzer) -> [Analysis] {
        let keywords = document.source.keywords.joined(separator: "\n")
        return document.snippets.map {
            analysed(analyzer, text: $0.text, title: document.source.title, heading: $0.headingPathString, keywords: keywords)
        }
    }

    /// The analyses of many documents' snippets by source path, made on every core (off Swift's
    /// cooperative pool: the caller is one of the store's threads).
    static func analyses(of documents: [SourceDocument], _ analyzer: any KeywordAnalyzer) -> [String: [Analysis]] {
        let results = AnalysisSlots(count: documents.count)
        DispatchQueue.concurrentPerform(iterations: documents.count) { i in
            results.set(i, analyses(of: documents[i], analyzer))
        }
        return Dictionary(zip(documents.map(\.source.path), results.values), uniquingKeysWith: { first, _ in first })
    }

    /// `tsvector`, with the terms' frequencies and the length (`Analysis`).
    static func analysed(_ analyzer: any KeywordAnalyzer, text: String, title: String, heading: String, keywords: String) -> Analysis {
        var positions: [String: [(Int, Character)]] = [:]
        var position = 0
        for (field, weight) in [(text, Character("C")), (title, "A"), (heading, "B"), (keywords, "B")] {
            for term in analyzer.terms(in: field) where term.utf8.count < 2_048 {
                position += 1
                // PostgreSQL keeps positions up to 16,383 and 256 of them a lexeme.
                if position <= 16_383, positions[term, default: []].count < 256 { positions[term, default: []].append((position, weight)) }
            }
        }
        let halves: (Character) -> UInt32 = { $0 == "A" ? 4 : $0 == "B" ? 3 : 2 }
        var length: UInt32 = 0
        var terms: [(term: String, frequency: UInt32)] = []
        let text = positions.keys.sorted().map { term in
            let kept = positions[term]!
            let frequency = kept.reduce(UInt32(0)) { $0 + halves($1.1) }
            length += frequency
            terms.append((term, frequency))
            var entry = "'"
            if term.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "'") }) {
                entry += term.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
            } else {
                entry += term
            }
            entry += "':"
            for (index, (at, weight)) in kept.enumerated() {
                if index > 0 { entry += "," }
                entry += String(at)
                entry.append(weight)
            }
            return entry
        }.joined(separator: " ")
        return Analysis(tsvector: text, terms: terms, length: length)
    }
}

/// Results filled in by `concurrentPerform`, one slot each.
///
/// @unchecked Sendable: each slot is written by one iteration, and read after all have ended.
private final class AnalysisSlots: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<[PostgresKeywords.Analysis]>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: [])
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func set(_ index: Int, _ value: [PostgresKeywords.Analysis]) { slots[index] = value }

    var values: [[PostgresKeywords.Analysis]] { Array(slots) }
}

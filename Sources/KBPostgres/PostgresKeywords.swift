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
        var positions: [String: [(Int, Character)]] = [:]
        var position = 0
        for (field, weight) in [(text, Character("C")), (title, "A"), (heading, "B"), (keywords, "B")] {
            for term in analyzer.terms(in: field) where term.utf8.count < 2_048 {
                position += 1
                // PostgreSQL keeps positions up to 16,383 and 256 of them a lexeme.
                if position <= 16_383, positions[term, default: []].count < 256 { positions[term, default: []].append((position, weight)) }
            }
        }
        return positions.keys.sorted().map { term in
            let quoted = "'" + term.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
            return quoted + ":" + positions[term]!.map { "\($0.0)\($0.1)" }.joined(separator: ",")
        }.joined(separator: " ")
    }
}

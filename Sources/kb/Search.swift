public import ArgumentParser
import Foundation
public import KBCore
import KBKit

extension SearchMode: ExpressibleByArgument {}
extension SourceKind: ExpressibleByArgument {}

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find the snippets that best match a query.",
        discussion: """
            The query is plain words: quotes, *, -, :, parentheses and NEAR are not search syntax. \
            hybrid (the default) fuses keyword (FTS5 bm25) and vector (cosine) ranks with reciprocal rank \
            fusion; on an index without vectors it runs as keyword. Filters apply before ranking. \
            Scores are higher for better matches and comparable only within one result list: keyword = \
            negated bm25, vector = cosine similarity, hybrid = sum of weight/(60 + rank).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .short, help: "How many hits to return.")
    var k = 8

    @Option(name: .customLong("tag"), help: ArgumentHelp("Only snippets with this tag (repeatable; all must match).", valueName: "tag"))
    var tags: [String] = []

    @Option(name: .customLong("kind"), help: ArgumentHelp("Only sources of this kind: note, pdf or memory (repeatable). Memories are searched only when named.", valueName: "kind"))
    var kinds: [SourceKind] = []

    @Option(name: .customLong("source"), help: ArgumentHelp("Only sources whose path starts with this (a folder matches what is inside it; repeatable).", valueName: "path-prefix"))
    var sources: [String] = []

    @Option(help: "Ranking: hybrid, vector or keyword.")
    var mode: SearchMode = .hybrid

    @Option(name: .customLong("group-by"), help: ArgumentHelp("Collapse hits: 'source' keeps the best snippet of each source.", valueName: "source"))
    var groupBy: String?

    @Option(help: ArgumentHelp("Maximal marginal relevance λ, 0…1 (1 = relevance only, lower = more varied).", valueName: "λ"))
    var diversity: Double?

    @Flag(help: "Scan an int8 copy of the vectors, then rescore the best candidates exactly (faster on large indexes).")
    var quantized = false

    @Option(help: "Candidates each ranking contributes before fusion.")
    var candidates = 50

    @Option(name: .customLong("keyword-weight"), help: "Weight of keyword ranks in hybrid fusion.")
    var keywordWeight = 1.0

    @Option(name: .customLong("vector-weight"), help: "Weight of vector ranks in hybrid fusion.")
    var vectorWeight = 1.0

    @Argument(help: "What to look for.")
    var query: [String]

    func validate() throws {
        guard (1...1000).contains(k) else { throw ValidationError("-k must be between 1 and 1000.") }
        if query.joined().trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Give a query to search for.") }
        if let groupBy, groupBy != "source" { throw ValidationError("--group-by takes 'source'.") }
        if let diversity, !(0...1).contains(diversity) { throw ValidationError("--diversity must be between 0 and 1.") }
        guard (1...10_000).contains(candidates) else { throw ValidationError("--candidates must be between 1 and 10000.") }
        guard keywordWeight >= 0, vectorWeight >= 0, keywordWeight + vectorWeight > 0 else {
            throw ValidationError("--keyword-weight and --vector-weight must be zero or more, and not both zero.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            var search = SearchQuery(query.joined(separator: " "))
            search.limit = k
            search.tags = tags.map { Tag($0) }
            search.kinds = Set(kinds)
            search.sourcePrefixes = sources.map(KnowledgeBase.sourcePrefix)
            search.mode = mode
            search.groupBySource = groupBy == "source"
            search.diversity = diversity
            search.candidates = candidates
            search.keywordWeight = keywordWeight
            search.vectorWeight = vectorWeight
            search.quantized = quantized
            let results = try await kb.search(search)
            let hits = results.hits
            if global.json {
                try Terminal.printJSON(results)
                return
            }
            if hits.isEmpty {
                print("No matches for \"\(search.text)\".")
                return
            }
            for hit in hits {
                var location = Terminal.display(hit.sourcePath)
                if !hit.snippet.headingPath.isEmpty { location += " › " + hit.snippet.headingPathString }
                if let pages = hit.snippet.pages { location += ", " + pages.citation }
                let title = hit.sourceTitle.isEmpty && hit.kind == .memory ? "memory \(hit.sourcePath.dropFirst(7).prefix(8))" : hit.sourceTitle
                print("\(hit.rank). \(Terminal.bold(title))  (score \(String(format: "%.3f", hit.score)))")
                print("   \(location)")
                if !hit.snippet.tags.isEmpty { print("   tags: " + hit.snippet.tags.map(\.name).joined(separator: ", ")) }
                print("   " + Terminal.shorten(hit.excerpt.replacingOccurrences(of: "\n", with: " ")))
                print("")
            }
            if Terminal.stdoutIsTerminal || results.mode != mode {
                let how = results.embedder.map { "\(results.mode.rawValue) search with \($0)" } ?? "\(results.mode.rawValue) search"
                FileHandle.standardError.write(Data("(\(how)\(results.mode != mode ? "; the index has no vectors" : ""))\n".utf8))
            }
        }
    }
}


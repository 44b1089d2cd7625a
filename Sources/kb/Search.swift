public import ArgumentParser
import Foundation
public import KBCore
import KBKit

extension SearchMode: ExpressibleByArgument {}
extension SourceKind: ExpressibleByArgument {}

struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find the snippets that best match a query.",
        discussion: """
            The query is plain words: quotes, *, -, :, parentheses and NEAR are not search syntax. \
            Scores are higher for better matches and are comparable only within one result list \
            (keyword mode: the negated FTS5 bm25 value).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .short, help: "How many hits to return.")
    var k = 8

    @Option(name: .customLong("tag"), help: ArgumentHelp("Only snippets with this tag (repeatable; all must match).", valueName: "tag"))
    var tags: [String] = []

    @Option(name: .customLong("kind"), help: ArgumentHelp("Only sources of this kind: note, pdf or memory (repeatable).", valueName: "kind"))
    var kinds: [SourceKind] = []

    @Option(name: .customLong("source"), help: ArgumentHelp("Only sources whose path starts with this (a folder matches what is inside it; repeatable).", valueName: "path-prefix"))
    var sources: [String] = []

    @Option(help: "Ranking: keyword (bm25). hybrid and vector arrive with embeddings.")
    var mode: SearchMode = .keyword

    @Argument(help: "What to look for.")
    var query: [String]

    func validate() throws {
        guard (1...1000).contains(k) else { throw ValidationError("-k must be between 1 and 1000.") }
        if query.joined().trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Give a query to search for.") }
    }

    func run() throws {
        try reportingErrors {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            var search = SearchQuery(query.joined(separator: " "))
            search.limit = k
            search.tags = tags.map { Tag($0) }
            search.kinds = Set(kinds)
            search.sourcePrefixes = sources.map(KnowledgeBase.sourcePrefix)
            search.mode = mode
            let hits = try kb.search(search)
            if global.json {
                try Terminal.printJSON(SearchOutput(query: search.text, mode: mode, hits: hits))
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
                print("\(hit.rank). \(Terminal.bold(hit.sourceTitle))  (score \(String(format: "%.3f", hit.score)))")
                print("   \(location)")
                if !hit.snippet.tags.isEmpty { print("   tags: " + hit.snippet.tags.map(\.name).joined(separator: ", ")) }
                print("   " + hit.excerpt.replacingOccurrences(of: "\n", with: " "))
                print("")
            }
        }
    }
}

struct SearchOutput: Encodable {
    var query: String
    var mode: SearchMode
    var hits: [SearchHit]
}

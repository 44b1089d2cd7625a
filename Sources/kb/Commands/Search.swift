import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBRequests

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find the snippets that best match a query.",
        discussion: """
            The query is plain words: quotes, *, -, :, parentheses and NEAR are not search syntax. \
            hybrid (the default) fuses keyword (FTS5 bm25) and vector (cosine) ranks with reciprocal rank \
            fusion; on an index without vectors it runs as keyword. Filters apply before ranking; --bot \
            searches only that bot's knowledge sources. \
            Scores are higher for better matches and comparable only within one result list: keyword = \
            negated bm25, vector = cosine similarity, hybrid = sum of weight/(60 + rank).
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var endpoint: EndpointOption

    @Option(name: .short, help: "How many hits to return. \(SearchRequest.valuesAndDefault("k"))")
    var k: Int?

    @Option(name: .customLong("tag"), help: ArgumentHelp("Only snippets with this tag (repeatable; all must match).", valueName: "tag"))
    var tags: [String] = []

    @Option(name: .customLong("any-tag"), help: ArgumentHelp("Only snippets with at least one of these tags (repeatable).", valueName: "tag"))
    var anyTags: [String] = []

    @Option(name: .customLong("kind"), help: ArgumentHelp("Only sources of this kind (repeatable). Memories are searched only when named. \(SearchRequest.valuesAndDefault("kinds"))", valueName: "kind"))
    var kinds: [String] = []

    @Option(name: .customLong("source"), help: ArgumentHelp("Only sources whose path starts with this (a folder matches what is inside it; repeatable).", valueName: "path-prefix"))
    var sources: [String] = []

    @Option(help: ArgumentHelp("Only what this bot may see (its knowledge sources).", valueName: "name"))
    var bot: String?

    @Option(help: ArgumentHelp("Also search the private sources of this user (added with `user`); without it, no private source is searched.", valueName: "user"))
    var user: String?

    @Option(help: ArgumentHelp("Ranking. \(SearchRequest.valuesAndDefault("mode"))", valueName: "mode"))
    var mode: String?

    @Option(name: .customLong("group-by"), help: ArgumentHelp("Collapse hits: 'source' keeps the best snippet of each source.", valueName: "source"))
    var groupBy: String?

    @Option(help: ArgumentHelp("Maximal marginal relevance λ, 0…1 (1 = relevance only, lower = more varied).", valueName: "λ"))
    var diversity: Double?

    @Flag(help: "Scan an int8 copy of the vectors, then rescore the best candidates exactly (faster on large indexes).")
    var quantized = false

    @Option(help: "Candidates each ranking contributes before fusion. \(SearchRequest.valuesAndDefault("candidates"))")
    var candidates: Int?

    @Option(help: ArgumentHelp("How hybrid search fuses its rankings. \(SearchRequest.valuesAndDefault("fusion"))", valueName: "fusion"))
    var fusion: String?

    @Option(name: .customLong("keyword-weight"), help: "Weight of keyword ranks in hybrid fusion. \(SearchRequest.valuesAndDefault("keywordWeight"))")
    var keywordWeight: Double?

    @Option(name: .customLong("vector-weight"), help: "Weight of vector ranks in hybrid fusion. \(SearchRequest.valuesAndDefault("vectorWeight"))")
    var vectorWeight: Double?

    @Argument(help: "What to look for.")
    var query: [String]

    /// The request these arguments make.
    var request: SearchRequest {
        var request = SearchRequest(query: query.joined(separator: " "))
        request.k = k
        request.tags = tags.isEmpty ? nil : tags
        request.anyTags = anyTags.isEmpty ? nil : anyTags
        request.kinds = kinds.isEmpty ? nil : kinds
        request.sources = sources.isEmpty ? nil : sources.map(SourcePaths.absolute)
        request.bot = bot
        request.user = user
        request.mode = mode
        request.groupBy = groupBy
        request.diversity = diversity
        request.candidates = candidates
        request.fusion = fusion
        request.keywordWeight = keywordWeight
        request.vectorWeight = vectorWeight
        request.quantized = quantized ? true : nil
        return request
    }

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let search = try checked(request)
            KnowledgeBase.configure(.latency)
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false, embedderURL: endpoint.url)
            try endpoint.install(on: kb)
            let results = try await kb.search(search, as: .commandLine)
            let hits = results.hits
            if global.json {
                try Terminal.printJSON(results)
                return
            }
            Terminal.warn(results.degraded)
            if hits.isEmpty {
                print("No matches for \"\(results.query)\".")
                return
            }
            for hit in hits {
                var location = Terminal.display(hit.sourcePath)
                if !hit.snippet.headingPath.isEmpty { location += " › " + hit.snippet.headingPathString }
                if let pages = hit.snippet.pages { location += ", " + pages.citation }
                if let ocr = hit.snippet.ocr { location += " (" + ocr.label + ")" }
                if let weight = hit.snippet.weight { location += " (weight \(weight.formatted()))" }
                let title = hit.sourceTitle.isEmpty && hit.kind == .memory ? "memory \(hit.sourcePath.dropFirst(7).prefix(8))" : hit.sourceTitle
                print("\(hit.rank). \(Terminal.bold(title))  (score \(String(format: "%.3f", hit.score)))")
                print("   \(location)")
                if !hit.snippet.tags.isEmpty { print("   tags: " + hit.snippet.tags.map(\.name).joined(separator: ", ")) }
                print("   " + Terminal.shorten(hit.excerpt.replacingOccurrences(of: "\n", with: " ")))
                print("")
            }
            let asked = search.valid.query.mode
            if (Terminal.stdoutIsTerminal || results.mode != asked) && results.degraded == nil {
                let how = results.embedder.map { "\(results.mode.rawValue) search with \($0)" } ?? "\(results.mode.rawValue) search"
                FileHandle.standardError.write(Data("(\(how)\(results.mode != asked ? "; the index has no vectors" : ""))\n".utf8))
            }
        }
    }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBMemory
import KBRequests

extension MemoryCommand {
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recall the memories that best match a query.",
            discussion: """
                Ranked like `kb search` (hybrid by default). Only the scopes given are searched (all when \
                none is given); superseded memories are left out unless --include-superseded. With \
                --half-life, a memory's score is multiplied by 2^(−age/half-life), age counted from its \
                last update.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var endpoint: EndpointOption

        @Option(name: .short, help: "How many memories to return. \(RecallRequest.valuesAndDefault("k"))")
        var k: Int?

        @Option(name: .customLong("scope"), help: ArgumentHelp("Search this scope (repeatable).", valueName: "scope"))
        var scopes: [String] = []

        @Option(name: .customLong("tag"), help: ArgumentHelp("Only memories with this tag (repeatable; all must match).", valueName: "tag"))
        var tags: [String] = []

        @Option(help: ArgumentHelp("Ranking. \(RecallRequest.valuesAndDefault("mode"))", valueName: "mode"))
        var mode: String?

        @Option(name: .customLong("half-life"), help: ArgumentHelp("Prefer recent memories: 30d, 12h, 2w…", valueName: "duration"))
        var halfLife: String?

        @Flag(name: .customLong("include-superseded"), help: "Also search memories superseded by newer ones, closed, expired or marked wrong.")
        var includeSuperseded = false

        @Option(name: .customLong("as-of"), help: ArgumentHelp("Recall what held at this time (ISO 8601 date or time) instead of now.", valueName: "time"))
        var asOf: String?

        @Argument(help: "What to recall.")
        var query: [String]

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = RecallRequest(query: query.joined(separator: " "))
                request.k = k
                request.scopes = scopes.isEmpty ? nil : scopes
                request.tags = tags.isEmpty ? nil : tags
                request.mode = mode
                request.halfLife = halfLife
                request.includeSuperseded = includeSuperseded ? true : nil
                request.asOf = asOf
                let valid = try checked(request)
                KnowledgeBase.configure(.latency)
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false, embedderURL: endpoint.url)
                try endpoint.install(on: kb)
                let results = try await kb.recall(valid, as: .commandLine)
                if global.json {
                    try Terminal.printJSON(results)
                    return
                }
                Terminal.warn(results.degraded)
                if let during = results.during {
                    let from = during.start.map { " from \(MemoryArchive.format($0))" } ?? ""
                    let to = during.end.map { " until \(MemoryArchive.format($0))" } ?? ""
                    print("(The query names a time: memories \(during.told ? "said" : "that held")\(from)\(to).)")
                }
                if results.hits.isEmpty {
                    print("No memories match \"\(results.query)\"\(scopes.isEmpty ? "" : " in " + scopes.joined(separator: ", ")).")
                    return
                }
                for hit in results.hits {
                    print("\(hit.rank). (score \(String(format: "%.3f", hit.score))) ", terminator: "")
                    MemoryCommand.printMemory(hit.memory, long: false)
                }
            }
        }
    }
}

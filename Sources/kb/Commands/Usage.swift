import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBStore

struct Usage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarise what kb serve answered: requests, errors, degraded answers, results, tokens served and latency.",
        discussion: """
            Reads the request log kb serve keeps with the index (search, recall, context, memory extraction and source \
            requests; 30 days by default, --log-retention). --by report gives the context tokens each report was served; \
            the embedding tokens each remote embedder reported are listed too.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("How far back, e.g. 7d or 12h.", valueName: "duration"))
    var since = "7d"

    @Option(help: ArgumentHelp("Group by day, bot, report or route.", valueName: "grouping"))
    var by = "day"

    func validate() throws {
        guard UsageGrouping(rawValue: by) != nil else { throw ValidationError("--by takes day, bot, report or route.") }
    }

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let seconds: TimeInterval
            do { seconds = try Recency(since).halfLife } catch {
                throw KBError(.invalidArgument, "--since '\(since)' is not a duration; use e.g. 7d, 12h, 90m.")
            }
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let report = try await kb.usage(since: Date(timeIntervalSinceNow: -seconds), by: UsageGrouping(rawValue: by)!, as: .admin)
            if global.json {
                try Terminal.printJSON(report)
                return
            }
            if report.rows.isEmpty { print("No requests logged in the last \(since).") }
            let header = [by, "requests", "errors", "degraded", "results", "tokens", "mean ms", "p50 ms", "p99 ms", "max ms"]
            let rows = report.rows.map { row in
                [row.key.isEmpty ? "(none)" : row.key, String(row.requests), String(row.errors), String(row.degraded), String(row.results),
                 String(row.tokens), String(format: "%.1f", row.meanLatencyMilliseconds), String(format: "%.1f", row.p50LatencyMilliseconds),
                 String(format: "%.1f", row.p99LatencyMilliseconds), String(format: "%.1f", row.maxLatencyMilliseconds)]
            }
            if !rows.isEmpty {
                let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
                for line in [header] + rows {
                    print(line.enumerated().map { column, cell in
                        column == 0 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                                    : String(repeating: " ", count: widths[column] - cell.count) + cell
                    }.joined(separator: "  "))
                }
            }
            for (embedder, tokens) in report.embeddingTokens.sorted(by: { $0.key < $1.key }) {
                print("embedding tokens, \(embedder): \(tokens)")
            }
        }
    }
}

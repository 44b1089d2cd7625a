import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBStore

struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Build or drop an approximate (HNSW) vector index in a PostgreSQL index; rewrite the keyword index.",
        subcommands: [Build.self, Drop.self, Optimize.self])

    struct Optimize: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rewrite the keyword index so that searches read as little as they can.",
            discussion: """
                PostgreSQL: merges the postings written since the last merge and drops deleted snippets' postings, then \
                builds every word's blocks anew (each frequent word's best postings apart). Writes do the first part \
                on their own once enough has changed; run this after a large load or upgrade. SQLite: merges the \
                keyword table's segments.
                """)

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let report = try await KnowledgeBase.open(at: global.databasePath, create: false).optimizeKeywordIndex(as: .admin)
                if global.json {
                    try Terminal.printJSON(report)
                } else {
                    print("Rewrote the keyword index in \(String(format: "%.2f", report.seconds)) s: \(report.terms) words, \(report.blocks) blocks"
                          + " (\(report.merged) postings merged, \(report.dropped) of deleted snippets dropped).")
                    Terminal.report(report.checkpoint)
                }
            }
        }
    }

    struct Build: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build an HNSW index over the vectors; unfiltered vector searches then walk it instead of scanning every vector.",
            discussion: "Reports the build time and recall@10 against the exact ranking, measured with stored vectors as queries. An index built with the same --m and --ef-construction is kept and only --ef-search recorded, so trying another --ef-search costs no build.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Build an HNSW index (pgvector).")
        var hnsw = false

        @Option(name: .customLong("m"), help: "Links per node.")
        var m = HNSWSettings().m

        @Option(name: .customLong("ef-construction"), help: "Candidates kept while building.")
        var efConstruction = HNSWSettings().efConstruction

        @Option(name: .customLong("ef-search"), help: "Candidates kept while searching (more: slower, closer to exact).")
        var efSearch = HNSWSettings().efSearch

        @Option(help: "Stored vectors used as queries to measure recall.")
        var sample = 100

        func validate() throws {
            if !hnsw { throw ValidationError("Say which index to build: --hnsw (the only kind there is).") }
        }

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let report = try await kb.buildApproximateIndex(HNSWSettings(m: m, efConstruction: efConstruction, efSearch: efSearch), sample: sample, as: .admin)
                if global.json {
                    try Terminal.printJSON(report)
                } else {
                    let built = report.kept
                        ? "Kept the HNSW index over \(report.vectors) vectors of \(report.embedder) (built earlier with m \(m), ef_construction \(efConstruction)); "
                        : "Built an HNSW index over \(report.vectors) vectors of \(report.embedder) (m \(m), ef_construction \(efConstruction)) in "
                            + "\(String(format: "%.2f", report.seconds)) s; "
                    print(built + "recall@10 against exact search \(String(format: "%.3f", report.recallAt10)) "
                          + "over \(report.sampled) queries at ef_search \(efSearch).")
                    Terminal.report(report.checkpoint)
                }
            }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Drop the HNSW index: vector searches are exact again.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let dropped = try await KnowledgeBase.open(at: global.databasePath, create: false).dropApproximateIndex(as: .admin)
                if global.json { try Terminal.printJSON(["dropped": dropped]) } else { print(dropped ? "Dropped the HNSW index." : "There was no HNSW index.") }
            }
        }
    }
}

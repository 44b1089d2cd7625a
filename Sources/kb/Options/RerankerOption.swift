import ArgumentParser
import Foundation
import KBCore
import KBEmbed
import KBKit
import KBRetrieval

/// The second stage (`--reranker URL --reranker-model NAME`): a re-ranking endpoint kb asks about
/// the best candidates of every search, context and recall, blending its scores with the first
/// stage's order (`RerankingStage`). Key in KB_RERANKER_API_KEY.
struct RerankerOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "A re-ranking endpoint's base URL (kb posts to URL/rerank, the format of llama.cpp, text-embeddings-inference, Infinity, LocalAI, Cohere and Jina; key in $KB_RERANKER_API_KEY), e.g. http://127.0.0.1:8012/v1.",
        valueName: "url"))
    var reranker: String?

    @Option(name: .customLong("reranker-model"), help: ArgumentHelp("The re-ranking model's name, e.g. bge-reranker-v2-m3.", valueName: "name"))
    var model: String?

    @Option(name: .customLong("rerank-depth"), help: ArgumentHelp("Candidates of each search the second stage reorders.", valueName: "n"))
    var depth = RerankingStage.defaultDepth

    @Option(name: .customLong("rerank-timeout"), help: ArgumentHelp("Seconds one re-ranking request may take before the answer keeps the first stage's order (marked degraded).", valueName: "seconds"))
    var timeout: Double = 10

    func validate() throws {
        if reranker == nil, model != nil { throw ValidationError("--reranker-model needs --reranker URL.") }
        guard (1...1000).contains(depth) else { throw ValidationError("--rerank-depth must be between 1 and 1000.") }
        guard timeout >= 1 else { throw ValidationError("--rerank-timeout must be at least 1 second.") }
    }

    /// The stage these options ask for, nil without `--reranker`.
    func stage() throws -> (any RetrievalStage)? {
        guard let reranker else { return nil }
        guard let url = URL(string: reranker) else { throw KBError(.invalidArgument, "--reranker \(reranker) is not a URL; give the base URL, e.g. http://127.0.0.1:8012/v1.") }
        var configuration = HTTPReranker.Configuration(model: model ?? "", baseURL: url,
                                                       apiKey: ProcessInfo.processInfo.environment["KB_RERANKER_API_KEY"])
        configuration.timeout = timeout
        return RerankingStage(reranker: try HTTPReranker(configuration), depth: depth)
    }

    /// Runs the stage in every retrieval of `kb`, when one was asked for.
    func install(on kb: KnowledgeBase) throws {
        if let stage = try stage() { kb.useRetrievalStage(stage) }
    }
}

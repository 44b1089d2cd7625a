import ArgumentParser
import Foundation
import KBCore
import KBKit

struct EndpointOption: ParsableArguments {
    @Option(name: .customLong("embedder-url"), help: ArgumentHelp(
        "Embed with this OpenAI-compatible endpoint instead of the one the index recorded (default: $KB_EMBEDDINGS_URL); the model stays the one recorded.",
        valueName: "url"))
    var url: String?

    @OptionGroup var precision: PrecisionOption

    @OptionGroup(title: "Second stage") var rerank: RerankerOption

    @OptionGroup(title: "Query rewriting") var rewrite: RewriterOption

    /// Installs the re-ranker and the rewriter these options ask for on `kb`.
    func install(on kb: KnowledgeBase) throws {
        try rerank.install(on: kb)
        try rewrite.install(on: kb)
    }
}

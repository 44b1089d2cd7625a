import ArgumentParser
import Foundation
import KBCore
import KBKit

/// `--embedder`, shared by the commands that embed.
struct EmbedderOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "local (all-MiniLM-L6-v2: English only, the fastest), local:NAME (an installed model), none (keyword-only), hashing, or openai:MODEL (an OpenAI-compatible endpoint). A new index gets multilingual-e5-small ($KB_MODEL_DIR's model when set); an existing index keeps the embedder it was built with.",
        valueName: "name"))
    var embedder: String?

    @Option(name: .long, help: ArgumentHelp(
        "A local model installed with scripts/install-model.sh NAME: multilingual-e5-small (the default for a new index) or all-MiniLM-L6-v2 (English only, faster); the same as --embedder local:NAME.",
        valueName: "name"))
    var model: String?

    @Option(name: .customLong("embedder-url"), help: ArgumentHelp(
        "The OpenAI-compatible API for --embedder openai:MODEL (default https://api.openai.com/v1; the key comes from $KB_EMBEDDINGS_API_KEY); alone, a new endpoint for an index built with one.",
        valueName: "url"))
    var embedderURL: String?

    @Option(name: .customLong("query-prefix"), help: ArgumentHelp(
        "Text put before every query, e.g. 'query: ' for e5 models (replaces the local model's own prompt; recorded with the index).",
        valueName: "text"))
    var queryPrefix: String?

    @Option(name: .customLong("passage-prefix"), help: ArgumentHelp(
        "Text put before every passage, e.g. 'passage: ' for e5 models (replaces the local model's own prompt; recorded with the index).",
        valueName: "text"))
    var passagePrefix: String?

    @OptionGroup var precision: PrecisionOption

    /// The embedder named (with prefixes, when given: then the local model unless another is
    /// named); nil leaves the index's own (or the local model for a new index).
    func choice() throws -> EmbedderChoice? {
        if embedderURL != nil, let embedder, !embedder.lowercased().hasPrefix("openai:") {
            throw KBError(.invalidArgument, "--embedder-url goes with --embedder openai:MODEL, or alone for an index built with one.")
        }
        if model != nil, embedder != nil {
            throw KBError(.invalidArgument, "Give --model NAME or --embedder, not both (--model NAME is --embedder local:NAME).")
        }
        let named = try (model.map { "local:" + $0 } ?? embedder).map { try EmbedderChoice($0, url: embedderURL) }
        guard queryPrefix != nil || passagePrefix != nil else { return named }
        return try EmbedderChoice.with(named ?? .local, queryPrefix: queryPrefix, passagePrefix: passagePrefix)
    }

    /// Without --embedder, --embedder-url points an `openai:` index at a new endpoint.
    var endpoint: String? { embedder == nil ? embedderURL : nil }
}

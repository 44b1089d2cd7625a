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
}

import ArgumentParser
import Foundation
import KBCore
import KBKit

/// `--embedder-url` for the commands that embed queries: where an index built with
/// `--embedder openai:MODEL` finds its endpoint now.
/// The chat model memory extraction asks (`--llm openai:MODEL --llm-url URL`, key in
/// KB_LLM_API_KEY or OPENAI_API_KEY); without it, kb's explicit patterns.
struct LLMOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Propose memories from conversations with this chat model (openai:MODEL, any OpenAI-compatible chat completions endpoint; key in $KB_LLM_API_KEY) instead of kb's explicit patterns.",
        valueName: "openai:model"))
    var llm: String?

    @Option(name: .customLong("llm-url"), help: ArgumentHelp("The chat model's base URL (default: OpenAI's API), e.g. http://127.0.0.1:11434/v1.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("llm-timeout"), help: ArgumentHelp("Seconds the chat model may take.", valueName: "seconds"))
    var timeout: Double = 30

    func model() throws -> ChatModel? {
        guard let llm else {
            if url != nil { throw KBError(.invalidArgument, "--llm-url needs --llm openai:MODEL.") }
            return nil
        }
        return try ChatModel(spec: llm, url: url, timeout: timeout, environment: ProcessInfo.processInfo.environment)
    }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBLanguageModel

/// The chat model kb asks (`--llm openai:MODEL --llm-url URL`, key in KB_LLM_API_KEY or
/// OPENAI_API_KEY): `kb serve` sends chat completions to it, and memories are proposed with it;
/// without it, kb's explicit patterns propose memories and there are no chat completions.
struct LLMOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The chat model (openai:MODEL, any OpenAI-compatible chat completions endpoint; key in $KB_LLM_API_KEY): it proposes memories from conversations instead of kb's explicit patterns, and kb serve sends /v1/chat/completions to it.",
        valueName: "openai:model"))
    var llm: String?

    @Option(name: .customLong("llm-url"), help: ArgumentHelp("The chat model's base URL (default: OpenAI's API), e.g. http://127.0.0.1:11434/v1.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("llm-timeout"), help: ArgumentHelp("Seconds the chat model may take to start answering (and to send each next part of a streamed answer).", valueName: "seconds"))
    var timeout: Double = 30

    func model() throws -> ChatModel? {
        guard let llm else {
            if url != nil { throw KBError(.invalidArgument, "--llm-url needs --llm openai:MODEL.") }
            return nil
        }
        return try ChatModel(spec: llm, url: url, timeout: timeout, environment: ProcessInfo.processInfo.environment)
    }
}

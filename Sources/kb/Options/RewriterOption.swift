import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBLanguageModel

/// Query rewriting (`--rewriter openai:MODEL --rewriter-url URL`): a chat model rewrites each
/// follow-up (a turn with a history) into a standalone question and a few expansions, fused with
/// kb's own plan (`ChatRewriter`). Key in KB_LLM_API_KEY or OPENAI_API_KEY.
struct RewriterOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "A chat model (openai:MODEL, any OpenAI-compatible endpoint; key in $KB_LLM_API_KEY) that rewrites each follow-up into a standalone question and expansions, fused with kb's own plan.",
        valueName: "openai:model"))
    var rewriter: String?

    @Option(name: .customLong("rewriter-url"), help: ArgumentHelp("The rewriter's base URL (default: OpenAI's API), e.g. http://127.0.0.1:11434/v1.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("rewriter-timeout"), help: ArgumentHelp("Seconds the rewriter may take before the turn is searched without it (marked degraded).", valueName: "seconds"))
    var timeout: Double = 10

    func validate() throws {
        if rewriter == nil, url != nil { throw ValidationError("--rewriter-url needs --rewriter openai:MODEL.") }
        guard timeout >= 1 else { throw ValidationError("--rewriter-timeout must be at least 1 second.") }
    }

    /// Rewrites every follow-up `kb` searches, when a rewriter was asked for.
    func install(on kb: KnowledgeBase) throws {
        guard let rewriter else { return }
        let model = try ChatModel(spec: rewriter, url: url, timeout: timeout, environment: ProcessInfo.processInfo.environment)
        kb.useQueryRewriter(ChatRewriter(model: model))
    }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit

@main
struct KB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kb",
        abstract: "A local knowledge base: ingest notes, search them, give bots the right context.",
        discussion: """
            The index is one SQLite file: --db PATH, else $KB_DB, else $XDG_DATA_HOME/kb/kb.sqlite \
            (~/.local/share/kb/kb.sqlite). Every command takes --json for one JSON document on stdout.
            Exit codes: 0 success, 1 failure, 64 bad usage (a bad option or value; nothing was done).
            """,
        version: KBVersion.current,
        subcommands: commands)

    /// Every command; `serve` and `mcp` need the Server trait (on by default).
    static var commands: [any ParsableCommand.Type] {
        var commands: [any ParsableCommand.Type] = [Ingest.self, Search.self, Sources.self, Remove.self, Status.self, Inspect.self, Embed.self,
                                                    Eval.self, MemoryCommand.self, BotCommand.self, Context.self]
        #if Server
        commands += [Serve.self, MCP.self, TokenCommand.self, Usage.self]
        #endif
        return commands + [Reindex.self, Export.self, IndexCommand.self]
    }
}

enum KBVersion {
    static let current = "0.1.0"
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The index: a file, or a PostgreSQL database as postgres://USER@HOST:PORT/DATABASE (default: $KB_DB, else ~/.local/share/kb/kb.sqlite).", valueName: "index"))
    var db: String?

    @Flag(name: .long, help: "Print one JSON document on stdout instead of text.")
    var json = false

    var databasePath: String { db ?? KnowledgeBase.defaultLocation() }
}

/// A request that failed its check: bad usage (exit 64), nothing was done.
struct BadRequest: Error {
    let error: KBError
}

/// Checks a request before anything is opened; its problems are bad usage (exit 64).
func checked<R: KBRequest>(_ request: R, _ limits: Limits = Limits()) throws -> R {
    try checked { try request.check(limits) }
    return request
}

/// What `validate` makes of a request (its checked form, which flows down unchecked again); a
/// request the limits refuse is bad usage (exit 64).
func checked<T>(_ validate: () throws -> T) throws -> T {
    do {
        return try validate()
    } catch let error as KBError {
        throw BadRequest(error: error)
    }
}

/// Turns kb's errors into a message on stderr — `{"error": {"code", "message"}}` with --json,
/// as the HTTP service answers — and exit code 1, or 64 for a bad request.
func reportingErrors(json: Bool = false, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let bad as BadRequest {
        report(bad.error, json: json)
        throw ExitCode(64)
    } catch let error as KBError {
        report(error, json: json)
        throw ExitCode.failure
    }
}

/// The body of a command that answers one request from an existing index: checks the request,
/// opens the index, answers, and prints the answer — JSON with --json, else `text` of it.
func answerFromIndex<R: KBRequest, T: Encodable>(_ request: R, _ global: GlobalOptions, text: (T) -> String,
                                                 _ answer: (KnowledgeBase, R) async throws -> T) async throws {
    try await reportingErrors(json: global.json) {
        let request = try checked(request)
        let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
        let result = try await answer(kb, request)
        if global.json { try Terminal.printJSON(result) } else { print(text(result)) }
    }
}

func report(_ error: KBError, json: Bool) {
    guard json, let text = try? KBJSON.text(["error": ["code": error.code.rawValue, "message": error.message]]) else {
        Terminal.error(error.message)
        return
    }
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// `--embedder`, shared by the commands that embed.
struct EmbedderOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "local (the built-in model; the default for a new index), none (keyword-only), hashing, or openai:MODEL (an OpenAI-compatible endpoint). An existing index keeps the embedder it was built with.",
        valueName: "name"))
    var embedder: String?

    @Option(name: .long, help: ArgumentHelp(
        "A local model installed with scripts/install-model.sh NAME, e.g. multilingual-e5-small (the same as --embedder local:NAME).",
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

struct EndpointOption: ParsableArguments {
    @Option(name: .customLong("embedder-url"), help: ArgumentHelp(
        "Embed with this OpenAI-compatible endpoint instead of the one the index recorded (default: $KB_EMBEDDINGS_URL); the model stays the one recorded.",
        valueName: "url"))
    var url: String?

    @OptionGroup var precision: PrecisionOption
}

/// `--precision`, shared by every command that may load the local model.
struct PrecisionOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The local model's arithmetic: auto (bf16 where the CPU has AVX-512 BF16, else fp32; the default), fp32, bf16 or int8 (AVX-512 VNNI). Vectors of every precision may share one index. $KB_PRECISION overrides it.",
        valueName: "precision"))
    var precision: String?

    /// Parsing chooses the precision the process's model loads with (before anything loads it).
    mutating func validate() throws {
        guard let precision else { return }
        do {
            ProcessPrecision.set(try EncoderPrecision(parsing: precision))
        } catch let error as KBError {
            throw ValidationError(error.message)
        }
    }
}

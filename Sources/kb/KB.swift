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
            Exit codes: 0 success, 1 failure, 64 bad usage.
            """,
        version: KBVersion.current,
        subcommands: [Ingest.self, Search.self, Sources.self, Remove.self, Status.self, Inspect.self, Embed.self, Eval.self, MemoryCommand.self, BotCommand.self, Context.self, Serve.self, MCP.self, Reindex.self])
}

enum KBVersion {
    static let current = "0.1.0"
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The index file.", valueName: "path"))
    var db: String?

    @Flag(name: .long, help: "Print one JSON document on stdout instead of text.")
    var json = false

    var databasePath: String { db ?? KnowledgeBase.defaultLocation() }
}

/// Turns kb's errors into a message on stderr and exit code 1; usage errors stay 64.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as KBError {
        Terminal.error(error.message)
        throw ExitCode.failure
    }
}

func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as KBError {
        Terminal.error(error.message)
        throw ExitCode.failure
    }
}

/// `--embedder`, shared by the commands that embed.
struct EmbedderOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "local (the built-in model; the default for a new index), none (keyword-only), hashing, or openai:MODEL (an OpenAI-compatible endpoint). An existing index keeps the embedder it was built with.",
        valueName: "name"))
    var embedder: String?

    @Option(name: .customLong("embedder-url"), help: ArgumentHelp(
        "The OpenAI-compatible API for --embedder openai:MODEL (default https://api.openai.com/v1); the key comes from $KB_EMBEDDINGS_API_KEY.",
        valueName: "url"))
    var embedderURL: String?

    func choice() throws -> EmbedderChoice? {
        if embedderURL != nil && !(embedder ?? "").lowercased().hasPrefix("openai:") {
            throw KBError(.invalidArgument, "--embedder-url goes with --embedder openai:MODEL.")
        }
        return try embedder.map { try EmbedderChoice($0, url: embedderURL) }
    }
}

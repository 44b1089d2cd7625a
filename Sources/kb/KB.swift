import ArgumentParser
import Foundation
import KBCore
import KBKit
#if PostgreSQL
import KBPostgres
import KBRequests
#endif

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

    /// The composition root: the store engines this build has are registered, then the command runs.
    static func main() async {
        #if PostgreSQL
        KnowledgeBase.register(PostgresEngine())
        #endif
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            await KnowledgeBase.finishBackgroundWork()
            exit(withError: error)
        }
        // A model made but not needed (nothing changed) may still be setting up its layers.
        await KnowledgeBase.finishBackgroundWork()
    }
}

enum KBVersion {
    static let current = "0.1.0"
}

/// A request that failed its check: bad usage (exit 64), nothing was done.
struct BadRequest: Error {
    let error: KBError
}

/// Checks a request before anything is opened; its problems are bad usage (exit 64).
func checked<R: KBRequest>(_ request: R, _ limits: Limits = Limits()) throws -> Checked<R> {
    try checked { try request.checked(limits) }
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
                                                 _ answer: (KnowledgeBase, Checked<R>) async throws -> T) async throws {
    try await reportingErrors(json: global.json) {
        let request = try checked(request)
        let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
        let result = try await answer(kb, request)
        if global.json { try Terminal.printJSON(result) } else { print(text(result)) }
    }
}

func report(_ error: KBError, json: Bool) {
    guard json, let text = try? KBJSON.text(ErrorBody(code: error.code.rawValue, message: error.message)) else {
        Terminal.error(error.message)
        return
    }
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

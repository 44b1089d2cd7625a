import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBStore

struct Context: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Assemble prompt context for a bot's turn or a report, with citations, within a token budget.",
        discussion: """
            kb context --bot NAME [--user ID] [--history FILE] QUERY… — the bot's knowledge sources and the memories of its scopes; \
            with the conversation so far (a JSON list of {"role": "user"|"assistant", "content"}, oldest first), a follow-up finds what it refers to. \
            kb context --report FILE [QUERY…] — section by section, as the YAML template says. \
            Tokens are counted conservatively (never fewer than cl100k/o200k count on English, Russian or Arabic).
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var endpoint: EndpointOption

    @Option(help: ArgumentHelp("The bot to assemble context for.", valueName: "name"))
    var bot: String?

    @Option(help: ArgumentHelp("A report template (YAML).", valueName: "file"))
    var report: String?

    @Option(help: ArgumentHelp("The user, for user:ID memories.", valueName: "id"))
    var user: String?

    @Option(help: "Tokens the context may use. \(ContextRequest.valuesAndDefault("budget"))")
    var budget: Int?

    @Option(help: ArgumentHelp("The conversation before this turn: a JSON file (or - for standard input) holding a list of {\"role\": \"user\"|\"assistant\", \"content\"}, oldest first.", valueName: "file"))
    var history: String?

    @Option(name: .customLong("tag"), help: ArgumentHelp("Only knowledge snippets with this tag (repeatable; all must match).", valueName: "tag"))
    var tags: [String] = []

    @Option(name: .customLong("any-tag"), help: ArgumentHelp("Only knowledge snippets with at least one of these tags (repeatable).", valueName: "tag"))
    var anyTags: [String] = []

    @Option(name: .customLong("kind"), help: ArgumentHelp("Only knowledge sources of this kind (repeatable). \(ContextRequest.valuesAndDefault("kinds"))", valueName: "kind"))
    var kinds: [String] = []

    @Argument(help: "The user's turn (bots), or words added to each section's query (reports).")
    var query: [String] = []

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let template = try report.map { try ReportTemplate.load(file: $0) }
            var request = ContextRequest(bot: bot, report: template?.name, query: query.isEmpty ? nil : query.joined(separator: " "))
            request.user = user
            request.budget = budget
            request.history = try history.map(Self.readHistory)
            request.tags = tags.isEmpty ? nil : tags
            request.anyTags = anyTags.isEmpty ? nil : anyTags
            request.kinds = kinds.isEmpty ? nil : kinds
            request = try checked(request)
            KnowledgeBase.configure(.latency)
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false, embedderURL: endpoint.url)
            let response = try await kb.context(request, reports: template.map { [$0.name: $0] } ?? [:])
            if global.json {
                try Terminal.printJSON(response)
                return
            }
            Terminal.warn(response.degraded)
            print(response.context)
            FileHandle.standardError.write(Data("(\(response.tokens) of \(response.budget) tokens, \(response.citations.count) source(s))\n".utf8))
        }
    }

    /// A conversation from a JSON file (`-`: standard input), checked as the HTTP body's `history` is.
    static func readHistory(_ path: String) throws -> [ConversationTurn] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let read = FileManager.default.contents(atPath: path) else {
                throw KBError(.noSuchFile, "Cannot read the history file \(path). Give a JSON file with a list of {\"role\", \"content\"} turns.")
            }
            data = read
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw KBError(.invalidArgument, "The history file \(path) is not valid JSON; give a list of {\"role\": \"user\"|\"assistant\", \"content\"} turns.")
        }
        do {
            return try KBJSON.decode(ContextRequest.self, from: .object(["bot": "history-check", "query": "history check", "history": value])).history ?? []
        } catch let error as KBError {
            throw KBError(error.code, "The history file \(path): \(error.message)")
        }
    }
}

struct BotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bot",
        abstract: "Manage bots: a system prompt, the knowledge sources they may see, the memory scopes they read.",
        subcommands: [Create.self, List.self, Show.self, Update.self, Delete.self, AddSource.self, RemoveSource.self])

    static func show(_ bot: Bot, json: Bool) throws {
        if json {
            try Terminal.printJSON(bot)
            return
        }
        print("name:          \(bot.name)")
        print("system prompt: \(bot.systemPrompt.replacingOccurrences(of: "\n", with: " "))")
        print("memory scopes: \(bot.memoryScopes.joined(separator: ", "))")
        print("sources:       \(bot.sources.isEmpty ? "(none: the bot sees no knowledge; add some with `kb bot add-source`)" : "")")
        for source in bot.sources { print("  \(source)") }
    }

    /// A selector as typed, with a path made absolute against the current folder.
    static func absolute(_ selector: String) -> String {
        selector.hasPrefix("tag:") || selector.hasPrefix("kind:") ? selector : KnowledgeBase.absolutePath(selector)
    }

    /// Applies a change request to a bot and shows the result.
    static func change(_ request: BotChangeRequest, global: GlobalOptions) async throws {
        try await reportingErrors(json: global.json) {
            let request = try checked(request)
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            try show(try await kb.changeBot(request), json: global.json)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a bot.")
        @OptionGroup var global: GlobalOptions
        @Option(name: .customLong("system-prompt"), help: "The bot's system prompt.")
        var systemPrompt: String?
        @Option(name: .customLong("source"), help: ArgumentHelp("A knowledge source: a path or folder, tag:NAME or kind:note|pdf|image|epub|html|docx|record (repeatable).", valueName: "selector"))
        var sources: [String] = []
        @Option(name: .customLong("memory-scope"), help: ArgumentHelp("A memory scope it reads: user:{user}, bot:{name}, global… (repeatable; default user:{user} and bot:{name}).", valueName: "template"))
        var scopes: [String] = []
        @Argument var name: String

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = BotRequest(name: name)
                request.systemPrompt = systemPrompt
                request.sources = sources.isEmpty ? nil : sources.map(BotCommand.absolute).map(BotCommand.absolute)
                request.memoryScopes = scopes.isEmpty ? nil : scopes
                request = try checked(request)
                let kb = try KnowledgeBase.open(at: global.databasePath)
                try BotCommand.show(try await kb.createBot(request), json: global.json)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the bots.")
        @OptionGroup var global: GlobalOptions
        func run() async throws {
            try await reportingErrors(json: global.json) {
                let bots = try await KnowledgeBase.open(at: global.databasePath, create: false).bots()
                if global.json { return try Terminal.printJSON(bots) }
                if bots.isEmpty { print("No bots. Make one with `kb bot create NAME --system-prompt TEXT`.") }
                for bot in bots { print("\(bot.name)  (\(bot.sources.count) source(s)) \(Terminal.shorten(bot.systemPrompt, limit: 60))") }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a bot.")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        func run() async throws {
            try await reportingErrors(json: global.json) {
                try BotCommand.show(try await KnowledgeBase.open(at: global.databasePath, create: false).bot(name), json: global.json)
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a bot's system prompt, sources or memory scopes (one transaction: all of it or nothing).")
        @OptionGroup var global: GlobalOptions
        @Option(name: .customLong("system-prompt"), help: "The new system prompt.")
        var systemPrompt: String?
        @Option(name: .customLong("source"), help: ArgumentHelp("Replace the knowledge sources with these (repeatable).", valueName: "selector"))
        var sources: [String] = []
        @Option(name: .customLong("memory-scope"), help: ArgumentHelp("Replace the memory scopes (repeatable).", valueName: "template"))
        var scopes: [String] = []
        @Argument var name: String
        func run() async throws {
            var request = BotChangeRequest(name: name)
            request.systemPrompt = systemPrompt
            request.sources = sources.isEmpty ? nil : sources.map(BotCommand.absolute)
            request.memoryScopes = scopes.isEmpty ? nil : scopes
            try await BotCommand.change(request, global: global)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a bot (its memories stay).")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        func run() async throws {
            try await reportingErrors(json: global.json) {
                let deleted = try await KnowledgeBase.open(at: global.databasePath, create: false).deleteBot(name)
                if global.json { try Terminal.printJSON(deleted) } else { print("Deleted bot \(name).") }
            }
        }
    }

    /// `add-source` and `remove-source`: the same arguments, one change each.
    struct SourceChange: ParsableArguments {
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Argument(help: "A path or folder, tag:NAME or kind:note|pdf|image|epub|html|docx|record.") var selector: String
    }

    struct AddSource: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-source", abstract: "Let a bot see a path or folder, tag:NAME or kind:KIND.")
        @OptionGroup var change: SourceChange
        func run() async throws {
            var request = BotChangeRequest(name: change.name)
            request.addSources = [BotCommand.absolute(change.selector)]
            try await BotCommand.change(request, global: change.global)
        }
    }

    struct RemoveSource: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-source", abstract: "Take a knowledge source away from a bot.")
        @OptionGroup var change: SourceChange
        func run() async throws {
            var request = BotChangeRequest(name: change.name)
            request.removeSources = [BotCommand.absolute(change.selector)]
            try await BotCommand.change(request, global: change.global)
        }
    }
}

/// `--db-pool`, for the long-running commands that serve many requests at once.
struct DatabasePoolOption: ParsableArguments {
    @Option(name: .customLong("db-pool"), help: ArgumentHelp(
        "Connections to a PostgreSQL index (--db postgres://…), and threads waiting on them (default: $KB_DB_POOL, else 8).",
        valueName: "n"))
    var size: Int?
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Scoped API tokens for kb serve: a client that may only serve one bot, or one user's app.",
        discussion: """
            A token reads and writes the memories of its scopes only (user:ID, user:* — any user, never bot: scopes — \
            bot:NAME, global), uses its bots only for context and search, and has the rights --allow gives (sources, bots, \
            reports); --read-only writes nothing. The admin token (--token, KB_API_TOKEN) keeps every right and alone \
            manages tokens. Only a token's SHA-256 is kept, with the index (PostgreSQL: every replica knows it).
            """,
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a token and print it, once.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The token's name.")
        var name: String

        @Option(help: ArgumentHelp("A memory scope it may read and write (repeatable): user:ID, user:*, bot:NAME, global.", valueName: "scope"))
        var scope: [String] = []

        @Option(help: ArgumentHelp("A bot it may use for context and search (repeatable).", valueName: "name"))
        var bot: [String] = []

        @Option(help: ArgumentHelp("A right beyond memories and bots (repeatable). \(TokenRequest.valuesAndDefault("allow"))", valueName: "right"))
        var allow: [String] = []

        @Flag(name: .customLong("read-only"), help: "Reads only: no memory, source or bot is written.")
        var readOnly = false

        @Option(help: ArgumentHelp("How long it is valid, e.g. 30d or 12h (default: until revoked).", valueName: "duration"))
        var expires: String?

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = TokenRequest(name: name)
                request.scopes = scope
                request.bots = bot
                request.allow = allow
                request.readOnly = readOnly
                request.expires = expires
                request = try checked(request)
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let created = try await kb.createToken(request)
                if global.json {
                    try Terminal.printJSON(created)
                } else {
                    print(created.token)
                    FileHandle.standardError.write(Data("Token \(created.info.name) made; it is shown this once. Send it as `Authorization: Bearer TOKEN`.\n".utf8))
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never their secrets).")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let tokens = try await kb.tokens()
                if global.json {
                    try Terminal.printJSON(tokens)
                    return
                }
                if tokens.isEmpty { print("No tokens. Make one with `kb token create NAME --scope user:ID --bot NAME`.") }
                let now = Date()
                for token in tokens {
                    let state = token.revokedAt != nil ? "revoked" : token.expiresAt.map { $0 <= now ? "expired" : "until \(ISO8601DateFormatter().string(from: $0))" } ?? "valid"
                    let rights = [token.readOnly ? "read-only" : nil, token.allow.isEmpty ? nil : "allow " + token.allow.map(\.rawValue).joined(separator: ",")]
                        .compactMap { $0 }.joined(separator: "; ")
                    print("\(token.name)  kb_\(token.prefix)_…  \(state)  scopes: \(Caller.listed(token.scopes))  bots: \(Caller.listed(token.bots))\(rights.isEmpty ? "" : "  " + rights)")
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token: every request with it is refused from now on.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The token's name.")
        var name: String

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let revoked = try await kb.revokeToken(name)
                if global.json { try Terminal.printJSON(revoked) } else { print("Revoked the token \(revoked.name).") }
            }
        }
    }
}

extension Caller {
    static func listed(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ",") }
}

struct Usage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarise what kb serve answered: requests, errors, degraded answers, results, tokens served and latency.",
        discussion: """
            Reads the request log kb serve keeps with the index (search, recall, context, memory extraction and source \
            requests; 30 days by default, --log-retention). --by report gives the context tokens each report was served; \
            the embedding tokens each remote embedder reported are listed too.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("How far back, e.g. 7d or 12h.", valueName: "duration"))
    var since = "7d"

    @Option(help: ArgumentHelp("Group by day, bot, report or route.", valueName: "grouping"))
    var by = "day"

    func validate() throws {
        guard UsageGrouping(rawValue: by) != nil else { throw ValidationError("--by takes day, bot, report or route.") }
    }

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let seconds: TimeInterval
            do { seconds = try Recency(since).halfLife } catch {
                throw KBError(.invalidArgument, "--since '\(since)' is not a duration; use e.g. 7d, 12h, 90m.")
            }
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let report = try await kb.usage(since: Date(timeIntervalSinceNow: -seconds), by: UsageGrouping(rawValue: by)!)
            if global.json {
                try Terminal.printJSON(report)
                return
            }
            if report.rows.isEmpty { print("No requests logged in the last \(since).") }
            let header = [by, "requests", "errors", "degraded", "results", "tokens", "mean ms", "max ms"]
            let rows = report.rows.map { row in
                [row.key.isEmpty ? "(none)" : row.key, String(row.requests), String(row.errors), String(row.degraded), String(row.results),
                 String(row.tokens), String(format: "%.1f", row.meanLatencyMilliseconds), String(format: "%.1f", row.maxLatencyMilliseconds)]
            }
            if !rows.isEmpty {
                let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
                for line in [header] + rows {
                    print(line.enumerated().map { column, cell in
                        column == 0 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                                    : String(repeating: " ", count: widths[column] - cell.count) + cell
                    }.joined(separator: "  "))
                }
            }
            for (embedder, tokens) in report.embeddingTokens.sorted(by: { $0.key < $1.key }) {
                print("embedding tokens, \(embedder): \(tokens)")
            }
        }
    }
}

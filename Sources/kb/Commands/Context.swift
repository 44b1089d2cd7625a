import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBRequests
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

    @Option(name: .customLong("as-of"), help: ArgumentHelp("The user's memories as they held at this time (ISO 8601 date or time) instead of now.", valueName: "time"))
    var asOf: String?

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
            request.asOf = asOf
            let valid = try checked(request)
            KnowledgeBase.configure(.latency)
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false, embedderURL: endpoint.url)
            try endpoint.install(on: kb)
            let response = try await kb.context(valid, reports: template.map { [$0.name: $0] } ?? [:], as: .commandLine)
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
            data = try DescriptorIO.standardInput()
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

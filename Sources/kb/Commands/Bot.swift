import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBRequests
import KBStore

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
        ["tag:", "kind:", "upload:"].contains(where: selector.hasPrefix) ? selector : SourcePaths.absolute(selector)
    }

    /// Applies a change request to a bot and shows the result.
    static func change(_ request: BotChangeRequest, global: GlobalOptions) async throws {
        try await reportingErrors(json: global.json) {
            let valid = try checked(request)
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            try show(try await kb.changeBot(valid, as: .commandLine), json: global.json)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a bot.")
        @OptionGroup var global: GlobalOptions
        @Option(name: .customLong("system-prompt"), help: "The bot's system prompt.")
        var systemPrompt: String?
        @Option(name: .customLong("source"), help: ArgumentHelp("A knowledge source: a path or folder, tag:NAME or kind:\(SourceKind.documentList) (repeatable).", valueName: "selector"))
        var sources: [String] = []
        @Option(name: .customLong("memory-scope"), help: ArgumentHelp("A memory scope it reads: user:{user}, bot:{name}, global… (repeatable; default user:{user} and bot:{name}).", valueName: "template"))
        var scopes: [String] = []
        @Argument var name: String

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = BotRequest(name: name)
                request.systemPrompt = systemPrompt
                request.sources = sources.isEmpty ? nil : sources.map(BotCommand.absolute)
                request.memoryScopes = scopes.isEmpty ? nil : scopes
                let valid = try checked(request)
                let kb = try KnowledgeBase.open(at: global.databasePath)
                try BotCommand.show(try await kb.createBot(valid, as: .commandLine), json: global.json)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the bots.")
        @OptionGroup var global: GlobalOptions
        func run() async throws {
            try await reportingErrors(json: global.json) {
                let bots = try await KnowledgeBase.open(at: global.databasePath, create: false).bots(as: .commandLine)
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
                try BotCommand.show(try await KnowledgeBase.open(at: global.databasePath, create: false).bot(name, as: .commandLine), json: global.json)
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
                let deleted = try await KnowledgeBase.open(at: global.databasePath, create: false).deleteBot(name, as: .commandLine)
                if global.json { try Terminal.printJSON(deleted) } else { print("Deleted bot \(name).") }
            }
        }
    }

    /// `add-source` and `remove-source`: the same arguments, one change each.
    struct SourceChange: ParsableArguments {
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Argument(help: ArgumentHelp("A path or folder, tag:NAME or kind:\(SourceKind.documentList).")) var selector: String
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

import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBMemory
import KBRequests

struct MemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Remember small facts for users and bots, and recall them.",
        discussion: """
            A memory has an id (a UUID; any unique prefix of 4+ characters works), a scope (global, \
            user:ID or bot:NAME), optional title and tags, content, and a version history. Memories live \
            in the index file and share its embedder, but `kb search` leaves them out unless given \
            --kind memory. Nothing is deleted except by `kb memory delete`.
            """,
        subcommands: [Add.self, List.self, Show.self, Update.self, Delete.self, Erase.self, Search.self, Extract.self, Feedback.self, Consolidate.self,
                      Export.self, Import.self])

    /// `--max-size`, shared by the commands that write content: the memory limit for this run.
    struct SizeLimit: ParsableArguments {
        @Option(name: .customLong("max-size"), help: ArgumentHelp("Largest content accepted, in bytes (default \(Limits().maxMemoryBytes)).", valueName: "bytes"))
        var maxSize = Limits().maxMemoryBytes

        var limits: Limits {
            var limits = Limits()
            limits.maxMemoryBytes = maxSize
            return limits
        }

        func validate() throws {
            guard maxSize >= 1 else { throw ValidationError("--max-size must be at least 1 byte.") }
        }
    }

    /// The text of `-` (stdin) or the words given.
    static func text(_ words: [String]) throws -> String {
        if words == ["-"] {
            return String(decoding: try DescriptorIO.standardInput(), as: UTF8.self)
        }
        return words.joined(separator: " ")
    }

    /// What a listing says of a memory's state beyond its content, now: superseded, closed,
    /// expired, starting later, marked wrong.
    static func state(_ memory: Memory, now: Date = Date()) -> String {
        var marks: [String] = []
        if let by = memory.supersededBy { marks.append("superseded by \(by.prefix(8))") }
        if let end = memory.validTo, memory.supersededBy == nil { marks.append("closed \(MemoryArchive.format(end))") }
        if let expiry = memory.expiresAt { marks.append((expiry <= now ? "expired " : "expires ") + MemoryArchive.format(expiry)) }
        if memory.validFrom > now { marks.append("from \(MemoryArchive.format(memory.validFrom))") }
        if memory.flaggedWrong { marks.append("marked wrong") }
        return marks.isEmpty ? "" : "  [" + marks.joined(separator: "; ") + "]"
    }

    static func printMemory(_ memory: Memory, long: Bool) {
        let superseded = state(memory)
        if long {
            print("id:       \(memory.id)")
            print("scope:    \(memory.scope)")
            if let title = memory.title { print("title:    \(title)") }
            if !memory.tags.isEmpty { print("tags:     \(memory.tags.map(\.name).joined(separator: ", "))") }
            print("version:  \(memory.version)")
            print("created:  \(MemoryArchive.format(memory.createdAt))")
            print("updated:  \(MemoryArchive.format(memory.updatedAt))")
            print("valid:    from \(MemoryArchive.format(memory.validFrom))" + (memory.validTo.map { " to \(MemoryArchive.format($0))" } ?? ""))
            if let expiry = memory.expiresAt { print("expires:  \(MemoryArchive.format(expiry))") }
            if let by = memory.supersededBy { print("superseded by: \(by)") }
            if memory.flaggedWrong { print("marked wrong: hidden from recall and context until `kb memory feedback \(memory.id.prefix(8)) confirmed`") }
            if memory.useful > 0 { print("useful:   \(memory.useful)") }
            print("")
            print(memory.content)
            return
        }
        let title = memory.title.map { Terminal.bold($0) + " — " } ?? ""
        let tags = memory.tags.isEmpty ? "" : "  [" + memory.tags.map(\.name).joined(separator: ", ") + "]"
        print("\(memory.id.prefix(8))  \(memory.scope)  \(title)\(Terminal.shorten(memory.content.replacingOccurrences(of: "\n", with: " "), limit: 100))\(tags)\(superseded)")
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a memory (identical content in the scope returns the existing one).",
            discussion: """
                Content identical to a current memory of the scope (after whitespace normalisation) adds \
                nothing and prints the existing id. Content whose embedding is very close to others' (cosine \
                ≥ --near-duplicate) is added, and those memories are listed so you can update or delete one.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var embedder: EmbedderOption
        @OptionGroup var size: SizeLimit

        @Option(help: "A short title.")
        var title: String?

        @Option(name: .customLong("tag"), help: ArgumentHelp("A tag (repeatable).", valueName: "tag"))
        var tags: [String] = []

        @Option(help: "global, user:ID or bot:NAME.")
        var scope = "global"

        @Option(help: ArgumentHelp("Mark this memory (same scope) as superseded by the new one.", valueName: "id"))
        var supersede: String?

        @Option(name: .customLong("near-duplicate"), help: ArgumentHelp("Cosine similarity from which to report near-duplicates. \(RememberRequest.valuesAndDefault("nearDuplicate"))", valueName: "0…1"))
        var nearDuplicate: Double?

        @OptionGroup var time: ValidTimeOption

        @Argument(help: ArgumentHelp("What to remember ('-' reads stdin).", valueName: "content"))
        var content: [String]

        func validate() throws {
            if content.isEmpty { throw ValidationError("Give the content to remember.") }
        }

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = RememberRequest(content: try MemoryCommand.text(content))
                request.title = title
                request.tags = tags.isEmpty ? nil : tags
                request.scope = scope
                request.supersede = supersede
                request.nearDuplicate = nearDuplicate
                (request.validFrom, request.validTo, request.expiresAt) = (time.validFrom, time.validTo, time.expiresAt)
                let valid = try checked(request, size.limits)
                KnowledgeBase.configure(.latency)
                let kb = try KnowledgeBase.open(at: global.databasePath, limits: size.limits, embedderURL: embedder.endpoint)
                let result = try await kb.remember(valid, embedder: try embedder.choice(), as: .commandLine)
                if global.json {
                    try Terminal.printJSON(result)
                    return
                }
                if result.created {
                    print("Added memory \(result.memory.id) (scope \(result.memory.scope)).")
                } else {
                    print("Already remembered as \(result.memory.id) (same content in scope \(result.memory.scope)); nothing added.")
                }
                if let superseded = result.superseded { print("Memory \(superseded) is now superseded by it.") }
                for near in result.nearDuplicates {
                    print("Near-duplicate: \(near.id) (similarity \(String(format: "%.3f", near.similarity))): \(Terminal.shorten(near.content, limit: 80))")
                }
                if !result.nearDuplicates.isEmpty {
                    print("Keep both, or `kb memory delete ID` one, or `kb memory update ID --content …`.")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List memories, oldest first.")

        @OptionGroup var global: GlobalOptions

        @Option(name: .customLong("scope"), help: ArgumentHelp("Only this scope (repeatable).", valueName: "scope"))
        var scopes: [String] = []

        @Option(name: .customLong("tag"), help: ArgumentHelp("Only memories with this tag (repeatable; all must match).", valueName: "tag"))
        var tags: [String] = []

        @Flag(help: "Include memories superseded by newer ones.")
        var all = false

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = MemoryListRequest()
                request.scopes = scopes.isEmpty ? nil : scopes
                request.tags = tags.isEmpty ? nil : tags
                request.includeSuperseded = all ? true : nil
                let valid = try checked(request)
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let memories = try await kb.memories(valid, as: .commandLine)
                if global.json {
                    try Terminal.printJSON(memories)
                    return
                }
                if memories.isEmpty {
                    print("No memories\(scopes.isEmpty && tags.isEmpty ? "" : " match"). Add one with `kb memory add CONTENT`.")
                    return
                }
                for memory in memories { MemoryCommand.printMemory(memory, long: false) }
                print("\(memories.count) memor\(memories.count == 1 ? "y" : "ies").")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one memory, optionally with its earlier versions.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Also show earlier versions, oldest first.")
        var history = false

        @Argument(help: "The memory's id or a unique prefix.")
        var id: String

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let found = try await kb.memory(id, history: history, as: .commandLine)
                if global.json {
                    try Terminal.printJSON(found)
                    return
                }
                let memory = found.memory, versions = found.history
                MemoryCommand.printMemory(memory, long: true)
                guard let versions else { return }
                print("")
                if versions.isEmpty { print("(no earlier versions)") }
                for version in versions.reversed() {
                    print("--- version \(version.version), \(MemoryArchive.format(version.updatedAt))"
                          + (version.title.map { ", title: \($0)" } ?? "")
                          + (version.tags.isEmpty ? "" : ", tags: " + version.tags.map(\.name).joined(separator: ", ")))
                    print(version.content)
                }
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a memory; the previous version is kept (`kb memory show ID --history`).")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var size: SizeLimit
        @OptionGroup var endpoint: EndpointOption

        @Option(help: "New content ('-' reads stdin).")
        var content: String?

        @Option(help: "New title.")
        var title: String?

        @Flag(name: .customLong("no-title"), help: "Remove the title.")
        var noTitle = false

        @Option(name: .customLong("tag"), help: ArgumentHelp("Replace the tags with these (repeatable).", valueName: "tag"))
        var tags: [String] = []

        @Flag(name: .customLong("no-tags"), help: "Remove every tag.")
        var noTags = false

        @OptionGroup var time: ValidTimeOption

        @Flag(name: .customLong("reopen"), help: "Remove the end of its valid time: it holds again.")
        var reopen = false

        @Flag(name: .customLong("no-expiry"), help: "Remove its expiry.")
        var noExpiry = false

        @Argument(help: "The memory's id or a unique prefix.")
        var id: String

        func validate() throws {
            if title != nil && noTitle { throw ValidationError("Give --title or --no-title, not both.") }
            if !tags.isEmpty && noTags { throw ValidationError("Give --tag or --no-tags, not both.") }
            if time.validTo != nil && reopen { throw ValidationError("Give --valid-to or --reopen, not both.") }
            if time.expiresAt != nil && noExpiry { throw ValidationError("Give --expires or --no-expiry, not both.") }
        }

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = MemoryChangeRequest(id: id)
                request.content = try content.map { try MemoryCommand.text([$0]) }
                if noTitle { request.title = .some(nil) } else if let title { request.title = .some(title) }
                if noTags { request.tags = [] } else if !tags.isEmpty { request.tags = tags }
                request.validFrom = time.validFrom
                if reopen { request.validTo = .some(nil) } else if let validTo = time.validTo { request.validTo = .some(validTo) }
                if noExpiry { request.expiresAt = .some(nil) } else if let expiresAt = time.expiresAt { request.expiresAt = .some(expiresAt) }
                let valid = try checked(request, size.limits)
                KnowledgeBase.configure(.latency)
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false, limits: size.limits, embedderURL: endpoint.url)
                let before = try await kb.memory(id, as: .commandLine).memory
                let memory = try await kb.changeMemory(valid, as: .commandLine)
                if global.json {
                    try Terminal.printJSON(memory)
                } else if memory.version == before.version {
                    print("Memory \(memory.id) already says that; nothing changed.")
                } else {
                    print("Updated memory \(memory.id) to version \(memory.version).")
                }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a memory with its history; searches stop finding it at once.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The memory's id or a unique prefix.")
        var id: String

        func run() async throws {
            try await answerFromIndex(ForgetRequest(id: id), global, text: { "Deleted memory \($0.deleted)." }) { try await $0.forget($1, as: .commandLine) }
        }
    }
}

import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBMemory

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
    static func text(_ words: [String]) -> String {
        if words == ["-"] {
            return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
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
                var request = RememberRequest(content: MemoryCommand.text(content))
                request.title = title
                request.tags = tags.isEmpty ? nil : tags
                request.scope = scope
                request.supersede = supersede
                request.nearDuplicate = nearDuplicate
                (request.validFrom, request.validTo, request.expiresAt) = (time.validFrom, time.validTo, time.expiresAt)
                let valid = try checked(request, size.limits)
                KnowledgeBase.configure(.latency)
                let kb = try KnowledgeBase.open(at: global.databasePath, limits: size.limits, embedderURL: embedder.endpoint)
                let result = try await kb.remember(valid, embedder: try embedder.choice())
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
                let memories = try await kb.memories(valid)
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
                let found = try await kb.memory(id, history: history)
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
                request.content = content.map { MemoryCommand.text([$0]) }
                if noTitle { request.title = .some(nil) } else if let title { request.title = .some(title) }
                if noTags { request.tags = [] } else if !tags.isEmpty { request.tags = tags }
                request.validFrom = time.validFrom
                if reopen { request.validTo = .some(nil) } else if let validTo = time.validTo { request.validTo = .some(validTo) }
                if noExpiry { request.expiresAt = .some(nil) } else if let expiresAt = time.expiresAt { request.expiresAt = .some(expiresAt) }
                let valid = try checked(request, size.limits)
                KnowledgeBase.configure(.latency)
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false, limits: size.limits, embedderURL: endpoint.url)
                let before = try await kb.memory(id).memory
                let memory = try await kb.changeMemory(valid)
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
            try await answerFromIndex(ForgetRequest(id: id), global, text: { "Deleted memory \($0.deleted)." }) { try await $0.forget($1) }
        }
    }

    struct Extract: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Propose memories for a user from a conversation, checked against the user's memories; --apply stores them.",
            discussion: """
                FILE (or - for standard input) is JSON: a list of turns, [{"role": "user"|"assistant", "content"}], oldest \
                first, or a request {"user", "bot", "turns"}. Only the user's turns become memories, all in the scope \
                user:ID. Without --llm, kb's explicit patterns find them ("remember that …", "forget that …", "I'm allergic \
                to …", "my name is …", "I live in …"; the README lists them); with --llm openai:MODEL a chat model is asked, \
                and its answer is checked field by field. Each proposal is add, update (a new version of a memory), forget, \
                or none (already remembered).
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var embedder: EmbedderOption
        @OptionGroup var llm: LLMOption

        @Option(help: ArgumentHelp("Whose memories (the scope user:ID).", valueName: "id"))
        var user: String?

        @Option(help: ArgumentHelp("The bot the conversation was with.", valueName: "name"))
        var bot: String?

        @Flag(help: "Store the proposals (versions and history kept) instead of only showing them.")
        var apply = false

        @Argument(help: ArgumentHelp("The conversation (JSON; - reads stdin).", valueName: "file"))
        var file: String

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = try Self.request(file, user: user, bot: bot)
                request.apply = apply ? true : request.apply
                let valid = try checked(request)
                let model = try llm.model()
                KnowledgeBase.configure(.latency)
                let kb = try KnowledgeBase.open(at: global.databasePath, embedderURL: embedder.endpoint)
                let extraction = try await kb.extractMemories(valid, model: model, embedder: try embedder.choice())
                if global.json {
                    try Terminal.printJSON(extraction)
                    return
                }
                if extraction.proposals.isEmpty { print("Nothing to remember in this conversation (\(extraction.extractor)).") }
                for proposal in extraction.proposals {
                    let target = proposal.replaces.map { " \($0.prefix(8))" } ?? ""
                    let done = proposal.memory.map { "  → \($0.prefix(8))" } ?? ""
                    print("\(proposal.action.rawValue)\(target): \(proposal.content)\(done)")
                    print("    \(proposal.reason)")
                }
                if !extraction.applied, extraction.proposals.contains(where: { $0.action != .none }) {
                    print("Nothing stored; run again with --apply to store these in \(extraction.scope).")
                }
            }
        }

        /// The request a file holds: a list of turns (with --user), or a whole request.
        static func request(_ path: String, user: String?, bot: String?) throws -> MemoryExtractRequest {
            let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
            guard let data else { throw KBError(.noSuchFile, "Cannot read the conversation file \(path). Check the path.") }
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: data) else {
                throw KBError(.invalidArgument, "The conversation file \(path) is not valid JSON; give a list of {\"role\", \"content\"} turns.")
            }
            var object: [String: JSONValue]
            switch value {
            case .array: object = ["turns": value]
            case .object(let given): object = given
            default: throw KBError(.invalidArgument, "The conversation file \(path) must hold a list of turns or a request {\"user\", \"turns\"}.")
            }
            if let user { object["user"] = .string(user) }
            if let bot { object["bot"] = .string(bot) }
            guard object["user"] != nil else { throw KBError(.invalidArgument, "Whose memories? Give --user ID (or \"user\" in the file).") }
            do {
                return try KBJSON.decode(MemoryExtractRequest.self, from: .object(object))
            } catch let error as KBError {
                throw KBError(error.code, "The conversation file \(path): \(error.message)")
            }
        }
    }

    struct Feedback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give feedback on a memory: wrong, outdated, useful or confirmed (logged, shown by `kb memory show ID --history`).",
            discussion: """
                wrong hides the memory from recall and context until it is reviewed: `confirmed` shows it again, an \
                update corrects it, a delete removes it. outdated closes it now (a new version; `--as-of` still finds \
                it for earlier times). useful ranks it a little higher (5 % a time, at most 20 %).
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("Why, in a sentence (logged with the feedback).", valueName: "text"))
        var note: String?

        @Argument(help: "The memory's id or a unique prefix.")
        var id: String

        @Argument(help: ArgumentHelp("wrong, outdated, useful or confirmed.", valueName: "feedback"))
        var feedback: String

        func run() async throws {
            var request = MemoryFeedbackRequest(id: id, feedback: feedback)
            request.note = note
            try await answerFromIndex(request, global, text: { (result: MemoryFeedbackResult) in
                let memory = result.memory
                return switch result.feedback.feedback {
                case "wrong": "Memory \(memory.id) is marked wrong: recall and context leave it out until it is confirmed, corrected or deleted."
                case "outdated": "Memory \(memory.id) is closed as of \(MemoryArchive.format(memory.validTo ?? Date())) (version \(memory.version)); --as-of finds it for earlier times."
                case "useful": "Memory \(memory.id) was called useful \(memory.useful) time\(memory.useful == 1 ? "" : "s")."
                default: "Memory \(memory.id) is confirmed: recall and context show it again."
                }
            }) { try await $0.memoryFeedback($1) }
        }
    }

    struct Consolidate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep a scope's memories clean: retire expired ones, close contradicted facts, merge near-duplicates (proposed; --apply makes them).",
            discussion: """
                Every change closes a memory as a new version (`kb memory show ID --history`); nothing is deleted, and \
                `kb memory search --as-of TIME` still finds what held then.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The scope: global, user:ID or bot:NAME.", valueName: "scope"))
        var scope: String

        @Flag(help: "Make the changes instead of only proposing them.")
        var apply = false

        @Option(name: .customLong("near-duplicate"), help: ArgumentHelp("Cosine similarity from which two memories are merged. \(MemoryConsolidateRequest.valuesAndDefault("nearDuplicate"))", valueName: "0.5…1"))
        var nearDuplicate: Double?

        func run() async throws {
            var request = MemoryConsolidateRequest(scope: scope)
            request.apply = apply ? true : nil
            request.nearDuplicate = nearDuplicate
            try await answerFromIndex(request, global, text: { (report: MemoryConsolidation) in
                var lines = report.changes.map { change in
                    "\(change.applied ? "done" : "proposed"): \(change.action.rawValue) \(change.memory.prefix(8))"
                        + (change.into.map { " into \($0.prefix(8))" } ?? "")
                        + " — \(Terminal.shorten(change.content, limit: 60)) — \(change.reason)"
                }
                lines.append("\(report.scope): \(report.examined) current memories, \(report.changes.count) change\(report.changes.count == 1 ? "" : "s")"
                    + (report.applied || report.changes.isEmpty ? "." : " proposed; run again with --apply to make them."))
                return lines.joined(separator: "\n")
            }) { try await $0.consolidateMemories($1) }
        }
    }

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a scope: every memory with all its versions, and for user:ID the user's private sources; no trace stays in the index files.",
            discussion: """
                Hand the user their data first: `kb memory export --scope user:ID -o FILE`. On SQLite, deleted text is \
                overwritten with zeros, the keyword index is merged and the write-ahead log truncated; on PostgreSQL the rows \
                are deleted (see the README for what VACUUM does and does not guarantee).
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The scope to erase: user:ID, bot:NAME or global.", valueName: "scope"))
        var scope: String

        func run() async throws {
            try await answerFromIndex(EraseRequest(scope: scope), global, text: { (erased: Erasure) in
                "Erased \(erased.scope): \(erased.memories) memories (\(erased.versions) versions), \(erased.sources) sources, "
                    + "\(erased.jobs) pending jobs, \(erased.cachedVectors) cached embeddings."
            }) { try await $0.erase($1) }
        }
    }

    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recall the memories that best match a query.",
            discussion: """
                Ranked like `kb search` (hybrid by default). Only the scopes given are searched (all when \
                none is given); superseded memories are left out unless --include-superseded. With \
                --half-life, a memory's score is multiplied by 2^(−age/half-life), age counted from its \
                last update.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var endpoint: EndpointOption

        @Option(name: .short, help: "How many memories to return. \(RecallRequest.valuesAndDefault("k"))")
        var k: Int?

        @Option(name: .customLong("scope"), help: ArgumentHelp("Search this scope (repeatable).", valueName: "scope"))
        var scopes: [String] = []

        @Option(name: .customLong("tag"), help: ArgumentHelp("Only memories with this tag (repeatable; all must match).", valueName: "tag"))
        var tags: [String] = []

        @Option(help: ArgumentHelp("Ranking. \(RecallRequest.valuesAndDefault("mode"))", valueName: "mode"))
        var mode: String?

        @Option(name: .customLong("half-life"), help: ArgumentHelp("Prefer recent memories: 30d, 12h, 2w…", valueName: "duration"))
        var halfLife: String?

        @Flag(name: .customLong("include-superseded"), help: "Also search memories superseded by newer ones, closed, expired or marked wrong.")
        var includeSuperseded = false

        @Option(name: .customLong("as-of"), help: ArgumentHelp("Recall what held at this time (ISO 8601 date or time) instead of now.", valueName: "time"))
        var asOf: String?

        @Argument(help: "What to recall.")
        var query: [String]

        func run() async throws {
            try await reportingErrors(json: global.json) {
                var request = RecallRequest(query: query.joined(separator: " "))
                request.k = k
                request.scopes = scopes.isEmpty ? nil : scopes
                request.tags = tags.isEmpty ? nil : tags
                request.mode = mode
                request.halfLife = halfLife
                request.includeSuperseded = includeSuperseded ? true : nil
                request.asOf = asOf
                let valid = try checked(request)
                KnowledgeBase.configure(.latency)
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false, embedderURL: endpoint.url)
                try endpoint.install(on: kb)
                let results = try await kb.recall(valid)
                if global.json {
                    try Terminal.printJSON(results)
                    return
                }
                Terminal.warn(results.degraded)
                if let during = results.during {
                    let from = during.start.map { " from \(MemoryArchive.format($0))" } ?? ""
                    let to = during.end.map { " until \(MemoryArchive.format($0))" } ?? ""
                    print("(The query names a time: memories \(during.told ? "said" : "that held")\(from)\(to).)")
                }
                if results.hits.isEmpty {
                    print("No memories match \"\(results.query)\"\(scopes.isEmpty ? "" : " in " + scopes.joined(separator: ", ")).")
                    return
                }
                for hit in results.hits {
                    print("\(hit.rank). (score \(String(format: "%.3f", hit.score))) ", terminator: "")
                    MemoryCommand.printMemory(hit.memory, long: false)
                }
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write memories as JSON Lines (with history and superseded ones), oldest first.",
            discussion: "`kb memory import` reads the file back with the same ids, times and history.")

        @OptionGroup var global: GlobalOptions

        @Option(name: .customLong("scope"), help: ArgumentHelp("Only this scope (repeatable).", valueName: "scope"))
        var scopes: [String] = []

        @Option(name: [.short, .long], help: ArgumentHelp("Write to this file instead of stdout.", valueName: "file"))
        var output: String?

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let text = try await kb.exportMemories(scopes: try scopes.map { try MemoryScope($0) })
                guard let output else {
                    FileHandle.standardOutput.write(Data(text.utf8))
                    return
                }
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: KnowledgeBase.absolutePath(output)), options: .atomic)
                } catch {
                    throw KBError(.unreadableFile, "Cannot write \(output): \(error.localizedDescription). Check the folder exists and is writable.")
                }
                let count = text.split(separator: "\n").count
                if global.json {
                    try Terminal.printJSON(["exported": count])
                } else {
                    print("Exported \(count) memor\(count == 1 ? "y" : "ies") to \(output).")
                }
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read memories from JSON Lines written by `kb memory export`.",
            discussion: """
                Each memory keeps its id, times and history, and is written in its own transaction. A memory \
                already stored unchanged is skipped, so importing a file twice changes nothing. Bad lines are \
                reported by number (exit 1) and the rest still import. A stored memory with the same id but \
                other data is a conflict unless --replace.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var embedder: EmbedderOption
        @OptionGroup var size: SizeLimit

        @Flag(help: "Overwrite stored memories that have the same id but other data.")
        var replace = false

        @Argument(help: ArgumentHelp("The JSON Lines file ('-' reads stdin).", valueName: "file"))
        var file: String

        func run() async throws {
            try await reportingErrors(json: global.json) {
                let text: String
                if file == "-" {
                    text = MemoryCommand.text(["-"])
                } else {
                    let path = KnowledgeBase.absolutePath(file)
                    guard FileManager.default.fileExists(atPath: path) else {
                        throw KBError(.noSuchFile, "No such file: \(file). Check the path.")
                    }
                    guard let data = FileManager.default.contents(atPath: path), let decoded = String(data: data, encoding: .utf8) else {
                        throw KBError(.unreadableFile, "Cannot read \(file) as UTF-8 text. Give a file written by `kb memory export`.")
                    }
                    text = decoded
                }
                let kb = try KnowledgeBase.open(at: global.databasePath, embedderURL: embedder.endpoint)
                var options = MemoryOptions()
                options.maxContentBytes = size.maxSize
                let report = try await kb.importMemories(text, options: options, replacing: replace, embedder: try embedder.choice())
                if global.json {
                    try Terminal.printJSON(report)
                } else {
                    for failure in report.failed { Terminal.error("\(file):\(failure.line): \(failure.message)") }
                    print("Imported \(report.added) new, \(report.replaced) replaced, \(report.unchanged) unchanged, \(report.failed.count) failed.")
                }
                if !report.failed.isEmpty { throw ExitCode.failure }
            }
        }
    }
}

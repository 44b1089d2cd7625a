import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBMemory
import KBRequests

extension MemoryCommand {
    struct Extract: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Propose memories for a user from a conversation, checked against the user's memories; --apply stores them.",
            discussion: """
                FILE (or - for standard input) is JSON: a list of turns, [{"role": "user"|"assistant", "content"}], oldest \
                first, or a request {"user", "bot", "turns"}. Only the user's turns become memories, all in the scope \
                user:ID. Without --llm, kb's explicit patterns find them, in English, Ukrainian, Russian and Arabic, each \
                sentence by its own language's patterns ("remember that …", "forget that …", "I'm allergic to …", "my name \
                is …", "I live in …", "اسمي …", "Меня зовут …"; docs/memories.md lists them), and word each memory in the \
                language it was said in; with --llm openai:MODEL a chat model is asked to do the same, and its answer is \
                checked field by field (a memory in another language than its turn is not stored). Each proposal is add, \
                update (a new version of a memory), supersede (the fact changed), forget, or none (already remembered).
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
                let extraction = try await kb.extractMemories(valid, model: model, embedder: try embedder.choice(), as: .commandLine)
                if global.json {
                    try Terminal.printJSON(extraction)
                    return
                }
                if extraction.proposals.isEmpty { print("Nothing to remember in this conversation (\(extraction.extractor)).") }
                for proposal in extraction.proposals {
                    let target = proposal.replaces.map { " \($0.prefix(8))" } ?? ""
                    let done = proposal.memory.map { "  → \($0.prefix(8))" } ?? ""
                    let language = proposal.language.map { " [\($0)]" } ?? ""
                    print("\(proposal.action.rawValue)\(target)\(language): \(proposal.content)\(done)")
                    print("    \(proposal.reason)")
                }
                if !extraction.applied, extraction.proposals.contains(where: { $0.action != .none }) {
                    print("Nothing stored; run again with --apply to store these in \(extraction.scope).")
                }
            }
        }

        /// The request a file holds: a list of turns (with --user), or a whole request.
        static func request(_ path: String, user: String?, bot: String?) throws -> MemoryExtractRequest {
            let data = path == "-" ? try DescriptorIO.standardInput() : FileManager.default.contents(atPath: path)
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
            }) { try await $0.memoryFeedback($1, as: .commandLine) }
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
            }) { try await $0.consolidateMemories($1, as: .commandLine) }
        }
    }
}

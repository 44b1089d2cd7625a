import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBRequests
import KBStore

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
                let valid = try checked(request)
                let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
                let created = try await kb.createToken(valid, as: .commandLine)
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
                let tokens = try await kb.tokens(as: .commandLine)
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
                let revoked = try await kb.revokeToken(name, as: .commandLine)
                if global.json { try Terminal.printJSON(revoked) } else { print("Revoked the token \(revoked.name).") }
            }
        }
    }
}

extension Caller {
    /// Who a command acts as: the person running kb, who can open the index file and so holds
    /// every right over it. Passed explicitly, like every caller.
    static var commandLine: Caller { .admin }

    static func listed(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ",") }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import KBRequests
@testable import KBServer
import MCP
import Testing

/// The request types, their declared fields, the OpenAPI document and the MCP tool schemas must
/// say the same thing.
@Suite struct RequestSchemaTests {
    /// Each request type with a value that sets every field, and the smallest valid body.
    static let samples: [(type: any KBRequest.Type, full: any KBRequest, minimal: [String: KBCore.JSONValue])] = {
        var search = SearchRequest(query: "venus")
        search.k = 3; search.tags = ["a"]; search.anyTags = ["b"]; search.kinds = ["note"]; search.sources = ["/x"]; search.mode = "keyword"; search.bot = "b"
        search.groupBy = "source"; search.diversity = 0.5; search.candidates = 10; search.keywordWeight = 1; search.vectorWeight = 1
        search.quantized = true; search.user = "ada"; search.explain = true; search.fusion = "rrf"; search.rerank = false
        var recall = RecallRequest(query: "q")
        recall.scopes = ["global"]; recall.tags = ["a"]; recall.k = 2; recall.mode = "hybrid"; recall.halfLife = "3d"; recall.includeSuperseded = true
        recall.asOf = "2026-03-01"
        var remember = RememberRequest(content: "c")
        remember.title = "t"; remember.tags = ["a"]; remember.scope = "global"; remember.supersede = "abcd"; remember.nearDuplicate = 0.9
        remember.validFrom = "2026-03-01"; remember.validTo = "2026-04-01T12:00:00Z"; remember.expiresAt = "2026-05-01"
        var change = MemoryChangeRequest(id: "abcd")
        change.content = "c"; change.title = .some(nil); change.tags = []
        change.validFrom = "2026-03-01"; change.validTo = .some(nil); change.expiresAt = .some("2026-05-01")
        var list = MemoryListRequest()
        list.scopes = ["global"]; list.tags = ["a"]; list.includeSuperseded = false
        var context = ContextRequest(bot: "b", report: "r", query: "q")
        context.user = "u"; context.budget = 100; context.history = [ConversationTurn(.user, "hi")]; context.tags = ["a"]
        context.anyTags = ["b"]; context.kinds = ["note"]; context.asOf = "2026-03-01T12:00:00+02:00"
        var token = TokenRequest(name: "ada-app")
        token.scopes = ["user:ada"]; token.bots = ["b"]; token.allow = ["sources"]; token.readOnly = true; token.expires = "30d"
        var extract = MemoryExtractRequest(user: "ada", bot: "b", turns: [ConversationTurn(.user, "I live in Kyiv.")])
        extract.apply = true
        var bot = BotRequest(name: "b")
        bot.systemPrompt = "p"; bot.sources = ["tag:x"]; bot.memoryScopes = ["global"]
        var botChange = BotChangeRequest(name: "b")
        botChange.systemPrompt = "p"; botChange.sources = ["tag:x"]; botChange.addSources = ["tag:y"]; botChange.removeSources = ["tag:z"]
        botChange.memoryScopes = ["global"]
        var source = SourceRequest(text: "t")
        source.title = "t"; source.tags = ["a"]; source.bots = ["b"]; source.user = "ada"; source.id = "s1"; source.collection = "app"
        var upload = UploadRequest(contentType: "text/plain")
        upload.title = "t"; upload.tag = ["a"]; upload.bot = ["b"]; upload.user = "ada"; upload.id = "s1"; upload.collection = "app"
        var sources = SourceListRequest()
        sources.user = "ada"; sources.bot = "b"; sources.kind = "pdf"; sources.tag = "a"; sources.limit = 10; sources.offset = 0
        var feedback = MemoryFeedbackRequest(id: "abcd", feedback: "wrong")
        feedback.note = "It was Lviv, not Kyiv."
        var consolidate = MemoryConsolidateRequest(scope: "user:ada")
        consolidate.apply = true; consolidate.nearDuplicate = 0.9
        var sync = SourceSyncRequest(collection: "app", items: [SourceSyncItem(id: "s1", sha256: String(repeating: "a", count: 64), title: "t")])
        sync.prune = true; sync.user = "ada"
        var read = SourceReadRequest(source: "s1")
        read.pages = "1"; read.labels = "i"; read.heading = ["h"]; read.start = 0; read.end = 9; read.maxCharacters = 100; read.bot = "b"; read.user = "ada"
        var grep = SourceGrepRequest(pattern: "rent")
        grep.literal = true; grep.ignoreCase = true; grep.sources = ["s1"]; grep.tags = ["a"]; grep.kinds = ["note"]; grep.limit = 5
        grep.bot = "b"; grep.user = "ada"
        var chat = ChatOptions()
        chat.user = "ada"; chat.report = "natal"; chat.budget = 900; chat.tags = ["a"]; chat.anyTags = ["b"]; chat.kinds = ["note"]; chat.learn = "apply"; chat.showContext = true
        return [
            (SearchRequest.self, search, ["query": "venus"]),
            (RecallRequest.self, recall, ["query": "q"]),
            (RememberRequest.self, remember, ["content": "c"]),
            (MemoryChangeRequest.self, change, ["id": "abcd", "content": "c"]),
            (MemoryListRequest.self, list, [:]),
            (ForgetRequest.self, ForgetRequest(id: "abcd"), ["id": "abcd"]),
            (ContextRequest.self, context, ["bot": "b", "query": "q"]),
            (BotRequest.self, bot, ["name": "b"]),
            (BotChangeRequest.self, botChange, ["name": "b", "systemPrompt": "p"]),
            (SourceRequest.self, source, ["text": "t"]),
            (UploadRequest.self, upload, ["contentType": "text/plain"]),
            (SourceListRequest.self, sources, [:]),
            (SourceRemoveRequest.self, SourceRemoveRequest(id: "s1"), ["id": "s1"]),
            (MemoryExtractRequest.self, extract, ["user": "ada", "turns": [["role": "user", "content": "hi"]]]),
            (EraseRequest.self, EraseRequest(scope: "user:ada"), ["scope": "user:ada"]),
            (TokenRequest.self, token, ["name": "ada-app"]),
            (ChatOptions.self, chat, [:]),
            (MemoryFeedbackRequest.self, feedback, ["id": "abcd", "feedback": "useful"]),
            (MemoryConsolidateRequest.self, consolidate, ["scope": "user:ada"]),
            (SourceSyncRequest.self, sync, ["collection": "app", "items": []]),
            (SourceReadRequest.self, read, ["source": "s1"]),
            (SourceGrepRequest.self, grep, ["pattern": "rent"]),
        ]
    }()

    @Test func everyCodableKeyIsADeclaredFieldAndEveryFieldACodableKey() throws {
        for (type, full, _) in Self.samples {
            guard case .object(let encoded) = try JSONDecoder().decode(KBCore.JSONValue.self, from: KBJSON.encode(full)) else {
                Issue.record("\(type) does not encode as an object")
                continue
            }
            #expect(Set(encoded.keys) == Set(type.fields(Limits()).map(\.name)), "\(type)")
        }
    }

    /// Decodes a body into `type` and checks it against `limits`: what every adapter does first.
    static func check(_ type: any KBRequest.Type, _ body: [String: KBCore.JSONValue], _ limits: Limits) throws {
        _ = try KBJSON.decode(type, from: .object(body)).validated(limits)
    }

    @Test(arguments: [Limits(), { var l = Limits(); l.maxResults = 7; l.maxBudget = 500; l.maxCandidates = 20; return l }()])
    func numericBoundsAreEnforcedExactlyAsDeclared(limits: Limits) throws {
        for (type, _, minimal) in Self.samples {
            for field in type.fields(limits) where field.kind == .integer || field.kind == .number {
                let step = field.kind == .integer ? 1.0 : 0.5
                func value(_ x: Double) -> KBCore.JSONValue { field.kind == .integer ? .integer(Int(x)) : .number(x) }
                for edge in [field.minimum, field.maximum].compactMap({ $0 }) {
                    var body = minimal
                    body[field.name] = value(edge)
                    #expect(throws: Never.self, "\(type).\(field.name) = \(edge)") { try Self.check(type, body, limits) }
                }
                for outside in [field.minimum.map { $0 - step }, field.maximum.map { $0 + step }].compactMap({ $0 }) {
                    var body = minimal
                    body[field.name] = value(outside)
                    let error = #expect(throws: KBError.self, "\(type).\(field.name) = \(outside)") { try Self.check(type, body, limits) }
                    #expect(error?.message.contains("\"\(field.name)\"") == true, "\(error?.message ?? "")")
                }
            }
        }
    }

    @Test func choicesAreEnforcedAsDeclared() throws {
        for (type, _, minimal) in Self.samples {
            for field in type.fields(Limits()) {
                guard case .choice(let values) = field.kind else { continue }
                for value in values {
                    var body = minimal
                    body[field.name] = .string(value)
                    #expect(throws: Never.self, "\(type).\(field.name) = \(value)") { try Self.check(type, body, Limits()) }
                }
                var body = minimal
                body[field.name] = "no-such-value"
                #expect(throws: KBError.self, "\(type).\(field.name)") { try Self.check(type, body, Limits()) }
            }
        }
    }

    /// Values each pattern must accept and refuse; odd Unicode included, since a mark after `:`
    /// or `/` joins it into one Swift character (a skin-tone modifier, U+1F3FB).
    static let patternExamples: [String: (valid: [String], invalid: [String])] = [
        Pattern.someText: (["x", "\u{1F3FB}", " a "], ["", " \n\t"]),
        Pattern.scope: (["global", "user:ada", "bot:astro", "user:\u{1F3FB}x"], ["everyone", "user:", "user:a b", " global", "global\n", "user:a\u{90}", "user:\u{FEFF}"]),
        Pattern.memoryID: (["abcd", "0123ABCD-0000-4000-8000-000000000000"], ["abc", "../..", "abcd\n"]),
        Pattern.botName: (["a", "astro-1.x_y"], ["", "bad name!", "a\n", "x/y", "collection:x", String(repeating: "x", count: 65)]),
        Pattern.userID: (["ada", "u-\u{1F3FB}", "\u{B1}3\u{F443}d\u{105}"], ["a b", "", "a\u{1}", "a\u{90}", "\u{FEFF}"]),
        Pattern.tag: (["diet", "area:career", ":\u{1F3FB}", "\u{1F3FB}", "a\u{1}b", "::"], ["", "  ", ":", " : "]),
        Pattern.selector: (["/x", "/\u{1F3FB}\u{A9}", "tag:\u{1F3FB};x", "tag:a", "tag:\u{14}:\u{1}", "kind:note", "kind:pdf", "upload:a-1.b_c"],
                           ["relative/path", "tag:", "tag::", "tag: : ", "kind:memory", "kind:x", " /x", "upload:", "upload:a b", "upload:x/y"]),
        Pattern.sourceID: (["a", "ada-lease_2026.v2", String(repeating: "x", count: 128)], ["", "a b", "x/y", "upload:a", String(repeating: "x", count: 129)]),
        Pattern.listedSourceID: (["ada-lease", "file:0123456789abcdef"], ["", "file:0123", "file:ABCDEF0123456789", "a b"]),
        Pattern.absolutePath: (["/x", "/\u{1F3FB}"], ["x", "./x", ""]),
        Pattern.halfLife: (["30d", "1.5h", "7", "0.5w"], ["0d", "-1d", "d", "3y"]),
        Pattern.time: (["2026-03-01", "2026-03-01T12:00:00Z", "2026-03-01T12:00", "2026-03-01T14:00:00.250+02:00", "2024-02-29", "2000-02-29",
                        "2026-12-31T23:59:59Z", "2026-04-30"],
                       ["2026-3-1", "yesterday", "2026-03-01 12", "2026-03-01\n", "2026-02-30", "0000-00-00", "2023-02-29", "1900-02-29",
                        "2026-04-31", "2026-03-01T24:00", "2026-03-01T12:60", "2026-12-31T23:59:60Z"]),
        Pattern.oneLine: (["a title", "  t  "], ["a\nb", "a\u{2028}b"]),
        Pattern.pageRange: (["1", "12-14", "7-7"], ["0", "a", "1-", "-3", "1-2-3", "01"]),
        Pattern.labelRange: (["xii", "xii-3", "A.1"], ["", "a b", "x-", "-x", "1-2-3"]),
        APIToken.scopePattern: (["global", "user:ada", "user:*", "bot:astro"], ["bot:*", "user:", "user:a*b", "everyone", "user:a b", "global\n"]),
    ]

    @Test func patternsAreEnforcedAsDeclared() throws {
        var seen = Set<String>()
        for (type, _, minimal) in Self.samples {
            for field in type.fields(Limits()) {
                guard let pattern = field.pattern else { continue }
                seen.insert(pattern)
                let examples = try #require(Self.patternExamples[pattern], "no examples for \(pattern) (\(type).\(field.name))")
                func body(_ value: String) -> [String: KBCore.JSONValue] {
                    var body = minimal
                    body[field.name] = field.kind == .strings ? .array([.string(value)]) : .string(value)
                    if field.name == "report" { body["bot"] = nil }   // a bot or a report, not both
                    return body
                }
                for value in examples.valid {
                    #expect(throws: Never.self, "\(type).\(field.name) = \(value.debugDescription)") { try Self.check(type, body(value), Limits()) }
                }
                for value in examples.invalid {
                    let error = #expect(throws: KBError.self, "\(type).\(field.name) = \(value.debugDescription)") {
                        try Self.check(type, body(value), Limits())
                    }
                    #expect(error?.code == .invalidArgument, "\(type).\(field.name) = \(value.debugDescription)")
                }
            }
        }
        #expect(seen == Set(Self.patternExamples.keys))
    }

    /// A context request's `user` becomes the scope `user:ID`: whatever the one pattern accepts,
    /// the other must accept too, or a valid request fails late.
    @Test func everyValidUserIDMakesAValidScope() throws {
        let (valid, invalid) = try #require(Self.patternExamples[Pattern.userID])
        for id in valid {
            #expect(throws: Never.self, "\(id.debugDescription)") { try MemoryScope.user(id) }
        }
        for id in invalid where !id.isEmpty {
            #expect(throws: KBError.self, "\(id.debugDescription)") { try MemoryScope.user(id) }
        }
    }

    @Test func anUnknownFieldIsRefusedByName() throws {
        for (type, _, minimal) in Self.samples {
            var body = minimal
            body["surprise"] = 1
            let error = #expect(throws: KBError.self, "\(type)") { try KBJSON.decode(type, from: .object(body)) }
            #expect(error?.message.contains("\"surprise\"") == true)
        }
    }

    @Test func theOpenAPIDocumentAndTheMCPToolsCarryTheRequestSchemas() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            let document = try await client.execute(uri: "/openapi.json", method: .get, headers: [.authorization: "Bearer \(Fixture.token)"]) { response in
                try JSONDecoder().decode(KBCore.JSONValue.self, from: Data(buffer: response.body))
            }
            guard case .object(let root) = document, case .object(let components)? = root["components"],
                  case .object(let schemas)? = components["schemas"] else {
                Issue.record("no components.schemas")
                return
            }
            for type in [SearchRequest.self, RecallRequest.self, RememberRequest.self, ContextRequest.self, BotRequest.self,
                         SourceRequest.self, MemoryExtractRequest.self, SourceSyncRequest.self, SourceGrepRequest.self] as [any KBRequest.Type] {
                #expect(schemas[type.schemaName] == type.schema(fixture.kb.limits), "\(type)")
            }
        }
        let tools = try MCPService(kb: fixture.kb).tools()
        let expected: [String: any KBRequest.Type] = [
            "search": SearchRequest.self, "context": ContextRequest.self, "remember": RememberRequest.self,
            "recall": RecallRequest.self, "update_memory": MemoryChangeRequest.self, "forget": ForgetRequest.self,
            "add_source": SourceRequest.self, "list_sources": SourceListRequest.self, "remove_source": SourceRemoveRequest.self,
            "extract_memories": MemoryExtractRequest.self, "forget_user": EraseRequest.self,
            "memory_feedback": MemoryFeedbackRequest.self, "consolidate_memories": MemoryConsolidateRequest.self,
            "read_source": SourceReadRequest.self, "read_page": PageReadRequest.self, "grep_sources": SourceGrepRequest.self,
            "sync_sources": SourceSyncRequest.self,
        ]
        #expect(Set(tools.map(\.name)) == Set(expected.keys))
        for tool in tools {
            let schema = try JSONDecoder().decode(KBCore.JSONValue.self, from: JSONEncoder().encode(tool.inputSchema))
            #expect(schema == expected[tool.name]?.schema(fixture.kb.limits), "\(tool.name)")
        }
    }
}

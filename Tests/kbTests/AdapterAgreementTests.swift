import Foundation
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import KBRequests
@testable import KBServer
import MCP
import Testing

/// The same requests through the three ways into kb — the CLI (`kb … --json`), the HTTP service
/// and the MCP tools — must get the same answers and the same errors: defaults, the edges of
/// every limit, and bad values. Each case also says whether it should succeed, so three adapters
/// failing alike cannot pass for agreement.
@Suite(.serialized) struct AdapterAgreementTests {
    /// One request as each adapter takes it; nil where an adapter does not offer it.
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var succeeds: Bool
        var body: [String: KBCore.JSONValue]
        var http: (method: HTTPRequest.Method, path: String)?
        var mcp: String?
        var cli: [String]?
        /// Keys left out of the comparison (recency-weighted scores depend on when each adapter ran).
        var ignoring: Set<String> = []
        var description: String { name }
    }

    /// What an adapter answered: a JSON value, or an error's code and message.
    enum Answer: Equatable, CustomStringConvertible {
        case value(KBCore.JSONValue)
        case error(code: String, message: String)

        var description: String {
            switch self {
            case .value(let json): "value \(String(describing: json).prefix(300))"
            case .error(let code, let message): "error \(code): \(message)"
            }
        }
    }

    static func search(_ name: String, _ succeeds: Bool, _ body: [String: KBCore.JSONValue], _ cli: [String]) -> Case {
        Case(name: "search: " + name, succeeds: succeeds, body: body, http: (.post, "/v1/search"), mcp: "search", cli: ["search"] + cli)
    }

    static func recall(_ name: String, _ succeeds: Bool, _ body: [String: KBCore.JSONValue], _ cli: [String]) -> Case {
        Case(name: "recall: " + name, succeeds: succeeds, body: body, http: (.post, "/v1/memories/search"), mcp: "recall",
             cli: ["memory", "search"] + cli)
    }

    static func context(_ name: String, _ succeeds: Bool, _ body: [String: KBCore.JSONValue], _ cli: [String]) -> Case {
        Case(name: "context: " + name, succeeds: succeeds, body: body, http: (.post, "/v1/context"), mcp: "context", cli: ["context"] + cli)
    }

    static func remember(_ name: String, _ body: [String: KBCore.JSONValue], _ cli: [String]) -> Case {
        Case(name: "remember: " + name, succeeds: false, body: body, http: (.post, "/v1/memories"), mcp: "remember",
             cli: ["memory", "add"] + cli)
    }

    static let longQuery = String(repeating: "venus ", count: 667)   // 4,002 characters

    static let cases: [Case] = [
        search("defaults", true, ["query": "venus"], ["venus"]),
        search("k at its minimum", true, ["query": "venus", "k": 1], ["-k", "1", "venus"]),
        search("k at its maximum", true, ["query": "venus", "k": 100], ["-k", "100", "venus"]),
        search("k over its maximum", false, ["query": "venus", "k": 101], ["-k", "101", "venus"]),
        search("k of 0", false, ["query": "venus", "k": 0], ["-k", "0", "venus"]),
        search("keyword mode", true, ["query": "discipline", "mode": "keyword"], ["--mode", "keyword", "discipline"]),
        search("vector mode", true, ["query": "discipline", "mode": "vector"], ["--mode", "vector", "discipline"]),
        search("an unknown mode", false, ["query": "venus", "mode": "fuzzy"], ["--mode", "fuzzy", "venus"]),
        search("memories by kind", true, ["query": "bread", "kinds": ["memory"]], ["--kind", "memory", "bread"]),
        search("an unknown kind", false, ["query": "bread", "kinds": ["book"]], ["--kind", "book", "bread"]),
        search("a tag", true, ["query": "rules", "tags": ["area:career"]], ["--tag", "area:career", "rules"]),
        search("a bot's sources", true, ["query": "time", "bot": "chef"], ["--bot", "chef", "time"]),
        search("an unknown bot", false, ["query": "time", "bot": "nobody"], ["--bot", "nobody", "time"]),
        search("candidates at their maximum", true, ["query": "venus", "candidates": 10_000], ["--candidates", "10000", "venus"]),
        search("candidates over their maximum", false, ["query": "venus", "candidates": 10_001], ["--candidates", "10001", "venus"]),
        search("diversity", true, ["query": "venus", "diversity": 0.5], ["--diversity", "0.5", "venus"]),
        search("diversity over 1", false, ["query": "venus", "diversity": 1.5], ["--diversity", "1.5", "venus"]),
        search("both weights 0", false, ["query": "venus", "keywordWeight": 0, "vectorWeight": 0],
               ["--keyword-weight", "0", "--vector-weight", "0", "venus"]),
        search("grouped by source", true, ["query": "rules", "groupBy": "source"], ["--group-by", "source", "rules"]),
        search("grouped by something else", false, ["query": "rules", "groupBy": "page"], ["--group-by", "page", "rules"]),
        search("an empty query", false, ["query": "   "], ["   "]),
        search("a query over the length limit", false, ["query": .string(longQuery)], [longQuery]),
        search("a query without words", true, ["query": "*** ()"], ["*** ()"]),
        Case(name: "search: an unknown field", succeeds: false, body: ["query": "venus", "top_k": 3], http: (.post, "/v1/search"), mcp: "search"),
        Case(name: "search: k of the wrong type", succeeds: false, body: ["query": "venus", "k": "ten"], http: (.post, "/v1/search"), mcp: "search"),
        Case(name: "search: no query", succeeds: false, body: ["k": 3], http: (.post, "/v1/search"), mcp: "search"),

        recall("defaults", true, ["query": "bread"], ["bread"]),
        recall("one scope", true, ["query": "bread", "scopes": ["user:ada"]], ["--scope", "user:ada", "bread"]),
        recall("k over its maximum", false, ["query": "bread", "k": 101], ["-k", "101", "bread"]),
        recall("a bad scope", false, ["query": "bread", "scopes": ["team:x"]], ["--scope", "team:x", "bread"]),
        recall("a bad half-life", false, ["query": "bread", "halfLife": "soon"], ["--half-life", "soon", "bread"]),
        {
            var weighted = recall("keyword mode with a half-life", true, ["query": "bread", "mode": "keyword", "halfLife": "30d"],
                                  ["--mode", "keyword", "--half-life", "30d", "bread"])
            weighted.ignoring = ["score"]
            return weighted
        }(),

        context("a bot with a user", true, ["bot": "astro", "query": "venus", "user": "ada"], ["--bot", "astro", "--user", "ada", "venus"]),
        context("the largest budget", true, ["bot": "chef", "query": "bread", "budget": 32_000], ["--bot", "chef", "--budget", "32000", "bread"]),
        context("a budget over the limit", false, ["bot": "chef", "query": "bread", "budget": 32_001],
                ["--bot", "chef", "--budget", "32001", "bread"]),
        context("a budget too small for the frame", false, ["bot": "chef", "query": "bread", "budget": 1], ["--bot", "chef", "--budget", "1", "bread"]),
        context("an unknown bot", false, ["bot": "nobody", "query": "x"], ["--bot", "nobody", "x"]),
        context("no turn for a bot", false, ["bot": "chef"], ["--bot", "chef"]),
        context("neither bot nor report", false, ["query": "x"], ["x"]),
        context("a bad user id", false, ["bot": "chef", "query": "bread", "user": "a b"], ["--bot", "chef", "--user", "a b", "bread"]),
        context("a report", true, ["report": "outlook", "query": "career"], ["--report", "reports/outlook.yaml", "career"]),

        remember("empty content", ["content": "  "], ["  "]),
        remember("a bad scope", ["content": "x", "scope": "everyone"], ["--scope", "everyone", "x"]),
        remember("a near-duplicate threshold over 1", ["content": "x", "nearDuplicate": 2], ["--near-duplicate", "2", "x"]),
        remember("a bad id to supersede", ["content": "x", "supersede": "zz"], ["--supersede", "zz", "x"]),
        Case(name: "update: nothing to change", succeeds: false, body: ["id": "0123abcd"], http: (.patch, "/v1/memories/0123abcd"),
             mcp: "update_memory", cli: ["memory", "update", "0123abcd"]),
        Case(name: "update: an unknown memory", succeeds: false, body: ["id": "0123abcd", "content": "x"], http: (.patch, "/v1/memories/0123abcd"),
             mcp: "update_memory", cli: ["memory", "update", "0123abcd", "--content", "x"]),
        Case(name: "forget: a bad id", succeeds: false, body: ["id": "zz!"], http: (.delete, "/v1/memories/zz!"), mcp: "forget",
             cli: ["memory", "delete", "zz!"]),
        Case(name: "forget: an unknown memory", succeeds: false, body: ["id": "0123abcd"], http: (.delete, "/v1/memories/0123abcd"),
             mcp: "forget", cli: ["memory", "delete", "0123abcd"]),
        Case(name: "bot: a bad name", succeeds: false, body: ["name": "bad name!"], http: (.post, "/v1/bots"), cli: ["bot", "create", "bad name!"]),
        Case(name: "bot: a name in use", succeeds: false, body: ["name": "chef"], http: (.post, "/v1/bots"), cli: ["bot", "create", "chef"]),
        Case(name: "bot: nothing to change", succeeds: false, body: ["name": "chef"], http: (.patch, "/v1/bots/chef"), cli: ["bot", "update", "chef"]),
        Case(name: "bot: removing a source it lacks", succeeds: false, body: ["name": "chef", "removeSources": ["tag:none"]],
             http: (.patch, "/v1/bots/chef"), cli: ["bot", "remove-source", "chef", "tag:none"]),
    ]

    /// A knowledge base with two bots, memories and a report template (hashing embedder).
    static let fixture = Task { () throws -> (cli: CLI, kb: KnowledgeBase, reports: [String: ReportTemplate]) in
        let cli = try CLI()
        try cli.write("notes/astro/venus.md", "---\ntags: [area:love]\n---\n# Venus\n\nVenus rules love, beauty and money. Venus in the tenth house favours the arts.")
        try cli.write("notes/astro/saturn.md", "---\ntags: [area:career]\n---\n# Saturn\n\nSaturn rules discipline, time and the long climb of a career.")
        try cli.write("notes/cooking/bread.md", "# Bread\n\nBread needs flour, water, salt and time. Knead the dough until it is smooth.")
        try cli.write("reports/outlook.yaml", "title: Outlook\nsections:\n  - name: Career\n    query: career discipline\n    snippets: 2\n    share: 1\n")
        for arguments in [
            ["ingest", "--embedder", "hashing", "notes"],
            ["bot", "create", "astro", "--source", "notes/astro"],
            ["bot", "create", "chef", "--source", "notes/cooking"],
            ["memory", "add", "--scope", "user:ada", "Ada has Venus in the tenth house and loves bread."],
            ["memory", "add", "--scope", "user:bob", "Bob hates bread."],
        ] {
            let result = try await cli.run(arguments + ["--db", "kb.sqlite"])
            guard result.status == 0 else { throw KBError(.invalidArgument, "setup failed: \(arguments): \(result.stderr)") }
        }
        let kb = try KnowledgeBase.open(at: cli.index, create: false)
        return (cli, kb, try ReportTemplate.loadAll(folder: cli.workdir.appendingPathComponent("reports").path))
    }

    static func json(_ data: Data) -> KBCore.JSONValue? { try? JSONDecoder().decode(KBCore.JSONValue.self, from: data) }

    static func without(_ keys: Set<String>, _ value: KBCore.JSONValue) -> KBCore.JSONValue {
        switch value {
        case .object(let object): .object(object.filter { !keys.contains($0.key) }.mapValues { without(keys, $0) })
        case .array(let array): .array(array.map { without(keys, $0) })
        default: value
        }
    }

    static func answer(fromError json: KBCore.JSONValue?) -> Answer? {
        guard case .object(let body)? = json, case .object(let error)? = body["error"],
              case .string(let code)? = error["code"], case .string(let message)? = error["message"] else { return nil }
        return .error(code: code, message: message)
    }

    func viaHTTP(_ request: Case, _ service: RetrievalService) async throws -> Answer? {
        guard let (method, path) = request.http else { return nil }
        var body = request.body
        if method != .post { body["id"] = nil; body["name"] = nil }   // the path names them
        let bytes = method == .delete ? nil : ByteBuffer(bytes: try KBJSON.encode(KBCore.JSONValue.object(body)))
        return try await service.application().test(.router) { client in
            try await client.execute(uri: path, method: method, headers: [.contentType: "application/json"], body: bytes) { response in
                let json = Self.json(Data(buffer: response.body))
                return response.status.code < 300 ? json.map { .value($0) } : Self.answer(fromError: json)
            }
        }
    }

    func viaMCP(_ request: Case, _ service: MCPService) async throws -> Answer? {
        guard let tool = request.mcp else { return nil }
        let arguments = try JSONDecoder().decode([String: Value].self, from: KBJSON.encode(KBCore.JSONValue.object(request.body)))
        do {
            return Self.json(Data(try await service.call(tool, arguments).utf8)).map { .value($0) }
        } catch let error as KBError {
            return .error(code: error.code.rawValue, message: error.message)
        }
    }

    func viaCLI(_ request: Case, _ cli: CLI) async throws -> Answer? {
        guard let arguments = request.cli else { return nil }
        let result = try await cli.run(arguments + ["--db", "kb.sqlite", "--json"])
        if result.status == 0 { return Self.json(Data(result.stdout.utf8)).map { .value($0) } }
        return Self.answer(fromError: Self.json(Data(result.stderr.utf8)))
    }

    @Test(arguments: cases)
    func everyAdapterGivesTheSameAnswer(to request: Case) async throws {
        let (cli, kb, reports) = try await Self.fixture.value
        var configuration = ServiceConfiguration()
        configuration.reports = reports
        let answers = [
            ("HTTP", try await viaHTTP(request, RetrievalService(kb: kb, configuration: configuration))),
            ("MCP", try await viaMCP(request, MCPService(kb: kb, reports: reports))),
            ("CLI", try await viaCLI(request, cli)),
        ].compactMap { name, answer in
            answer.map { answer -> (String, Answer) in
                guard case .value(let json) = answer, !request.ignoring.isEmpty else { return (name, answer) }
                return (name, .value(Self.without(request.ignoring, json)))
            }
        }
        #expect(answers.count >= 2, "a case must run through at least two adapters")
        for (name, answer) in answers {
            if case .value = answer { #expect(request.succeeds, "\(name) answered, but the request should fail: \(answer)") }
            if case .error = answer { #expect(!request.succeeds, "\(name) failed: \(answer)") }
        }
        for (name, answer) in answers.dropFirst() {
            #expect(answer == answers[0].1, "\(name) and \(answers[0].0) differ:\n\(answer)\n\(answers[0].1)")
        }
    }
}

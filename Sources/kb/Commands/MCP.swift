#if Server
import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBRequests
import KBServer
import KBStore

struct MCP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Run a Model Context Protocol server on stdio (tools: search, context, remember, recall, update_memory, forget, forget_user, extract_memories, add_source, list_sources, remove_source).",
        discussion: """
            Point a desktop assistant at `kb mcp --db PATH`. Logs go to stderr; stdout carries only the protocol. \
            The tools act as the index's owner; with --token (or KB_MCP_TOKEN) a scoped token's secret, they have \
            exactly that token's rights, as over HTTP.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var endpoint: EndpointOption
    @OptionGroup var pool: DatabasePoolOption

    @Option(help: ArgumentHelp("A folder of report templates (*.yaml) the context tool may name.", valueName: "folder"))
    var reports: String?

    @OptionGroup var llm: LLMOption

    @Option(help: ArgumentHelp("Act with this scoped token's rights (kb token create; default: $KB_MCP_TOKEN).", valueName: "token"))
    var token: String?

    func run() async throws {
        try await reportingErrors(json: global.json) {
            KnowledgeBase.configure(.throughput)
            let templates = try reports.map { try ReportTemplate.loadAll(folder: $0) } ?? [:]
            let model = try llm.model()
            let kb = try KnowledgeBase.open(at: global.databasePath, create: true, store: try StoreOptions(connections: pool.size),
                                            embedderURL: endpoint.url)
            try endpoint.install(on: kb)
            kb.recoverEmbedderInBackground()
            let secret = token ?? ProcessInfo.processInfo.environment["KB_MCP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            let service = MCPService(kb: kb, reports: templates, chatModel: model, token: secret)
            _ = try await service.caller()   // a bad token stops here, before a client connects
            try await service.runOnStdio()
        }
    }
}
#endif

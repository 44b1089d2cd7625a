#if Server
import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBServer

struct MCP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Run a Model Context Protocol server on stdio (tools: search, context, remember, recall, update_memory, forget, forget_user, extract_memories, add_source, list_sources, remove_source).",
        discussion: "Point a desktop assistant at `kb mcp --db PATH`. Logs go to stderr; stdout carries only the protocol.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var endpoint: EndpointOption
    @OptionGroup var pool: DatabasePoolOption

    @Option(help: ArgumentHelp("A folder of report templates (*.yaml) the context tool may name.", valueName: "folder"))
    var reports: String?

    @OptionGroup var llm: LLMOption

    func run() async throws {
        try await reportingErrors(json: global.json) {
            KnowledgeBase.configure(.throughput)
            let templates = try reports.map { try ReportTemplate.loadAll(folder: $0) } ?? [:]
            let model = try llm.model()
            var environment = ProcessInfo.processInfo.environment
            if let size = pool.size { environment["KB_DB_POOL"] = String(size) }
            let kb = try KnowledgeBase.open(at: global.databasePath, create: true, environment: environment, embedderURL: endpoint.url)
            kb.recoverEmbedderInBackground()
            try await MCPService(kb: kb, reports: templates, memoryModel: model).runOnStdio()
        }
    }
}
#endif

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

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP retrieval service (context, search, memories, bots, embeddings).",
        discussion: """
            Binds 127.0.0.1:8080 by default. An index that does not exist yet is created (in an existing folder). \
            Every request but GET /healthz needs `Authorization: Bearer TOKEN` \
            when a token is set (--token or KB_API_TOKEN); kb refuses to bind to any other address without one. \
            GET /openapi.json describes every endpoint. Report templates are read once, at start, from --reports. \
            Sources posted to /v1/sources are read in the background, one at a time; an upload is stored \
            before it is acknowledged, and jobs a stopped server left are run when it starts again. \
            Web pages of other origins are refused (--allow-origin lets one in), and so are requests for host names \
            kb does not answer to (--allowed-host adds one); a JSON body must be sent as application/json.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var endpoint: EndpointOption

    @Option(help: "The address to bind.")
    var host = ServiceConfiguration().host

    @Option(help: "The port.")
    var port = ServiceConfiguration().port

    @OptionGroup var pool: DatabasePoolOption

    @Option(help: ArgumentHelp("The API token (default: $KB_API_TOKEN).", valueName: "token"))
    var token: String?

    @Option(help: ArgumentHelp("A folder of report templates (*.yaml).", valueName: "folder"))
    var reports: String?

    @OptionGroup var llm: LLMOption

    @Option(name: .customLong("log-retention"), help: ArgumentHelp("How long the request log keeps rows (kb usage reads them).", valueName: "duration"))
    var logRetention = "30d"

    @Flag(name: .customLong("log-queries"), help: "Keep each logged request's query text too (by default only counts, hashes and times).")
    var logQueries = false

    @Flag(name: .customLong("no-request-log"), help: "Log no requests.")
    var noRequestLog = false

    @Flag(name: .customLong("metrics-public"), help: "Serve GET /metrics without a token (by default the admin token only).")
    var metricsPublic = false

    @Option(name: .customLong("allow-origin"), help: ArgumentHelp(
        "A web page's origin that may call kb from a browser (CORS), e.g. http://localhost:3000; repeatable. Pages of other origins are refused.",
        valueName: "origin"))
    var allowOrigins: [String] = []

    @Option(name: .customLong("allowed-host"), help: ArgumentHelp(
        "A host name kb answers to besides its address, localhost, 127.0.0.1 and [::1] (a reverse proxy's or the machine's name); repeatable.",
        valueName: "name"))
    var allowedHosts: [String] = []

    @Option(name: .customLong("watch"), help: ArgumentHelp(
        "A folder to keep in the index as its files change (repeatable): new and edited files are read, deleted ones removed (Linux inotify, and a full rescan every 10 minutes).",
        valueName: "folder"))
    var watch: [String] = []

    @Option(name: .customLong("max-body"), help: ArgumentHelp("Largest request body, in bytes.", valueName: "bytes"))
    var maxBody = ServiceConfiguration().maxBodyBytes

    @Option(name: .customLong("max-upload"), help: ArgumentHelp(
        "Largest file uploaded to POST /v1/sources, in bytes (streamed into the index, never held whole in memory).", valueName: "bytes"))
    var maxUpload = Limits().maxUploadBytes

    func validate() throws {
        guard maxUpload >= 1024 else { throw ValidationError("--max-upload must be at least 1024 bytes.") }
    }

    func run() async throws {
        try await reportingErrors(json: global.json) {
            KnowledgeBase.configure(.throughput)
            var configuration = ServiceConfiguration()
            configuration.host = host
            configuration.port = port
            configuration.token = token ?? ProcessInfo.processInfo.environment["KB_API_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            configuration.maxBodyBytes = maxBody
            if let reports { configuration.reports = try ReportTemplate.loadAll(folder: reports) }
            configuration.chatModel = try llm.model()
            if noRequestLog {
                configuration.requestLog = nil
            } else {
                var settings = RequestLog.Settings()
                settings.retention = try Recency(logRetention).halfLife
                settings.logQueries = logQueries
                configuration.requestLog = settings
            }
            configuration.metricsPublic = metricsPublic
            configuration.allowedOrigins = allowOrigins
            configuration.allowedHosts = allowedHosts
            if !watch.isEmpty { configuration.watch = WatchSettings(folders: watch) }
            try configuration.validate()
            var limits = Limits()
            limits.maxUploadBytes = maxUpload
            let (kb, created) = try KnowledgeBase.openForService(at: global.databasePath, limits: limits, embedderURL: endpoint.url,
                                                                 store: try StoreOptions(connections: pool.size))
            try endpoint.install(on: kb)
            if var watching = configuration.watch {
                watching.ingest.ocr.languages = try await kb.ocrLanguages(given: nil, as: .admin)
                configuration.watch = watching
            }
            if created { FileHandle.standardError.write(Data("kb serve: created a new, empty index at \(kb.path)\n".utf8)) }
            if let note = Terminal.debugBuildNote(for: [kb.path]) { FileHandle.standardError.write(Data("kb serve: note: \(note)\n".utf8)) }
            FileHandle.standardError.write(Data((
                "kb serve: http://\(host):\(port) (index \(kb.path); \(configuration.reports.count) report template(s); "
              + (configuration.token == nil ? "no token" : "bearer token required") + ")\n").utf8))
            try await RetrievalService(kb: kb, configuration: configuration).run { line in
                FileHandle.standardError.write(Data("kb serve: \(line)\n".utf8))
            }
        }
    }
}
#endif

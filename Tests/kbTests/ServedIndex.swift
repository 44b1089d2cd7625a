import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KBEmbed
import Testing

/// `kb serve` on one of a test's indexes, on a random port (with a token, or open on loopback when
/// `token` is nil), answering once warm (`/healthz` 200). `stop()` ends it.
///
/// It waits up to two minutes: a debug build beside the other test phases on two cores can take
/// tens of seconds to load a model. If the server exits first (a port taken, a bad index), the
/// test fails at once with what the server printed.
struct ServedIndex {
    let base: URL
    let token: String?
    private let process: Process
    /// Where its standard error goes.
    private let log: URL

    /// What it printed on standard error so far.
    var printed: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Starts it in the test's folder on `index` (the test's default index if nil); `environment`
    /// is added to the process's own.
    init(_ cli: CLI, index: String? = nil, token: String?, environment: [String: String] = [:]) async throws {
        var attempt = 0
        while true {
            attempt += 1
            do {
                self = try await ServedIndex(cli, index: index, token: token, environment: environment,
                                             port: Int.random(in: 20000...32000))
                return
            } catch let taken as PortTaken where attempt < 5 {
                _ = taken   // another program (or a test beside this one) holds it: try another
            }
        }
    }

    /// Thrown when the server exits at once because its port is taken.
    private struct PortTaken: Error {}

    /// Starts it on `port`; `PortTaken` if that port is in use. Ports come from below Linux's
    /// ephemeral range (32768–60999), where outgoing connections take theirs.
    private init(_ cli: CLI, index: String?, token: String?, environment: [String: String], port: Int) async throws {
        process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--db", index.map { cli.index(named: $0) } ?? cli.index, "--port", String(port)]
            + (token.map { ["--token", $0] } ?? [])
        process.currentDirectoryURL = cli.workdir
        var added = environment
        if token == nil { added["KB_API_TOKEN"] = "" }
        process.environment = ProcessInfo.processInfo.environment.merging(added) { $1 }
        log = cli.workdir.appendingPathComponent("serve-\(port).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = logHandle
        try process.run()
        try? logHandle.close()
        base = URL(string: "http://127.0.0.1:\(port)")!
        self.token = token
        var healthy = false
        for _ in 0..<1200 where !healthy && process.isRunning {   // 200 once warm (503 while it warms or loads a model)
            if let (_, response) = try? await URLSession.shared.dataCancellingSafely(from: base.appendingPathComponent("healthz")),
               (response as? HTTPURLResponse)?.statusCode == 200 {
                healthy = true
            } else {
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
        if !healthy { stop() }
        let printed = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        if !healthy, printed.contains("Address already in use") { throw PortTaken() }
        try #require(healthy, "kb serve did not answer /healthz on port \(port); it printed: \(printed.suffix(2000))")
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// POSTs `body` as JSON to `path`, with the token unless `authorized` is false: the status and the JSON answer.
    func post(_ path: String, _ body: [String: Any], authorized: Bool = true) async throws -> (Int, [String: Any]?) {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if authorized, let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.dataCancellingSafely(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

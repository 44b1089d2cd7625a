import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KBEmbed
import Testing

/// `kb serve` on one of a test's indexes, on a random port with a token, answering once warm
/// (`/healthz` 200). `stop()` ends it.
struct ServedIndex {
    let base: URL
    let token: String
    private let process: Process

    /// Starts it in the test's folder; `environment` is added to the process's own.
    init(_ cli: CLI, token: String, environment: [String: String] = [:]) async throws {
        let port = Int.random(in: 20000...60000)
        process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--db", cli.index, "--port", String(port), "--token", token]
        process.currentDirectoryURL = cli.workdir
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        base = URL(string: "http://127.0.0.1:\(port)")!
        self.token = token
        var healthy = false
        for _ in 0..<1200 where !healthy {   // 200 once warm (503 while it warms or loads a model)
            if let (_, response) = try? await URLSession.shared.dataCancellingSafely(from: base.appendingPathComponent("healthz")),
               (response as? HTTPURLResponse)?.statusCode == 200 {
                healthy = true
            } else {
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
        if !healthy { stop() }
        try #require(healthy, "kb serve did not answer /healthz")
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
        if authorized { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.dataCancellingSafely(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

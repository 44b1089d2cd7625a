import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KBEmbed
import KBKit
import Testing

/// kill -9 in the middle of memory adds and context requests loses no acknowledged memory and
/// leaves a sound index (scripts/crash-test.sh runs ten rounds with the local model).
@Suite struct CrashTests {
    /// A running `kb serve` on a free port.
    struct Server {
        let process: Process
        let base: URL

        static func start(_ cli: CLI) async throws -> Server {
            for _ in 0..<5 {
                let port = Int.random(in: 20000...32000)   // below Linux's ephemeral ports
                let process = Process()
                process.executableURL = CLI.binary
                process.arguments = ["serve", "--db", cli.index, "--port", String(port)]
                process.currentDirectoryURL = cli.workdir
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                let base = URL(string: "http://127.0.0.1:\(port)")!
                for _ in 0..<1200 where process.isRunning {   // 200 once warm; a taken port ends the process
                    if let (_, response) = try? await CrashTests.session.dataCancellingSafely(from: base.appendingPathComponent("healthz")),
                       (response as? HTTPURLResponse)?.statusCode == 200 {
                        return Server(process: process, base: base)
                    }
                    try await Task.sleep(nanoseconds: 50_000_000)
                }
                process.terminate()   // the port was taken: try another
            }
            throw CocoaError(.fileReadUnknown)
        }

        func kill() {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Short timeouts: requests in flight when the server is killed must not hold the test up.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 5
        configuration.timeoutIntervalForResource = 10
        return URLSession(configuration: configuration)
    }()

    /// For requests made while the server is alive and should answer, however loaded the
    /// machine is: a timeout there would test the CI machine, not durability.
    static let patientSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 120
        configuration.timeoutIntervalForResource = 180
        return URLSession(configuration: configuration)
    }()

    /// `patient` for a server that is alive and must answer; the default for requests that may
    /// be in flight when it is killed.
    static func send(_ base: URL, _ method: String, _ path: String, _ body: [String: Any]? = nil, patient: Bool = false) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: base.appendingPathComponent(path), timeoutInterval: patient ? 120 : 5)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let (data, response) = try await (patient ? patientSession : session).dataCancellingSafely(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    @Test func killingTheServerMidLoadLosesNoAcknowledgedMemory() async throws {
        let cli = try CLI()
        try cli.write("notes/tea.md", "# Tea\n\nTea at five o'clock, with Saturn in the sixth house.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "notes").status == 0)
        #expect(try await cli.run("bot", "create", "--db", "kb.sqlite", "astro", "--source", "notes").status == 0)
        let acknowledged = LockedDictionary()
        for round in 0..<2 {
            let server = try await Server.start(cli)
            let base = server.base
            let load = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<6 {
                        group.addTask {
                            var n = 0
                            while !Task.isCancelled {
                                n += 1
                                let content = "Round \(round) worker \(worker) fact \(n)."
                                if worker < 4 {
                                    // Patient: on a loaded machine an add can take longer than five seconds, and
                                    // one given up on is never acknowledged. The kill closes its socket at once.
                                    guard let (status, body) = try? await Self.send(base, "POST", "v1/memories", ["content": content, "scope": "user:u\(worker)"], patient: true),
                                          status == 200 || status == 201, let id = (body["memory"] as? [String: Any])?["id"] as? String else { continue }
                                    acknowledged.set(id, content)
                                } else {
                                    _ = try? await Self.send(base, "POST", "v1/context", ["bot": "astro", "user": "u\(worker)", "query": "tea and Saturn"])
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            // Kill mid-load: once this round has had some adds acknowledged, while more are in flight.
            // The deadline only keeps a broken server from holding the suite up; a loaded CI machine
            // (the PostgreSQL suite runs its tests side by side) acknowledged 16 adds in the first minute.
            let before = acknowledged.count
            let deadline = Date().addingTimeInterval(600)
            while acknowledged.count < before + 20 && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            server.kill()
            load.cancel()
            _ = await load.result
            #expect(acknowledged.count >= before + 20, "round \(round): too few adds were acknowledged before the kill")

            let kb = try KnowledgeBase.open(at: cli.index, create: false)
            #expect(try await kb.integrityCheck(as: .admin) == "ok", "round \(round)")
            let restarted = try await Server.start(cli)
            for (id, content) in acknowledged.all {
                let (status, body) = try await Self.send(restarted.base, "GET", "v1/memories/\(id)", patient: true)
                #expect(status == 200 && (body["memory"] as? [String: Any])?["content"] as? String == content, "round \(round): \(id) lost")
            }
            restarted.kill()
        }
    }

    /// An upload answered 202 is durable: kill -9 while its job is queued or running, and the
    /// restarted server takes the job up again (a running one once its heartbeat is stale) and
    /// finishes it.
    @Test func killingTheServerAfterA202LosesNoUpload() async throws {
        let cli = try CLI()
        try cli.write("notes/tea.md", "# Tea\n\nTea at five o'clock.")
        #expect(try await cli.run("ingest", "--db", "kb.sqlite", "--embedder", "hashing", "notes").status == 0)
        let pdf = CLI.packageRoot.appendingPathComponent("Tests/KBIngestTests/Fixtures/pdf/book.pdf")
        let server = try await Server.start(cli)
        var jobs: [String: String] = [:]
        for n in 1...3 {   // three, so that one is likely queued and one running when the server dies
            var request = URLRequest(url: URL(string: "\(server.base)/v1/sources?id=book\(n)")!, timeoutInterval: 120)
            request.httpMethod = "POST"
            request.setValue("application/pdf", forHTTPHeaderField: "Content-Type")
            request.httpBody = try Data(contentsOf: pdf)
            let (data, response) = try await Self.patientSession.dataCancellingSafely(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 202)
            let body = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            jobs["book\(n)"] = try #require((body?["job"] as? [String: Any])?["id"] as? String)
        }
        server.kill()

        let restarted = try await Server.start(cli)
        defer { restarted.kill() }
        let deadline = Date().addingTimeInterval(120)
        var states: [String: String] = [:]
        while Date() < deadline {
            for (_, job) in jobs {
                let (_, body) = try await Self.send(restarted.base, "GET", "v1/jobs/\(job)", patient: true)
                states[job] = body["state"] as? String
            }
            if states.values.allSatisfy({ $0 == "done" || $0 == "failed" }) { break }
            try await Task.sleep(nanoseconds: 250_000_000)
        }
        #expect(states.values.allSatisfy { $0 == "done" }, "\(states)")
        let (_, listed) = try await Self.send(restarted.base, "GET", "v1/sources", patient: true)
        let snippets = Dictionary((listed["sources"] as? [[String: Any]] ?? []).compactMap { source in
            (source["id"] as? String).map { ($0, source["snippets"] as? Int ?? 0) } }, uniquingKeysWith: { a, _ in a })
        for id in jobs.keys { #expect(snippets[id] == 17, "\(id): \(listed)") }   // book.pdf makes 17 snippets
        // Identical snippets collapse into one hit, so the keyword search names one of the three copies.
        let (_, found) = try await Self.send(restarted.base, "POST", "v1/search", ["query": "front-matter page conventions", "mode": "keyword"], patient: true)
        let first = ((found["hits"] as? [[String: Any]])?.first?["sourcePath"] as? String) ?? ""
        #expect(first.hasPrefix("upload:book"), "\(found)")
        let kb = try KnowledgeBase.open(at: cli.index, create: false)
        #expect(try await kb.integrityCheck(as: .admin) == "ok")
    }
}

/// Acknowledged adds, written by concurrent tasks.
final class LockedDictionary: @unchecked Sendable {
    // @unchecked: `values` is guarded by `lock`.
    private let lock = NSLock()
    private var values: [String: String] = [:]
    func set(_ key: String, _ value: String) { lock.withLock { values[key] = value } }
    var count: Int { lock.withLock { values.count } }
    var all: [String: String] { lock.withLock { values } }
}

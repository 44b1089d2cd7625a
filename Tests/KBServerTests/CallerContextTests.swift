import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import Testing
@testable import KBServer

/// Rights fail closed: a route reaches KBKit only with the caller the auth middleware found. A
/// route on the plain request context cannot pass a caller (its caller is optional, and KBKit
/// has no default), and a route in the caller's group that no middleware gave a caller is
/// refused, not run as admin.
@Suite struct CallerContextTests {
    @Test func aRouteInTheCallersGroupWithoutACallerIsRefusedNotRunAsAdmin() async throws {
        let fixture = try await Fixture()
        let ran = LockedValue(false)
        // A router as a careless change might make it: the route is in the caller's group, but
        // no auth middleware runs before it.
        let router = Router(context: KBRequestContext.self)
        router.add(middleware: ErrorMiddleware(routes: RouteTable()))
        router.group(context: CallerContext.self).get("bots") { _, context in
            ran.withLock { $0 = true }
            return try Answers.json(try await fixture.kb.bots(as: context.caller).map(\.name))
        }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/bots", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains("Bearer"))
            }
        }
        #expect(!ran.withLock { $0 })
    }

    @Test func theOpenRoutesActForNoOneAndEveryOtherRouteNeedsAToken() async throws {
        let fixture = try await Fixture()
        let service = fixture.service()
        let open = Set(["/healthz", "/", "/console", "/console/{file}", "/favicon.ico"])
        try await service.application().test(.router) { client in
            for route in service.routes where !open.contains(route.path) {
                let uri = route.path.replacingOccurrences(of: "{id}", with: "x").replacingOccurrences(of: "{name}", with: "x")
                // A JSON body, so the browser rules (which want one) pass and only the token is missing.
                try await client.execute(uri: uri, method: HTTPRequest.Method(route.method)!, headers: [.contentType: "application/json"],
                                         body: ByteBuffer(string: "{}")) { response in
                    #expect(response.status == .unauthorized, "\(route.method) \(route.path) answered \(response.status) without a token")
                }
            }
        }
    }

    /// The compile-time half, checked by compiling two routes against the built modules with the
    /// flags SwiftPM used for this test target: on `CallerContext` the route compiles; the same
    /// route on `KBRequestContext` (no caller decided) does not.
    @Test func aRouteThatForgetsTheCallerDoesNotCompile() throws {
        let body = """
            import Hummingbird
            import KBKit
            import KBServer

            func routes(_ kb: KnowledgeBase) -> RouteCollection<CONTEXT> {
                let routes = RouteCollection(context: CONTEXT.self)
                routes.get("bots") { _, context in try await kb.bots(as: context.caller).count.description }
                return routes
            }
            """
        let acting = try Self.typecheck(body.replacingOccurrences(of: "CONTEXT", with: "CallerContext"))
        #expect(acting.status == 0, "the route with a caller should compile: \(acting.output)")
        let forgetting = try Self.typecheck(body.replacingOccurrences(of: "CONTEXT", with: "KBRequestContext"))
        #expect(forgetting.status != 0, "a route without a caller compiled")
        #expect(forgetting.output.contains("Caller?"), "\(forgetting.output)")
    }

    /// Type-checks `source` as a file of a package that depends on KBServer, with the compiler and
    /// flags of this test target's own compilation (read from SwiftPM's build description).
    static func typecheck(_ source: String) throws -> (status: Int32, output: String) {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        #if DEBUG
        let configuration = "debug"
        #else
        let configuration = "release"   // scripts/test.sh builds the tests in release (lib.sh's kb_build)
        #endif
        let description = package.appendingPathComponent(".build/\(configuration).yaml")
        let text = try String(contentsOf: description, encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.contains("args: [") && $0.contains(#""-module-name","KBServerTests""#) }),
              let start = line.firstIndex(of: "[") else {
            throw KBError(.notFound, "\(description.path) has no compilation of KBServerTests; build the tests with swift build --build-tests.")
        }
        let arguments = try JSONDecoder().decode([String].self, from: Data(line[start...].utf8))
        // The search paths, module maps and language settings; not what makes outputs.
        var kept: [String] = []
        var index = arguments.firstIndex(of: "-I") ?? arguments.count
        let dropped: Set<String> = ["-incremental", "-enable-batch-mode", "-serialize-diagnostics", "-parseable-output", "-c", "-g",
                                    "-emit-dependencies", "-emit-module", "-enable-testing", "-parse-as-library"]
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "-Xcc", index + 1 < arguments.count {   // a flag for clang, kept whole
                kept += [argument, arguments[index + 1]]
                index += 2
                continue
            }
            if argument == "-index-store-path" || argument == "-output-file-map" || argument == "-emit-module-path" {
                index += 2
                continue
            }
            if !dropped.contains(argument), !argument.hasPrefix("-j"), !argument.hasPrefix("@"), !argument.hasSuffix(".swift") {
                kept.append(argument)
            }
            index += 1
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-typecheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("routes.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = ["-typecheck"] + kept + [file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: try DescriptorIO.readToEnd(pipe.fileHandleForReading.fileDescriptor), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}

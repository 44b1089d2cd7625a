import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KBCore
import KBKit
import KBRequests
import Testing
@testable import KBServer

/// The console's page and files: part of the binary (embedded at build time by the EmbedConsole
/// plugin) and the same as Sources/KBServer/Console/,
/// served without a token under a strict Content-Security-Policy; `GET /v1/me` tells the page who
/// the token is. (Tests/Browser/console.py drives the console in Chromium.)
@Suite struct ConsoleTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/KBServer/Console")

    @Test func theEmbeddedFilesAreTheConsolesFiles() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).sorted()
        #expect(names == ConsoleAssets.files.keys.sorted(), "the EmbedConsole plugin embeds every file of the folder")
        for name in names {
            let text = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
            #expect(ConsoleAssets.files[name]?.text == text.trimmingTrailingNewlines, "\(name): the embedded text is not the file's")
        }
    }

    @Test func thePageAndFilesNeedNoTokenAndLoadOnlyFromKB() async throws {
        let fixture = try await Fixture()
        try await fixture.service().application().test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .found)
                #expect(response.headers[.location] == "/console/")
            }
            for (path, type) in [("/console/", "text/html"), ("/console", "text/html"), ("/console/console.js", "text/javascript"), ("/console/console.css", "text/css")] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(path)")
                    let policy = response.headers[.contentSecurityPolicy] ?? ""
                    #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("connect-src 'self'")
                            && policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe"), "\(path): \(policy)")
                    #expect(response.headers[.init("X-Content-Type-Options")!] == "nosniff")
                }
            }
            try await client.execute(uri: "/console/../openapi.json", method: .get) { response in
                #expect(response.status != .ok || !String(buffer: response.body).contains("openapi"))
            }
            try await client.execute(uri: "/console/secrets.txt", method: .get) { #expect($0.status == .notFound) }
            // The data behind the page still needs the token.
            try await client.execute(uri: "/v1/me", method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    @Test func aRereadIsAcceptedForUploadsOnly() async throws {
        let fixture = try await Fixture()
        var tea = SourceRequest(text: "# Tea\n\nGreen tea at five.")
        tea.id = "tea"
        let added = try await fixture.kb.addSource(tea, waiting: true, as: .admin)
        #expect(added.job.state == .done)
        let file = try #require(try await fixture.kb.sources(SourceListRequest(), as: .admin).sources.first { $0.origin == .file })
        try await fixture.service().application().test(.router) { client in
            let (status, json) = try await client.call(.post, "/v1/sources/tea/reread", [:])
            #expect(status == 202)
            let job = try #require(((json as? [String: Any])?["job"] as? [String: Any])?["id"] as? String)
            #expect(try await client.call(.post, "/v1/sources/\(file.id)/reread", [:]).status == 409)
            #expect(try await client.call(.post, "/v1/sources/nothing-here/reread", [:]).status == 404)
            #expect(try await client.call(.post, "/v1/sources/tea/reread", ["again": true]).status == 400)
            var state = ""
            for _ in 0..<300 where state != "done" {
                try await Task.sleep(for: .milliseconds(50))
                state = (try await client.call(.get, "/v1/jobs/\(job)").json as? [String: Any])?["state"] as? String ?? ""
            }
            #expect(state == "done")
        }
    }

    @Test func meSaysWhoTheTokenIsAndWhatItMayDo() async throws {
        let fixture = try await Fixture()
        var request = TokenRequest(name: "ada-reader")
        request.scopes = ["user:ada"]
        request.bots = ["astro"]
        request.readOnly = true
        let scoped = try await fixture.kb.createToken(request, as: .admin)
        try await fixture.service().application().test(.router) { client in
            let admin = try await client.execute(uri: "/v1/me", method: .get, headers: [.authorization: "Bearer \(Fixture.token)"]) { String(buffer: $0.body) }
            let adminInfo = try JSONDecoder().decode(CallerInfo.self, from: Data(admin.utf8))
            #expect(adminInfo.admin && adminInfo.name == "admin" && adminInfo.allow.count == APIToken.Right.allCases.count)
            let text = try await client.execute(uri: "/v1/me", method: .get, headers: [.authorization: "Bearer \(scoped.token)"]) { String(buffer: $0.body) }
            let info = try JSONDecoder().decode(CallerInfo.self, from: Data(text.utf8))
            #expect(!info.admin && info.name == "ada-reader" && info.scopes == ["user:ada"] && info.bots == ["astro"] && info.readOnly && info.allow.isEmpty)
            #expect(!text.contains(scoped.token) && !text.contains("hash"))
        }
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = self
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}

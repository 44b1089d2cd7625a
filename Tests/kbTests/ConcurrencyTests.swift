import Foundation
import KBCore
import KBKit
import Testing

/// Searches run while another process ingests into the same file, and never see a half-written source.
@Suite struct ConcurrencyTests {
    @Test func readersNeverSeeAHalfIngestedSourceWhileAnotherProcessWrites() async throws {
        let cli = try CLI()
        let sections = 5
        for i in 0..<200 {
            let body = (0..<sections).map { "## Part \($0)\n\nNote \(i) part \($0) about the transit of Venus." }.joined(separator: "\n\n")
            try cli.write("notes/n\(i).md", "# Note \(i)\n\n" + body)
        }
        try cli.write("seed/seed.md", "# Seed\n\n## A\n\nVenus seed text.\n")
        let db = cli.workdir.appendingPathComponent("kb.sqlite").path
        #expect(try cli.run("ingest", "--db", db, "--embedder", "hashing", "seed").status == 0)

        let writer = Process()
        writer.executableURL = CLI.binary
        writer.arguments = ["ingest", "--db", db, "notes"]
        writer.currentDirectoryURL = cli.workdir
        writer.standardOutput = FileHandle.nullDevice
        writer.standardError = FileHandle.nullDevice
        try writer.run()

        let kb = try KnowledgeBase.open(at: db, create: false)
        var observations = 0
        var partial: [String] = []
        repeat {
            for source in try kb.sources() where source.path.contains("/notes/") && source.snippetCount != sections {
                partial.append("\(source.path): \(source.snippetCount)")
            }
            var query = SearchQuery("transit of Venus")
            query.limit = 20
            let hits = try await kb.search(query).hits
            #expect(!hits.isEmpty)
            observations += 1
        } while writer.isRunning
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        #expect(partial.isEmpty, "partially visible sources: \(partial.prefix(5))")
        #expect(try kb.sources().count == 201)
        #expect(observations > 1, "the reader should have overlapped the writer")
    }
}

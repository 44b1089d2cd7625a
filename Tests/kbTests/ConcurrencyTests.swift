import Foundation
import KBCore
import KBKit
import Testing

/// Searches run while another process ingests into the same file, and never see a half-written source.
@Suite struct ConcurrencyTests {
    @Test func readersNeverSeeAHalfIngestedSourceWhileAnotherProcessWrites() async throws {
        let cli = try CLI()
        let sections = 5
        try cli.write("seed/seed.md", "# Seed\n\n## A\n\nVenus seed text.\n")
        let db = cli.index
        #expect(try await cli.run("ingest", "--db", db, "--embedder", "hashing", "seed").status == 0)
        let kb = try KnowledgeBase.open(at: db, create: false)

        // Batches of notes, each ingested by a new writer process, until the reader has looked at
        // the index several times while a writer was in the middle of its work (a busy machine may
        // not schedule the reader during one short ingest).
        var overlapped = 0, batches = 0
        var partial: [String] = []
        while overlapped < 3 && batches < 10 {
            for i in 0..<200 {
                let body = (0..<sections).map { "## Part \($0)\n\nNote \(i) part \($0) about the transit of Venus." }.joined(separator: "\n\n")
                try cli.write("notes/b\(batches)/n\(i).md", "# Note \(i)\n\n" + body)
            }
            let writer = Process()
            writer.executableURL = CLI.binary
            writer.arguments = ["ingest", "--db", db, "notes/b\(batches)"]
            writer.currentDirectoryURL = cli.workdir
            writer.standardOutput = FileHandle.nullDevice
            writer.standardError = FileHandle.nullDevice
            try writer.run()
            repeat {
                for source in try await kb.sources(as: .admin) where source.path.contains("/notes/") && source.snippetCount != sections {
                    partial.append("\(source.path): \(source.snippetCount)")
                }
                var query = SearchQuery("transit of Venus")
                query.limit = 20
                #expect(try await !kb.search(query, as: .admin).hits.isEmpty)
                if writer.isRunning { overlapped += 1 }
            } while writer.isRunning
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
            batches += 1
        }
        #expect(partial.isEmpty, "partially visible sources: \(partial.prefix(5))")
        #expect(try await kb.sources(as: .admin).count == 1 + 200 * batches)
        #expect(overlapped >= 3, "the reader should have overlapped the writers")
    }
}

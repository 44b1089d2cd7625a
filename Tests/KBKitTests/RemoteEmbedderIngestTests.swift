import Foundation
import KBCore
import KBEmbed
import KBIngest
@testable import KBKit
import KBRequests
import KBStubServers
import KBTestSupport
import Testing

/// An index embedded through an OpenAI-compatible endpoint (a stub that fails as each test
/// scripts it): a failed ingest leaves what it had not finished as it was, a re-index resumes and
/// switches at once, and the index remembers the endpoint's prefixes.
@Suite(.serialized) struct RemoteEmbedderIngestTests {
    @Test func aFailedIngestLeavesUnfinishedSourcesAsTheyWereAndTheRerunDoesNotPayTwice() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-remote-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        for i in 0..<80 { try "# Note \(i)\n\nText of note number \(i).".write(to: notes.appendingPathComponent(String(format: "n%02d.md", i)), atomically: true, encoding: .utf8) }
        let script = FaultScript()
        let server = try await faultServer(script)
        defer { server.stop() }
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root))
        var configuration = quickConfiguration(server.url, attempts: 2)
        configuration.maxInputsPerRequest = 16
        configuration.maxConcurrentRequests = 1
        let embedder = try await HTTPEmbedder.connect(configuration, dimension: 384)
        let record = EmbedderChoice.record(for: embedder, choice: .openAI(model: "test-model", url: server.url.absoluteString))

        // Everything in once; then one note changes and the service fails on it.
        let first = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(first.added == 80 && first.failed.isEmpty)
        let before = try await kb.sources(as: .admin).map { "\($0.path) \($0.contentHash)" }
        let vectorsBefore = try await kb.status(as: .admin).vectors
        try "# Note 79\n\nChanged text, poison.".write(to: notes.appendingPathComponent("n79.md"), atomically: true, encoding: .utf8)
        for i in 100..<200 { try "# Note \(i)\n\nText of note number \(i).".write(to: notes.appendingPathComponent(String(format: "n%03d.md", i)), atomically: true, encoding: .utf8) }
        await script.setPoisonForTesting("poison")
        let failed = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(!failed.failed.isEmpty)
        // n79.md is as it was (old hash); nothing was half-written; the new notes are not in.
        let known = Set(before.map { $0.split(separator: " ")[0] })
        let after = try await kb.sources(as: .admin).filter { known.contains(Substring($0.path)) }.map { "\($0.path) \($0.contentHash)" }
        #expect(after == before)
        #expect(try await kb.status(as: .admin).vectors == vectorsBefore)
        #expect(try await kb.sources(as: .admin).count == 80)
        // The first 64 new texts were answered before the failure, and are kept.
        let cachedAfterFailure = try await kb.status(as: .admin).cachedVectors["openai:test-model"] ?? 0
        #expect(cachedAfterFailure == 80 + 64)

        // The service recovers: the re-run sends only texts it never answered.
        await script.clearPoison()
        let sentBefore = await script.inputs.count
        let rerun = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(rerun.failed.isEmpty)
        let sentOnRerun = await script.inputs.count - sentBefore
        #expect(sentOnRerun == 101 - 64)
        #expect(try await kb.status(as: .admin).vectors["openai:test-model"] == 180)
        #expect(try await kb.status(as: .admin).tokensUsed["openai:test-model"] ?? 0 > 0)
        // Re-ingesting the same texts into a fresh index through the same cache would cost nothing:
        let sentNow = await script.inputs.count
        try await kb.remove([notes.appendingPathComponent("n10.md").path], as: .admin)
        _ = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(await script.inputs.count == sentNow)
    }

    @Test func reindexFillsANewVectorSetResumesAfterAFailureAndSwitchesAtomically() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-reindex-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        for i in 0..<300 { try "# Note \(i)\n\nPlanet note number \(i) about Venus and time.".write(to: notes.appendingPathComponent(String(format: "n%03d.md", i)), atomically: true, encoding: .utf8) }
        try "# Last\n\nThe poison paragraph.".write(to: notes.appendingPathComponent("z.md"), atomically: true, encoding: .utf8)
        // The endpoint's settings reach kb through the knowledge base's environment: setenv here
        // would race every test that starts a process meanwhile (Foundation's Process.run reads
        // the environment as it is changed, and crashed the suite).
        let environment = ProcessInfo.processInfo.environment.merging(["KB_EMBEDDINGS_MAX_ATTEMPTS": "2", "KB_EMBEDDINGS_TIMEOUT": "30"]) { _, set in set }
        let kb = try KnowledgeBase.open(at: TestBackend.freshIndex(in: root), environment: environment)
        let (local, localRecord) = try await kb.embedder(.hashing)
        _ = try await kb.ingest([notes.path], options: IngestOptions(), embedder: local, record: localRecord, as: .admin)
        _ = try await kb.remember(MemoryDraft("Remember the poison-free fact."), as: .admin)

        let script = FaultScript(poison: "poison paragraph")
        let server = try await faultServer(script)
        defer { server.stop() }
        let choice = EmbedderChoice.openAI(model: "remote", url: server.url.absoluteString)

        // The remote service fails on one snippet: the index still searches with the old vectors.
        await #expect(throws: KBError.self) { try await kb.reindex(to: choice, as: .admin) }
        var status = try await kb.status(as: .admin)
        #expect(status.embedder?.name == "hashing-384")
        let partial = status.vectors["openai:remote"] ?? 0
        #expect(partial >= 256 && partial < 302)
        var query = SearchQuery("Venus time")
        query.mode = .vector
        #expect(try await kb.search(query, as: .admin).embedder == "hashing-384")

        // It recovers: the rerun embeds only what is missing, then switches.
        await script.clearPoison()
        let sentBefore = await script.inputs.count
        let report = try await kb.reindex(to: choice, as: .admin)
        #expect(report.switched)
        #expect(report.embedded == 302 - partial)
        #expect(await script.inputs.count - sentBefore == 1 + (302 - partial))   // 1: the dimension probe
        status = try await kb.status(as: .admin)
        #expect(status.embedder?.name == "openai:remote")
        #expect(status.embedder?.spec == "openai:remote@\(server.url.absoluteString)")
        #expect(status.vectors == ["hashing-384": 302, "openai:remote": 302])
        let after = try await kb.search(query, as: .admin)
        #expect(after.embedder == "openai:remote")
        #expect(!after.hits.isEmpty)

        // Back to the old embedder: its vectors are still there, nothing is embedded again.
        let back = try await kb.reindex(to: .hashing, dropOld: true, as: .admin)
        #expect(back.embedded == 0 && back.switched)
        #expect(try await kb.status(as: .admin).vectors == ["hashing-384": 302])
    }

    @Test func aRemoteEmbedderGetsItsPrefixesAndTheIndexRemembersThem() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kb-prefix-\(UUID().uuidString)")
        let notes = root.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
        try "# Saturn\n\nSaturn returns after twenty-nine years.".write(to: notes.appendingPathComponent("saturn.md"), atomically: true, encoding: .utf8)
        let script = FaultScript()
        let server = try await faultServer(script)
        defer { server.stop() }
        let choice = try EmbedderChoice.with(.openAI(model: "test-model", url: server.url.absoluteString),
                                             queryPrefix: "search_query: ", passagePrefix: "search_document: ")
        #expect(try EmbedderChoice(choice.spec) == choice)
        let path = TestBackend.freshIndex(in: root)
        let kb = try KnowledgeBase.open(at: path)
        let (embedder, record) = try await kb.embedder(choice)
        #expect(record.name == #"openai:test-model [query: "search_query: ", passage: "search_document: "]"#)
        let report = try await kb.ingest([notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty)
        #expect(await script.inputs.contains("search_document: Saturn returns after twenty-nine years."))

        // A new process finds the prefixes in the index: queries get theirs.
        let reopened = try KnowledgeBase.open(at: path)
        #expect(try await reopened.status(as: .admin).embedder?.spec == choice.spec)
        var query = SearchQuery("when does Saturn return")
        query.mode = .vector
        let results = try await reopened.search(query, as: .admin)
        #expect(results.hits.first?.sourceTitle == "Saturn")
        #expect(await script.inputs.contains("search_query: when does Saturn return"))
        // Other prefixes are another embedder: the index refuses to mix them.
        let other = try EmbedderChoice.with(.openAI(model: "test-model", url: server.url.absoluteString), queryPrefix: "query: ", passagePrefix: nil)
        await #expect(throws: KBError.self) { _ = try await reopened.embedder(other) }
    }
}

import Foundation
import KBCore
import KBEmbed
import KBStore
import KBIngest
import Testing
@testable import KBKit

/// Wraps an embedder, counting the texts it is asked for and failing on demand.
final class CountingEmbedder: Embedder, @unchecked Sendable {
    // @unchecked: `lock` guards the counters.
    let inner = HashingEmbedder()
    let lock = NSLock()
    var texts: [String] = []
    var failWhen: (@Sendable (String) -> Bool)?
    var id: String { inner.id }
    var dimension: Int { inner.dimension }

    func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]] {
        let fail = lock.withLock {
            self.texts += texts
            return failWhen
        }
        if let fail, texts.contains(where: fail) { throw KBError(.embedding, "the embedding service is down") }
        return try await inner.embed(texts, role: role)
    }
}

@Suite struct EmbeddingIngestTests {
    func vectorCount(_ kb: KnowledgeBase) async throws -> Int { try await kb.status().vectors.values.reduce(0, +) }

    @Test func ingestStoresOneVectorPerSnippetAndRecordsTheEmbedder() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\none.\n\n## B\n\ntwo.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record)
        #expect(report.failed.isEmpty)
        let status = try await kb.status()
        #expect(status.embedder == EmbedderRecord(name: "hashing-384", dimension: 384, spec: "hashing"))
        #expect(status.vectors == ["hashing-384": 2])
        let path = ws.path("a.md")
        let stored = try await kb.store.snapshot { try $0.vectorsByText(path: path, embedder: "hashing-384") }
        #expect(stored["two."] == HashingEmbedder().vector("two."))
    }

    @Test func aChangedFileReEmbedsOnlyTheParagraphsThatChanged() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\nfirst paragraph.\n\n# B\n\nsecond paragraph.\n\n# C\n\nthird paragraph.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        _ = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record)
        #expect(counting.texts.count == 3)
        try ws.write("a.md", "# A\n\nfirst paragraph.\n\n# B\n\nsecond paragraph, edited.\n\n# C\n\nthird paragraph.")
        let report = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record)
        #expect(report.updated == 1)
        #expect(counting.texts == ["first paragraph.", "second paragraph.", "third paragraph.", "second paragraph, edited."])
        #expect(try await vectorCount(kb) == 3)
    }

    @Test func aFailingEmbedderLeavesTheSourcesItDidNotFinishAsTheyWere() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha original")
        try ws.write("b.md", "beta original")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        _ = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record)
        let before = try await kb.sources()

        try ws.write("a.md", "alpha changed")
        try ws.write("b.md", "beta changed")
        counting.failWhen = { _ in true }
        let report = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record)
        #expect(report.failed.count == 2)
        #expect(report.failed.allSatisfy { $0.message.contains("the embedding service is down") })
        #expect(try await kb.sources() == before)
        #expect(try await kb.search(.keyword("original")).hits.count == 2)
        #expect(try await vectorCount(kb) == 2)

        counting.failWhen = nil
        let retry = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record)
        #expect(retry.updated == 2 && retry.failed.isEmpty)
        #expect(try await kb.search(.keyword("changed")).hits.count == 2)
    }

    @Test func anIndexRefusesVectorsFromAnotherEmbedder() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        _ = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record)
        let error = try await #require(throws: KBError.self) { try await kb.embedder(.keywordOnly) }
        #expect(error.code == .embedderMismatch)
        #expect(error.message.contains("'hashing-384'"))
        // With no choice, the index's own embedder is used.
        #expect(try await kb.embedder(nil).record.name == "hashing-384")
    }

    @Test func aKeywordOnlyIndexStoresNoVectors() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.keywordOnly)
        _ = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record)
        #expect(try await kb.status().embedder == EmbedderRecord.none)
        #expect(try await vectorCount(kb) == 0)
        await #expect(throws: KBError.self) { try await kb.embedder(.hashing) }
    }

    @Test func filesAreReadABatchAheadOfTheEmbeddingAndEveryFileIsWritten() async throws {
        let ws = try Workspace()
        let files = Ingestor.readBatchSize * 2 + 5
        for i in 0..<files {
            // Long enough that each batch makes several groups of snippets.
            try ws.write(String(format: "n%03d.md", i), (0..<8).map { "# Part \($0)\n\nnote \(i) paragraph \($0) about saturn." }.joined(separator: "\n\n"))
        }
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        let events = LockedValue<[IngestProgress]>([])
        let report = await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record) { progress in
            events.withLock { $0.append(progress) }
        }
        #expect(report.failed.isEmpty)
        #expect(report.added == files)
        #expect(report.snippets == files * 8)
        #expect(try await vectorCount(kb) == files * 8)
        #expect(Set(counting.texts).count == files * 8)

        let log = events.withLock { $0 }
        func position(_ phase: IngestProgress.Phase, _ where: (IngestProgress) -> Bool) -> Int? {
            log.firstIndex { $0.phase == phase && `where`($0) }
        }
        let secondRead = try #require(position(.reading) { $0.done == Ingestor.readBatchSize })
        let thirdRead = try #require(position(.reading) { $0.done == 2 * Ingestor.readBatchSize })
        let firstEmbedding = try #require(position(.embedding) { $0.done > 0 })
        // The second batch is being read before the first is embedded, and the third not before
        // some of the first is written: reading runs one batch ahead, not all of it first.
        #expect(secondRead < firstEmbedding)
        #expect(firstEmbedding < thirdRead)
        // Embedding progress only grows, and ends at every snippet.
        let done = log.filter { $0.phase == .embedding }.map(\.done)
        #expect(done == done.sorted())
        #expect(done.last == files * 8)
    }
}

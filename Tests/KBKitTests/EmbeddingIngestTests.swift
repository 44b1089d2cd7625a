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
    func vectorCount(_ kb: KnowledgeBase) async throws -> Int { try await kb.status(as: .admin).vectors.values.reduce(0, +) }

    @Test func ingestStoresOneVectorPerSnippetAndRecordsTheEmbedder() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\none.\n\n## B\n\ntwo.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(report.failed.isEmpty)
        let status = try await kb.status(as: .admin)
        #expect(status.embedder == EmbedderRecord(name: "hashing-384", dimension: 384, spec: "hashing", context: "title"))
        #expect(status.vectors == ["hashing-384": 2])
        let path = ws.path("a.md")
        // Each snippet's vector reads its source's title first; its text stays itself.
        let stored = try await kb.store.snapshot { try $0.vectorsByText(path: path, embedder: "hashing-384", context: .title) }
        #expect(Set(stored.keys) == ["A\none.", "A\ntwo."])
        #expect(stored["A\ntwo."] == HashingEmbedder().vector("A\ntwo."))
        let texts = try await kb.store.snapshot { try $0.snippetSummaries(try $0.snippetIDs(ofSource: path), texts: true) }
        #expect(Set(texts.values.map(\.text)) == ["one.", "two."])
    }

    /// An index made before kb embedded titles keeps embedding bare text, so that a changed
    /// file reuses its unchanged paragraphs' vectors; `kb reindex` moves it to titles.
    @Test func anIndexThatEmbeddedBareTextKeepsDoingSoUntilReindexed() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\none.\n\n## B\n\ntwo.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        // As an index of an older kb: the vectors of bare text, no context recorded.
        try await kb.store.setMeta(EmbedderRecord.MetaKey.context, "")
        let bare = try KnowledgeBase.open(at: ws.dbPath, create: false)
        let stored = try await bare.store.snapshot { try $0.vectorsByText(path: ws.path("a.md"), embedder: "hashing-384", context: .bare) }
        #expect(Set(stored.keys) == ["one.", "two."])

        let counting = CountingEmbedder()
        let (_, kept) = try await bare.embedder(.hashing)
        #expect(kept.context == nil && kept.inputContext == .bare)
        try ws.write("a.md", "# A\n\none.\n\n## B\n\ntwo.\n\n## C\n\nthree.")
        #expect(try await bare.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: kept, as: .admin).failed.isEmpty)
        #expect(counting.texts == ["three."])
        #expect(try await bare.status(as: .admin).embedder?.context == nil)

        // `kb reindex` with no embedder named embeds the index's own again, with titles, in place:
        // the new vectors replace the old under the same name, and searches find them.
        let report = try await bare.reindex(to: nil, as: .admin)
        #expect(report.embedded == 3 && report.switched)
        #expect(report.from == "hashing-384" && report.to == "hashing-384 (with titles)")
        let status = try await bare.status(as: .admin)
        #expect(status.embedder?.inputContext == .title && status.vectors == ["hashing-384": 3])
        let titled = try await bare.store.snapshot { try $0.vectorsByText(path: ws.path("a.md"), embedder: "hashing-384", context: .title) }
        #expect(Set(titled.keys) == ["A\none.", "A\ntwo.", "A\nthree."])
        #expect(titled["A\nthree."] == HashingEmbedder().vector("A\nthree."))
        var query = SearchQuery("three")
        query.mode = .vector
        #expect(try await bare.search(query, as: .admin).hits.first?.snippet.text == "three.")
        // Done: naming it again is refused, with what it already is.
        await #expect(throws: KBError.self) { try await bare.reindex(to: .hashing, as: .admin) }
        await #expect(throws: KBError.self) { try await bare.reindex(to: nil, as: .admin) }
    }

    /// A new index of the local model records the precision `auto` chose for it (int8 where the
    /// CPU has AVX-512 VNNI); later sessions embed passages and queries in it; an index that
    /// recorded none (made before kb recorded it) keeps bf16.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["KB_PRECISION"] == nil, "KB_PRECISION chooses the precision"))
    func aLocalIndexRecordsItsPassagesPrecisionAndLaterSessionsEmbedInIt() async throws {
        let ws = try Workspace()
        try ws.write("venus.md", "# Venus\n\nVenus rules love, beauty and money.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.local)
        let chosen = EncoderPrecision.newIndexDefault
        #expect(chosen != .auto && record.precision == chosen.rawValue && record.passagePrecision == chosen)
        #expect((embedder as? BERTEmbedder)?.precision == chosen)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin).failed.isEmpty)
        #expect(try await kb.status(as: .admin).embedder?.precision == chosen.rawValue)

        let later = try KnowledgeBase.open(at: ws.dbPath, create: false)
        #expect((try await later.embedder(nil).embedder as? BERTEmbedder)?.precision == chosen)
        let stored = try #require(try await later.status(as: .admin).embedder)
        #expect((try await later.embedders.recorded(stored) as? BERTEmbedder)?.precision == chosen)

        try await later.store.setMeta(EmbedderRecord.MetaKey.precision, "")
        let older = try KnowledgeBase.open(at: ws.dbPath, create: false)
        let legacy = try #require(try await older.status(as: .admin).embedder)
        #expect(legacy.precision == nil)
        #expect((try await older.embedder(nil).embedder as? BERTEmbedder)?.precision == EncoderPrecision.bf16.runnable)
        #expect((try await older.embedders.recorded(legacy) as? BERTEmbedder)?.precision == EncoderPrecision.bf16.runnable)
        let hits = try await older.search(SearchQuery("beauty and money"), as: .admin).hits
        #expect(hits.first?.sourcePath.hasSuffix("venus.md") == true)
    }

    @Test func aChangedFileReEmbedsOnlyTheParagraphsThatChanged() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\nfirst paragraph.\n\n# B\n\nsecond paragraph.\n\n# C\n\nthird paragraph.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin)
        #expect(counting.texts.count == 3)
        try ws.write("a.md", "# A\n\nfirst paragraph.\n\n# B\n\nsecond paragraph, edited.\n\n# C\n\nthird paragraph.")
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin)
        #expect(report.updated == 1)
        #expect(counting.texts == ["A\nfirst paragraph.", "A\nsecond paragraph.", "A\nthird paragraph.", "A\nsecond paragraph, edited."])
        #expect(try await vectorCount(kb) == 3)
    }

    /// A conversation's turn is embedded after the turn before it (`EmbeddingInput`); its text,
    /// keywords and citations stay the turn alone.
    @Test func aConversationsTurnIsEmbeddedAfterTheTurnBeforeIt() async throws {
        let ws = try Workspace()
        let lines = [#"{"speaker": "Ada", "text": "What did you paint?"}"#, #"{"speaker": "Bo", "text": "A sunset over the lake."}"#,
                     #"{"speaker": "Ada", "text": "Lovely."}"#]
        try ws.write("chats/monday.jsonl", lines.joined(separator: "\n"))
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        #expect(try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin).failed.isEmpty)
        let (paint, sunset, lovely) = ("Ada: What did you paint?", "Bo: A sunset over the lake.", "Ada: Lovely.")
        #expect(counting.texts == [paint, paint + "\n" + sunset, sunset + "\n" + lovely])
        let path = ws.path("chats/monday.jsonl")
        let stored = try await kb.store.snapshot { try $0.vectorsByText(path: path, embedder: record.name, context: record.inputContext) }
        #expect(stored[paint + "\n" + sunset] == HashingEmbedder().vector(paint + "\n" + sunset))
        var query = SearchQuery("sunset lake")
        query.mode = .keyword
        #expect(try await kb.search(query, as: .admin).hits.first?.snippet.text == sunset)

        // A turn added: only it is embedded; a turn edited: it and the turn after it.
        try ws.write("chats/monday.jsonl", (lines + [#"{"speaker": "Bo", "text": "Thanks!"}"#]).joined(separator: "\n"))
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin)
        #expect(counting.texts.dropFirst(3) == [lovely + "\nBo: Thanks!"])
        try ws.write("chats/monday.jsonl", [lines[0], #"{"speaker": "Bo", "text": "A storm."}"#, lines[2]].joined(separator: "\n"))
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin)
        #expect(counting.texts.dropFirst(4) == [paint + "\nBo: A storm.", "Bo: A storm.\n" + lovely])

        // `kb reindex` embeds the same pairs as ingest does.
        let other = try Workspace()
        try other.write("chats/monday.jsonl", lines.joined(separator: "\n"))
        let plain = try KnowledgeBase.open(at: other.dbPath)
        _ = try await plain.ingest([other.notes.path], options: IngestOptions(), embedder: nil, record: .none, as: .admin)
        #expect(try await plain.reindex(to: .hashing, as: .admin).embedded == 3)
        let reindexed: [String: [Float]] = try await plain.store.snapshot {
            try $0.vectorsByText(path: other.path("chats/monday.jsonl"), embedder: "hashing-384", context: .title)
        }
        #expect(Set(reindexed.keys) == [paint, paint + "\n" + sunset, sunset + "\n" + lovely])
        #expect(reindexed[sunset + "\n" + lovely] == HashingEmbedder().vector(sunset + "\n" + lovely))
    }

    @Test func aFailingEmbedderLeavesTheSourcesItDidNotFinishAsTheyWere() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha original")
        try ws.write("b.md", "beta original")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin)
        let before = try await kb.sources(as: .admin)

        try ws.write("a.md", "alpha changed")
        try ws.write("b.md", "beta changed")
        counting.failWhen = { _ in true }
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin)
        #expect(report.failed.count == 2)
        #expect(report.failed.allSatisfy { $0.message.contains("the embedding service is down") })
        #expect(try await kb.sources(as: .admin) == before)
        #expect(try await kb.search(.keyword("original"), as: .admin).hits.count == 2)
        #expect(try await vectorCount(kb) == 2)

        counting.failWhen = nil
        let retry = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin)
        #expect(retry.updated == 2 && retry.failed.isEmpty)
        #expect(try await kb.search(.keyword("changed"), as: .admin).hits.count == 2)
    }

    @Test func anIndexRefusesVectorsFromAnotherEmbedder() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "alpha")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let (embedder, record) = try await kb.embedder(.hashing)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
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
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        #expect(try await kb.status(as: .admin).embedder == EmbedderRecord.none)
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
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: counting, record: record, as: .admin) { progress in
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

import Foundation
import GRDB
import KBCore
@testable import KBSQLite
import KBStore
import Testing

/// The copies searches derive from the index (vectors with their int8 and sign copies, keyword
/// postings) are saved beside it and read back by the next store that opens it — only when they
/// were made from exactly the index's present state.
struct SavedSearchTests {
    static let record = EmbedderRecord(name: "test-8", dimension: 8, spec: "none")

    /// A vector per snippet, drawn from a seeded generator.
    static func vectors(_ count: Int, seed: UInt64) -> [[Float]] {
        var generator = KeywordIndexTests.Generator(state: seed)
        return (0..<count).map { _ in VectorPartitionTests.unit((0..<8).map { _ in Float(generator.next(2001)) / 1000 - 1 }) }
    }

    /// An index of 12 notes of 40 snippets and 20 memories, all with vectors, every copy saved.
    static func filledStore(at path: String? = nil) async throws -> SQLiteStore {
        let store = try path.map { try SQLiteStore.open(at: $0, create: true) } ?? temporaryStore()
        store.savedSearchMinimumRows = 0
        var generator = KeywordIndexTests.Generator(state: 3)
        for s in 0..<12 {
            let texts = (0..<40).map { _ in generator.text(3 + generator.next(30)) }
            try await store.replace(document("/shelf/book\(s).md", title: generator.text(2), snippets: texts, hash: "h\(s)"),
                                    vectors: vectors(texts.count, seed: UInt64(s + 10)), embedder: record)
        }
        for m in 0..<20 {
            try await store.replace(document("memory:user:u\(m % 3)/m\(m)", kind: .memory, snippets: [generator.text(8)], hash: "m\(m)"),
                                    vectors: vectors(1, seed: UInt64(100 + m)), embedder: record)
        }
        return store
    }

    /// Loads every copy (the knowledge's quantized) and saves them; returns what was written.
    @discardableResult
    static func prepareAndSave(_ store: SQLiteStore) async throws -> [String] {
        try await store.snapshot { snapshot in
            try snapshot.prepareSearches(embedder: record, quantizingFrom: 0)
            return try snapshot.saveSearches()
        }
    }

    /// What searches answer: vector rankings of every kind of rows (exact and quantized) and
    /// keyword rankings from the postings in memory, for a few queries.
    static func answers(_ store: SQLiteStore) async throws -> [String] {
        try await store.snapshot { snapshot in
            let snapshot = snapshot as! SQLiteStore.Snapshot
            var lines: [String] = []
            for (number, query) in vectors(4, seed: 77).enumerated() {
                for rows in [VectorRows.knowledge, .memories, .all] {
                    for quantized in [false, true] {
                        let ranking = try snapshot.vectorRanking(query, embedder: record, k: 10, allowed: nil, excluded: [], quantized: quantized, rows: rows)
                        lines.append("\(number) \(rows) \(quantized): " + ranking.map { "\($0.id) \($0.score)" }.joined(separator: ", "))
                    }
                }
            }
            for query in KeywordIndexTests.queries {
                let ranking = try #require(try snapshot.keywordRankingInMemory(query, language: .english, limit: 20, allowed: nil))
                lines.append("\(query): " + ranking.map { "\($0.id) \($0.score)" }.joined(separator: ", "))
            }
            return lines
        }
    }

    /// `answers` from copies derived from the index at `path` (its saved files moved aside meanwhile).
    static func derivedAnswers(_ path: String) async throws -> [String] {
        let folder = path + "-search", aside = path + "-search-aside"
        try FileManager.default.moveItem(atPath: folder, toPath: aside)
        defer { try? FileManager.default.moveItem(atPath: aside, toPath: folder) }
        let derived = try SQLiteStore.open(at: path, create: false)
        let answers = try await Self.answers(derived)
        #expect(derived.savedSearchReads == 0)
        return answers
    }

    static func files(_ store: SQLiteStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.savedSearchFolder)) ?? []).sorted()
    }

    @Test func savedCopiesAreReadBackAndSearchAsTheDerivedOnes() async throws {
        let store = try await Self.filledStore()
        let written = try await Self.prepareAndSave(store)
        #expect(written.count == 3)
        #expect(Self.files(store) == ["keywords", "knowledge-vectors", "memory-vectors"])
        #expect(try await Self.prepareAndSave(store).isEmpty)   // current files are not written again
        let expected = try await Self.answers(store)

        // With the default, the knowledge's few float rows are read into memory; memories' stay
        // in the file.
        let held = try SQLiteStore.open(at: store.path, create: false)
        _ = try await held.snapshot { try $0.prepareSearches(embedder: Self.record, quantizingFrom: 0) }
        #expect(held.savedSearchReads == 3)
        #expect(held.vectors.loadedIndex?.floatFile == nil && held.vectors.loadedIndex?.matrix.isEmpty == false)
        #expect(held.memoryVectors.loadedIndex?.floatFile != nil)
        #expect(try await Self.answers(held) == expected)

        let reopened = try SQLiteStore.open(at: store.path, create: false)
        reopened.savedSearchFloatsHeldUpTo = 0
        _ = try await reopened.snapshot { try $0.prepareSearches(embedder: Self.record, quantizingFrom: 0) }
        #expect(reopened.savedSearchReads == 3)
        // The float rows are left in the file (until the exact searches below load them).
        #expect(reopened.vectors.loadedIndex?.floatFile != nil && reopened.memoryVectors.loadedIndex?.floatFile != nil)
        #expect(try await Self.answers(reopened) == expected)
        // The int8 copy came with the vectors, and follows writes as a derived one does.
        #expect(reopened.vectors.loadedIndex?.quantizedEnabled == true)
        try await reopened.replace(document("/shelf/new.md", snippets: ["saturn return venus"], hash: "n"),
                                   vectors: Self.vectors(1, seed: 5), embedder: Self.record)
        #expect(try await Self.answers(reopened) == (try await Self.answers(store)))
    }

    /// `count` rows of 64 values around 40 centres (as embeddings crowd around topics), normalised.
    static func clustered(_ count: Int, seed: UInt64, spread: Float = 0.4) -> [[Float]] {
        var generator = KeywordIndexTests.Generator(state: 21)
        func value() -> Float { Float(generator.next(2001)) / 1000 - 1 }
        let centres: [[Float]] = (0..<40).map { _ in (0..<64).map { _ in value() } }
        generator = KeywordIndexTests.Generator(state: seed)
        return (0..<count).map { row -> [Float] in
            let centre = centres[row % 40]
            var values: [Float] = []
            for x in centre { values.append(x + spread * value()) }
            return VectorPartitionTests.unit(values)
        }
    }

    /// 4,000 clustered rows, quantized and calibrated, saved to a file and read back from it.
    static func calibratedAndRestored(floatsOnDisk: Bool) throws -> (index: VectorMatrix, restored: VectorMatrix, path: String) {
        let index = VectorMatrix(dimension: 64, signStageFrom: 256)
        try index.upsert(Self.clustered(4000, seed: 9).enumerated().map { (Int64($0.offset + 1), $0.element) })
        index.enableQuantization()
        _ = index.signStageDepths
        let path = temporaryPath("matrix")
        let form = index.savedForm()
        try SavedFile.write(to: path, stamp: .init(created: "c", generation: 1, kind: "k", detail: "d"), numbers: form.numbers, sections: form.sections)
        let restored = try VectorMatrix.restored(from: SavedFile(path: path), dimension: 64, signStageFrom: 256, floatsOnDisk: floatsOnDisk)
        return (index, restored, path)
    }

    @Test func theSignStageCalibrationIsSavedWithTheMatrix() throws {
        let (index, restored, _) = try Self.calibratedAndRestored(floatsOnDisk: false)
        #expect(!index.signStageDepths.isEmpty)
        #expect(restored.signStageDepths == index.signStageDepths)
        for query in Self.clustered(20, seed: 11) {
            let a = try index.search(query, k: 10, quantized: true), b = try restored.search(query, k: 10, quantized: true)
            #expect(a.map(\.id) == b.map(\.id) && a.map(\.score) == b.map(\.score))
        }
        // The restored matrix searched through the saved calibration (not one of its own).
        let counts = restored.signStageCounts
        #expect(counts.searches > 0 && counts.searches + counts.scanned == 20)
    }

    /// A float row that cannot be read back for rescoring (here: the file cut short under the
    /// open copy) leaves its candidate scored from the int8 copy, not lost.
    @Test func aRescoringReadThatFailsKeepsItsCandidate() throws {
        let (index, restored, path) = try Self.calibratedAndRestored(floatsOnDisk: true)
        #expect(truncate(path, 4096) == 0)
        for query in Self.clustered(10, seed: 23) {
            let exact = try index.search(query, k: 10, quantized: true), approximate = try restored.search(query, k: 10, quantized: true)
            #expect(approximate.count == 10)
            #expect(Set(approximate.map(\.id)).intersection(exact.map(\.id)).count >= 9)
            for (a, b) in zip(approximate, exact) { #expect(abs(a.score - b.score) < 0.02) }
        }
    }

    @Test func floatRowsLeftInTheFileSearchAsHeldOnesThroughWrites() throws {
        let (index, restored, path) = try Self.calibratedAndRestored(floatsOnDisk: true)
        #expect(restored.floatFile != nil && restored.matrix.isEmpty)
        let queries = Self.clustered(12, seed: 13)
        func same(_ comment: String, allowed: Set<Int64>? = nil) throws {
            for query in queries {
                let a = try index.search(query, k: 10, allowed: allowed, quantized: true)
                let b = try restored.search(query, k: 10, allowed: allowed, quantized: true)
                #expect(a.map(\.id) == b.map(\.id) && a.map(\.score) == b.map(\.score), "\(comment)")
            }
        }
        // Rescored (and, for a few allowed rows, gathered) from the file: the rows stay there.
        // Only the candidates whose int8 products' error bound reaches the best so far are read.
        try same("quantized")
        let rescoring = restored.rescoring
        #expect(rescoring.candidates >= 12 * 100 && rescoring.read < rescoring.candidates / 2, "\(rescoring)")
        try same("few allowed", allowed: Set((1...300).map(Int64.init)))
        #expect(restored.vector(for: 77) == index.vector(for: 77))
        #expect(restored.floatFile != nil)
        // Even with the file replaced meanwhile (a newer save renamed over it), the rows are read
        // from the file as it was opened.
        try SavedFile.write(to: path + ".new", stamp: .init(created: "c", generation: 2, kind: "k", detail: "d"), numbers: [:], sections: [])
        #expect(rename(path + ".new", path) == 0)
        try same("file replaced")
        // Saved again from the file's rows: the same file.
        let again = temporaryPath("again")
        let restoredForm = restored.savedForm()
        try SavedFile.write(to: again, stamp: .init(created: "c", generation: 1, kind: "k", detail: "d"), numbers: restoredForm.numbers, sections: restoredForm.sections)
        #expect(try SavedFile(path: again).array("matrix", as: Float.self) == index.matrix)
        // Quantizing a copy restored without its int8 copy loads its rows first (a memories' copy searched approximately).
        let plain = VectorMatrix(dimension: 64, signStageFrom: 256)
        try plain.upsert(Self.clustered(500, seed: 17).enumerated().map { (Int64($0.offset + 1), $0.element) })
        let plainForm = plain.savedForm()
        let plainPath = temporaryPath("plain")
        try SavedFile.write(to: plainPath, stamp: .init(created: "c", generation: 1, kind: "k", detail: "d"), numbers: plainForm.numbers, sections: plainForm.sections)
        let plainRestored = try VectorMatrix.restored(from: SavedFile(path: plainPath), dimension: 64, signStageFrom: 256, floatsOnDisk: true)
        #expect(plainRestored.floatFile != nil)
        plainRestored.enableQuantization()
        plain.enableQuantization()
        #expect(plainRestored.floatFile == nil && plainRestored.quantizedRows == plain.quantizedRows)
        #expect(try plainRestored.search(queries[0], k: 10, quantized: true).map(\.id) == (try plain.search(queries[0], k: 10, quantized: true).map(\.id)))
        // Writes keep the rows in the file: only the rows they change are held — a row added (then
        // moved into a removed row's place), the last row moved into the other's, a row rewritten —
        // and the matrix reads, searches and saves as a held one.
        let added = (id: Int64(9999), vector: Self.clustered(1, seed: 15)[0])
        let rewritten = (id: Int64(100), vector: Self.clustered(1, seed: 19)[0])
        for matrix in [index, restored] {
            try matrix.upsert([added])
            try matrix.remove([5, 6])
            try matrix.upsert([rewritten])
        }
        #expect(restored.floatFile != nil && restored.matrix.isEmpty && restored.patchedRows.count == 3)
        #expect(restored.ids == index.ids && restored.vector(for: 9999) == added.vector && restored.vector(for: 100) == rewritten.vector)
        #expect(restored.vector(for: 4000) == index.vector(for: 4000) && restored.vector(for: 5) == nil)
        #expect(restored.quantizedRows == index.quantizedRows && restored.signBits == index.signBits)
        try same("after writes")
        try same("after writes, few allowed", allowed: Set((1...300).map(Int64.init)).union([9999]))
        let writtenForm = restored.savedForm()
        let written = temporaryPath("written")
        try SavedFile.write(to: written, stamp: .init(created: "c", generation: 2, kind: "k", detail: "d"), numbers: writtenForm.numbers, sections: writtenForm.sections)
        #expect(try SavedFile(path: written).array("matrix", as: Float.self) == index.matrix)
        try same("many allowed", allowed: Set((1...3000).map(Int64.init)))
        // What needs every row (an exact scan) loads them, patched.
        try restored.holdFloats()
        #expect(restored.floatFile == nil && restored.patchedRows.isEmpty && restored.matrix == index.matrix)
        try same("held again")
    }

    @Test func frequenciesReadBackAsTheSameFloatsHalvesOrNot() throws {
        let values: [Float] = [1, 2, 1.5, 0.5, 3.5, 0, 32767, 32767.5, 40000, 0.3, 1.7]
        var frequencies = Frequencies(values)
        #expect(values.indices.map { frequencies[$0] } == values)
        #expect(frequencies.largest == 40000 && frequencies.exact.count == 4)
        frequencies[0] += 0.25   // the loader adds a column's weight to the last posting
        #expect(frequencies[0] == 1.25 && frequencies.exact.count == 5)

        // An index with a weight that is not a multiple of 0.5, saved and read back, ranks the same.
        let weights = [1.0, 1.7, 1.5, 1.5]
        let index = KeywordIndex(weights: weights)
        var generator = KeywordIndexTests.Generator(state: 4)
        for id in 1...300 { index.add(Int64(id), columns: [generator.text(5 + generator.next(30)).split(separator: " ").map(String.init), [generator.word()], [], []]) }
        let path = temporaryPath("keywords")
        let form = index.savedForm()
        try SavedFile.write(to: path, stamp: .init(created: "c", generation: 1, kind: "keywords", detail: "d"), numbers: form.numbers, sections: form.sections)
        let restored = try KeywordIndex(saved: SavedFile(path: path), weights: weights)
        for query in KeywordIndexTests.queries {
            let terms = query.split(separator: " ").map(String.init)
            let a = index.ranking(terms, limit: 20, allowed: nil), b = restored.ranking(terms, limit: 20, allowed: nil)
            #expect(a.map(\.id) == b.map(\.id) && a.map(\.score) == b.map(\.score), "\(query)")
        }
    }

    @Test func aCopyOfAnEarlierStateCatchesUpWithTheWritesSince() async throws {
        let store = try await Self.filledStore()
        try await Self.prepareAndSave(store)
        // Writes from elsewhere (another process, or this one killed before it saved again: the
        // files are of an earlier state): knowledge added and removed, a memory added.
        // (The new rows are the queries of `answers`: each is the first a search finds.)
        let queries = Self.vectors(4, seed: 77)
        let other = try SQLiteStore.open(at: store.path, create: false)
        try await other.replace(document("/shelf/late.md", snippets: ["eclipse node angle late", "saturn venus late"], hash: "l"),
                                vectors: [queries[0], queries[1]], embedder: Self.record)
        _ = try await other.removeSources(exactly: ["/shelf/book3.md"])
        try await other.replace(document("memory:user:u1/late", kind: .memory, snippets: ["saturn late memory"], hash: "ml"),
                                vectors: [queries[2]], embedder: Self.record)
        let expected = try await Self.derivedAnswers(store.path)
        #expect(expected.contains { $0.hasPrefix("0 knowledge false: ") && $0.contains(" 1.0") })   // the new rows are found
        let reopened = try SQLiteStore.open(at: store.path, create: false)
        reopened.savedSearchMinimumRows = 0
        reopened.savedSearchFloatsHeldUpTo = 0
        #expect(try await Self.answers(reopened) == expected)
        #expect(reopened.savedSearchReads == 3 && reopened.savedSearchCatchUps == 3)
        try await KeywordIndexTests.expectSameRankings(reopened, allowed: Set(try await KeywordIndexTests.snippetIDs(reopened)), "caught up")

        // Saved as caught up; then memories written alone leave the knowledge's float rows in the
        // file (nothing of it to catch up).
        #expect(try await Self.prepareAndSave(reopened).count == 3)
        try await other.replace(document("memory:user:u2/later", kind: .memory, snippets: ["moon later memory"], hash: "ml2"),
                                vectors: [queries[3]], embedder: Self.record)
        let memoriesOnly = try SQLiteStore.open(at: store.path, create: false)
        memoriesOnly.savedSearchFloatsHeldUpTo = 0
        let read = try await memoriesOnly.snapshot { try $0.prepareSearches(embedder: Self.record, quantizingFrom: 0) }
        #expect(memoriesOnly.savedSearchReads == 3)
        // What it read, as `kb serve` logs it: each copy caught up with the memory written since.
        #expect(read.count == 3 && read.allSatisfy { $0.hasSuffix("caught up with the writes since (1 snippet touched)") })
        #expect(memoriesOnly.vectors.loadedIndex?.floatFile != nil)
        #expect(try await Self.answers(memoriesOnly) == (try await Self.derivedAnswers(store.path)))
    }

    @Test func aCopyOfAnotherStateOfTheIndexIsNeverRead() async throws {
        let store = try await Self.filledStore()
        try await Self.prepareAndSave(store)
        // A write by another program (not through a store: nothing in the index's log of writes
        // says what it did), then one through a store: the log has a gap, the files cannot catch up.
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE snippets SET text = 'quasar pulsar' WHERE id = 5")
            try db.execute(sql: SQLiteTransaction.bumpGenerationSQL)
        }
        try queue.close()
        let other = try SQLiteStore.open(at: store.path, create: false)
        try await other.replace(document("/shelf/late.md", snippets: ["eclipse node angle late"], hash: "l"),
                                vectors: Self.vectors(1, seed: 6), embedder: Self.record)
        let expected = try await Self.answers(other)
        let reopened = try SQLiteStore.open(at: store.path, create: false)
        reopened.savedSearchMinimumRows = 0
        #expect(try await Self.answers(reopened) == expected)
        #expect(reopened.savedSearchReads == 0)
        #expect(Self.files(reopened).isEmpty)   // the stale files were deleted when found
        try await Self.prepareAndSave(reopened)
        #expect(Self.files(reopened).count == 3)

        // Another index put at the same path (same generation, another creation time) does not read them either.
        let replacing = try DatabaseQueue(path: store.path)
        try await replacing.write { db in try db.execute(sql: "UPDATE kb_meta SET value = 'another time' WHERE key = 'created_at'") }
        try replacing.close()
        let replaced = try SQLiteStore.open(at: store.path, create: false)
        _ = try await Self.answers(replaced)
        #expect(replaced.savedSearchReads == 0)
        #expect(Self.files(replaced).isEmpty)
    }

    @Test func aFileCutShortOrDamagedIsRebuiltFromTheIndex() async throws {
        let store = try await Self.filledStore()
        try await Self.prepareAndSave(store)
        let expected = try await Self.answers(store)
        let folder = store.savedSearchFolder
        // A crash mid-write leaves a temporary file (never read); a damaged disk, files cut short
        // or with damaged headers.
        _ = FileManager.default.createFile(atPath: folder + "/keywords.partial-3999999-456", contents: Data(repeating: 7, count: 100))
        let knowledge = try Data(contentsOf: URL(fileURLWithPath: folder + "/knowledge-vectors"))
        try knowledge.prefix(knowledge.count / 2).write(to: URL(fileURLWithPath: folder + "/knowledge-vectors"))
        var keywords = try Data(contentsOf: URL(fileURLWithPath: folder + "/keywords"))
        keywords[20] ^= 0xFF
        try keywords.write(to: URL(fileURLWithPath: folder + "/keywords"))
        let memories = try Data(contentsOf: URL(fileURLWithPath: folder + "/memory-vectors"))
        try memories.prefix(memories.count - 64).write(to: URL(fileURLWithPath: folder + "/memory-vectors"))

        let reopened = try SQLiteStore.open(at: store.path, create: false)
        reopened.savedSearchMinimumRows = 0
        #expect(try await Self.answers(reopened) == expected)
        #expect(reopened.savedSearchReads == 0)
        #expect(try await Self.prepareAndSave(reopened).count == 3)
        // The temporary file of a process that is gone was deleted by the next write; one of a
        // process still running (this one) is left alone.
        #expect(!FileManager.default.fileExists(atPath: folder + "/keywords.partial-3999999-456") || kill(3_999_999, 0) == 0)
        _ = FileManager.default.createFile(atPath: folder + "/keywords.partial-\(getpid())-1", contents: Data([1]))
        reopened.saved.removeAbandonedWrites()
        #expect(FileManager.default.fileExists(atPath: folder + "/keywords.partial-\(getpid())-1"))
        let again = try SQLiteStore.open(at: store.path, create: false)
        #expect(try await Self.answers(again) == expected)
        #expect(again.savedSearchReads == 3)
    }

    @Test func aFileOfAnotherSchemaOrFormatIsRebuilt() async throws {
        let store = try await Self.filledStore()
        try await Self.prepareAndSave(store)
        let expected = try await Self.answers(store)
        // The same contents stamped by an older kb: another schema, another file format.
        for kind in ["knowledge vectors", "memory vectors", "keywords"] {
            let path = store.saved.path(kind)
            let file = try SavedFile(path: path)
            var stamp = file.stamp
            if kind == "keywords" { stamp.format -= 1 } else { stamp.schema -= 1 }
            let copy = temporaryPath("copy")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            let old = try SavedFile(path: copy)
            let sections = try Self.sections(of: old)
            try SavedFile.write(to: path, stamp: stamp, numbers: old.numbers, sections: sections)
            #expect(try SavedFile(path: path).stamp == stamp)
        }
        let reopened = try SQLiteStore.open(at: store.path, create: false)
        #expect(try await Self.answers(reopened) == expected)
        #expect(reopened.savedSearchReads == 0)
    }

    /// Every section of a saved file, to write it again.
    static func sections(of file: SavedFile) throws -> [SavedFile.Section] {
        try file.sectionNames.map { name in
            let bytes: [UInt8] = try file.array(name)
            return SavedFile.Section.array(name, bytes)
        }
    }

    /// Rows of the index's log of writes.
    static func logRows(_ store: SQLiteStore) async throws -> [Int64] {
        try await store.read { db in try Int64.fetchAll(db, sql: "SELECT generation FROM kb_search_log ORDER BY generation") }
    }

    @Test func theLogOfWritesKeepsOnlyWhatASavedCopyNeeds() async throws {
        let store = try await Self.filledStore()
        // No copy saved yet: writes leave no rows.
        #expect(try await Self.logRows(store).isEmpty)
        try await Self.prepareAndSave(store)
        let saved = try await store.snapshot { try $0.generation() }
        for n in 0..<3 {
            try await store.replace(document("/shelf/extra\(n).md", snippets: ["extra \(n) saturn"], hash: "e\(n)"),
                                    vectors: Self.vectors(1, seed: UInt64(20 + n)), embedder: Self.record)
        }
        let rows = try await Self.logRows(store)
        #expect(rows.count == 3 && rows.allSatisfy { $0 > saved })
        // Three snippets added, none removed: the knowledge's and the keywords' files (~500 rows)
        // catch up touching under 1% of their rows and are kept; the memories' (20) is written again.
        #expect(try await Self.prepareAndSave(store).map { $0.components(separatedBy: ":")[0] } == ["memory vectors"])
        #expect(try await Self.logRows(store) == rows)   // the kept files need them
        let reopened = try SQLiteStore.open(at: store.path, create: false)
        #expect(try await Self.answers(reopened) == (try await Self.derivedAnswers(store.path)))
        #expect(reopened.savedSearchReads == 3 && reopened.savedSearchCatchUps == 2)

        // A removal: every file is written again (the removed snippet's words and vector must not
        // stay in one), and the next write deletes the rows before them.
        _ = try await store.removeSources(exactly: ["/shelf/extra0.md"])
        #expect(try await Self.prepareAndSave(store).count == 3)
        let now = try await store.snapshot { try $0.generation() }
        try await store.replace(document("/shelf/extra9.md", snippets: ["extra nine"], hash: "e9"),
                                vectors: Self.vectors(1, seed: 29), embedder: Self.record)
        #expect(try await Self.logRows(store).allSatisfy { $0 > now })
        #expect(try await Self.logRows(store).count == 1)
        // The folder gone: the next write deletes every row.
        try FileManager.default.removeItem(atPath: store.savedSearchFolder)
        _ = try await store.removeSources(exactly: ["/shelf/extra9.md"])
        #expect(try await Self.logRows(store).isEmpty)
    }

    @Test func theLogTellsTheChangesOnlyWithoutAGapOrAReset() async throws {
        let store = try temporaryStore()
        try await store.write { db in
            let rows: [(Int64, Int64, Int, [Int64], [Int64])] = [(3, 2, 0, [7], [9]), (4, 3, 0, [], [9, 11]), (6, 5, 0, [], [1]), (7, 6, 1, [], []),
                                                                 (8, 7, 0, [], [2])]
            for (generation, before, reset, removed, written) in rows {
                try db.execute(sql: "INSERT INTO kb_search_log (generation, before, reset, removed, written) VALUES (?, ?, ?, ?, ?)",
                               arguments: [generation, before, reset, SearchLog.encode(removed), SearchLog.encode(written)])
            }
        }
        let asked: [(from: Int64, to: Int64)] = [(2, 4), (3, 4), (4, 4), (2, 6), (5, 6), (5, 8), (7, 8), (1, 4), (5, 4)]
        let told = try await store.read { db in try asked.map { try SearchLog.changes(in: db, from: $0.from, to: $0.to) } }
        #expect(told[0] == SearchLog.Changes(touched: [7, 9, 11], removed: 1))
        #expect(told[1] == SearchLog.Changes(touched: [9, 11], removed: 0) && told[2] == SearchLog.Changes())
        #expect(told[3] == nil)   // nothing says what made generation 5
        #expect(told[4] == SearchLog.Changes(touched: [1], removed: 0))
        #expect(told[5] == nil)   // generation 7 rebuilt what copies hold
        #expect(told[6] == SearchLog.Changes(touched: [2], removed: 0))
        #expect(told[7] == nil && told[8] == nil)   // rows before 2 were deleted; backwards
    }

    @Test func rawWritesAndErasureDeleteTheSavedCopies() async throws {
        let store = try await Self.filledStore()
        try await Self.prepareAndSave(store)
        #expect(Self.files(store).count == 3)
        try await store.write { db in try db.execute(sql: "UPDATE snippets SET text = 'changed' WHERE id = 1") }
        #expect(Self.files(store).isEmpty)
        try await Self.prepareAndSave(store)
        #expect(Self.files(store).count == 3)
        try await store.scrub()
        #expect(Self.files(store).isEmpty)
    }

    @Test func removedSnippetsAreLeftOutOfTheSavedPostings() async throws {
        let store = try await Self.filledStore()
        try await store.replace(document("/shelf/secret.md", snippets: ["zanzibarite quokka saturn"], hash: "s"),
                                vectors: Self.vectors(1, seed: 8), embedder: Self.record)
        try await Self.prepareAndSave(store)
        _ = try await store.removeSources(exactly: ["/shelf/secret.md"])
        // The postings in memory keep the removed snippet as a dead entry; the file must not.
        #expect(try await Self.prepareAndSave(store).count == 3)
        let keywords = try Data(contentsOf: URL(fileURLWithPath: store.savedSearchFolder + "/keywords"))
        #expect(keywords.range(of: Data("zanzibarit".utf8)) == nil && keywords.range(of: Data("quokka".utf8)) == nil)
        let reopened = try SQLiteStore.open(at: store.path, create: false)
        #expect(try await Self.answers(reopened) == (try await Self.answers(store)))
        #expect(reopened.savedSearchReads == 3)
        try await KeywordIndexTests.expectSameRankings(reopened, allowed: Set(try await KeywordIndexTests.snippetIDs(reopened)), "restored")
    }
}

/// The int8 estimate's error bound (`Int8Bound`) holds for every row: no row's exact product
/// with a query exceeds what the bound allows, whatever the vectors' spread.
@Suite struct Int8BoundTests {
    @Test(arguments: [0.05, 0.4, 2.0] as [Float])
    func noExactProductExceedsItsBound(spread: Float) throws {
        let rows = SavedSearchTests.clustered(2000, seed: 31, spread: spread)
        let index = VectorMatrix(dimension: 64)
        try index.upsert(rows.enumerated().map { (Int64($0.offset + 1), $0.element) })
        index.enableQuantization()
        var tightest: Float = .infinity
        for query in SavedSearchTests.clustered(20, seed: 37, spread: spread) {
            let bound = Int8Bound(query: query, dimension: 64), q8 = VectorMatrix.quantizedQuery(query)
            index.lock.read {
                for (row, values) in rows.enumerated() {
                    let int8 = Array(index.quantizedRows[(row * 64)..<((row + 1) * 64)])
                    let dot = zip(q8, int8).reduce(Int32(0)) { $0 + Int32($1.0) * Int32($1.1) }
                    let exact = zip(query, values).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                    let most = int8.withUnsafeBufferPointer { bound.most(Float(dot) * index.scales[row], row: $0, scale: index.scales[row]) }
                    #expect(exact <= most)
                    tightest = min(tightest, most - exact)
                }
            }
        }
        // Not so loose as to read every candidate: within a few hundredths somewhere.
        #expect(tightest < 0.05)
    }

    /// Rows and a query whose every value rounds down by almost half a step, so that all the
    /// rounding errors add up: the exact product comes within 10% of the bound, never past it.
    @Test func roundingThatAddsUpStaysWithinTheBound() throws {
        var generator = KeywordIndexTests.Generator(state: 41)
        func aligned() -> [Float] { [127] + (1..<64).map { _ in Float(generator.next(120)) + 0.49 } }
        let rows = (0..<50).map { _ in aligned() }, query = aligned()
        let index = VectorMatrix(dimension: 64)
        try index.upsert(rows.enumerated().map { (Int64($0.offset + 1), $0.element) })
        index.enableQuantization()
        let bound = Int8Bound(query: query, dimension: 64), q8 = VectorMatrix.quantizedQuery(query)
        index.lock.read {
            for row in rows.indices {
                let int8 = Array(index.quantizedRows[(row * 64)..<((row + 1) * 64)]), scale = index.scales[row]
                let stored = index.vector(for: Int64(row + 1)) ?? []
                let dot = zip(q8, int8).reduce(Int32(0)) { $0 + Int32($1.0) * Int32($1.1) }
                let estimate = Float(dot) * scale
                let exact = zip(query, stored).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                let most = int8.withUnsafeBufferPointer { bound.most(estimate, row: $0, scale: scale) }
                #expect(exact <= most)
                #expect(exact - estimate * bound.queryScale > 0.9 * (most - estimate * bound.queryScale))
            }
        }
    }
}

import Foundation
import GRDB
import KBCore
import KBStore

// The copies searches keep in memory, read back from the files `SavedSearchData` keeps beside the
// index, and saved there.
extension SQLiteStore.Snapshot {
    /// The stamp a saved file of `kind` has when it was made from this index as of `generation`.
    func savedStamp(_ kind: String, detail: String, generation: Int64) throws -> SavedSearchData.Stamp {
        let created = try String.fetchOne(db, sql: "SELECT value FROM kb_meta WHERE key = 'created_at'") ?? ""
        return SavedSearchData.Stamp(created: created, generation: generation, kind: kind, detail: detail)
    }

    static func vectorKind(_ rows: VectorRows) -> String { rows == .memories ? "memory vectors" : "knowledge vectors" }
    static func vectorDetail(_ embedder: EmbedderRecord) -> String { "\(embedder.name) \(embedder.dimension) \(embedder.spec)" }
    func keywordDetail() throws -> String { "\(try keywordLanguage().ftsTokenizer); \(SQLiteStore.bm25Weights)" }

    /// A cache's vectors as of this snapshot: from their saved file when it was made from this
    /// very state of the index, else from the index's rows.
    func loadVectorIndex(_ cache: VectorCache, embedder: EmbedderRecord) throws -> (index: VectorMatrix, generation: Int64) {
        let generation = try generation()
        let stamp = try savedStamp(Self.vectorKind(cache.rows), detail: Self.vectorDetail(embedder), generation: generation)
        if let file = saved.open(stamp, orEarlier: true) {
            // Knowledge is searched through its int8 copy, memories a user's at a time: the float
            // rows stay in the file — the knowledge's only when they are large (`floatsHeldUpTo`).
            let floatBytes = file.range("matrix")?.bytes ?? 0
            let floatsOnDisk = cache.rows == .memories || floatBytes > saved.floatsHeldUpTo.withLock { $0 }
            if let touched = try SearchLog.changes(in: db, from: file.stamp.generation, to: generation)?.touched,
               let index = try? VectorMatrix.restored(from: file, dimension: embedder.dimension, floatsOnDisk: floatsOnDisk) {
                // Written since the file was saved: the touched snippets' rows go, and come back as
                // they are now (those still there, of these rows).
                if !touched.isEmpty {
                    let ids = touched.sorted()
                    try index.remove(ids)
                    try index.upsert(try vectors(of: ids, embedder: embedder, rows: cache.rows))
                    saved.caughtUp.withLock { $0 += 1 }
                }
                saved.reads.withLock { $0 += 1 }
                saved.noteRead(stamp.kind, from: file.stamp.generation, touched: touched.count)
                return (index, generation)
            }
            saved.remove(stamp.kind)
        }
        let loaded = try loadVectors(embedder: embedder, rows: cache.rows)
        let index = VectorMatrix(dimension: embedder.dimension)
        try index.reset(ids: loaded.ids, matrix: loaded.matrix)
        return (index, loaded.generation)
    }

    /// The keyword postings as of this snapshot: from their saved file when it was made from this
    /// very state of the index, else from the keyword table.
    func loadKeywordIndexOrSaved() throws -> KeywordIndex {
        let generation = try generation()
        let stamp = try savedStamp("keywords", detail: try keywordDetail(), generation: generation)
        if let file = saved.open(stamp, orEarlier: true) {
            if let touched = try SearchLog.changes(in: db, from: file.stamp.generation, to: generation)?.touched,
               let index = try? KeywordIndex(saved: file, weights: SQLiteStore.bm25WeightValues) {
                // Written since the file was saved: the touched snippets' postings go, and those
                // still there are read back from the keyword table — unless so many went that
                // reading every posting anew is as quick and leaves none dead.
                if !touched.isEmpty {
                    let ids = touched.sorted()
                    index.remove(ids)
                    for document in try keywordDocuments(ids, tokenizer: try keywordTokenizer(try keywordLanguage())) {
                        index.add(document.id, columns: document.columns)
                    }
                    saved.caughtUp.withLock { $0 += 1 }
                }
                if Double(index.dead) <= Double(max(index.count, 1)) * KeywordCache.deadFraction {
                    saved.reads.withLock { $0 += 1 }
                    saved.noteRead(stamp.kind, from: file.stamp.generation, touched: touched.count)
                    return index
                }
            }
            saved.remove(stamp.kind)
        }
        return try loadKeywordIndex()
    }

    /// Whether the saved file of `stamp.kind` is of an earlier generation that catches up to
    /// `stamp` with the log of writes, which removed nothing (a removed snippet's words and
    /// vector must not stay in a file) and touched at most `catchUpFraction` of its `rows`: then
    /// it is kept rather than written again (a million snippets' vectors are 1.9 GB to write
    /// after a few memories came).
    func savedFileCatchesUp(to stamp: SavedSearchData.Stamp, rows: Int) throws -> Bool {
        guard let file = try? SavedFile(path: saved.path(stamp.kind)) else { return false }
        var same = stamp
        same.generation = file.stamp.generation
        guard file.stamp == same, same.generation < stamp.generation,
              let changes = try SearchLog.changes(in: db, from: same.generation, to: stamp.generation) else { return false }
        return changes.removed == 0 && Double(changes.touched.count) <= Double(rows) * SavedSearchData.catchUpFraction
    }

    /// Vectors of the given snippets from one embedder, those of `rows` (memories' or the
    /// rest's), read from the index file.
    func vectors(of snippetIDs: [Int64], embedder: EmbedderRecord, rows: VectorRows) throws -> [(id: Int64, vector: [Float])] {
        guard let embedderID = try embedderID(named: embedder.name) else { return [] }
        var entries: [(id: Int64, vector: [Float])] = []
        for chunk in stride(from: 0, to: snippetIDs.count, by: 500) {
            let part = Array(snippetIDs[chunk..<min(chunk + 500, snippetIDs.count)])
            let found = try Row.fetchAll(db, sql: """
                SELECT v.snippet_id, v.data FROM \(Self.vectorsSQL(rows))
                AND v.snippet_id IN (\(part.map { _ in "?" }.joined(separator: ",")))
                """, arguments: StatementArguments([embedderID]) + StatementArguments(part))
            for row in found {
                guard let vector = VectorCoding.decode(row[1], dimension: embedder.dimension) else {
                    throw KBError(.database, "A stored vector of snippet \(row[0] as Int64) does not hold \(embedder.dimension) floats; the index is damaged. Re-ingest its source.")
                }
                entries.append((row[0], vector))
            }
        }
        return entries
    }

    /// Saves the copies in memory that are large enough to be worth it (`SavedSearchData`) and
    /// not saved as they are yet; returns what it wrote, one line each. A copy that cannot be
    /// written is an error naming the file; searches are unaffected either way.
    public func saveSearches() throws -> [String] {
        var written: [String] = []
        var failures: [String] = []
        // `form` is only taken for a copy worth saving and not saved as it is (the keyword copy's
        // reads every posting).
        func save(_ stamp: SavedSearchData.Stamp, rows: Int, form: () -> (numbers: [String: [Double]], sections: [SavedFile.Section])) throws {
            guard saved.saves(rows: rows), !saved.holds(stamp), try !savedFileCatchesUp(to: stamp, rows: rows) else { return }
            let start = DispatchTime.now().uptimeNanoseconds
            let (numbers, sections) = form()
            if let error = saved.write(stamp, numbers: numbers, sections: sections) {
                failures.append("\(saved.path(stamp.kind)): \(error)")
            } else {
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                written.append("\(stamp.kind): \(rows) rows as of generation \(stamp.generation) in \(String(format: "%.1f", seconds)) s")
            }
        }
        for cache in [vectors, memoryVectors] {
            guard let form = cache.savedForm() else { continue }
            try save(try savedStamp(Self.vectorKind(cache.rows), detail: Self.vectorDetail(form.record), generation: form.generation),
                     rows: form.rows) { (form.numbers, form.sections) }
        }
        if let copy = keywords.current() {
            try save(try savedStamp("keywords", detail: try keywordDetail(), generation: copy.generation), rows: copy.index.count) {
                copy.index.savedForm()
            }
        }
        // The log of writes is needed only after the oldest copy saved: the next write deletes
        // the rows before it.
        if let oldest = saved.oldestGeneration([Self.vectorKind(.knowledge), Self.vectorKind(.memories), "keywords"]) {
            saved.logFloor.withLock { $0 = oldest }
        }
        if !failures.isEmpty {
            throw KBError(.database, "Could not save the search copies beside the index (searches are unaffected; the next start loads from the index): "
                          + failures.joined(separator: "; "))
        }
        return written
    }
}

extension SQLiteStore {
    /// `bm25Weights` as numbers.
    static let bm25WeightValues = bm25Weights.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }

    /// How many rows (vectors, or keyword documents) a copy needs before it is saved beside the
    /// index (default 50,000): smaller ones load from the index quickly. 0 saves every copy.
    public var savedSearchMinimumRows: Int {
        get { saved.minimumRows.withLock { $0 } }
        set { saved.minimumRows.withLock { $0 = newValue } }
    }

    /// The knowledge's vectors read back from a saved file hold their float rows in memory when
    /// these take at most this many bytes (default 256 MB), else leave them in the file and read
    /// the rows a search rescores. Memories' rows always stay in the file.
    public var savedSearchFloatsHeldUpTo: Int {
        get { saved.floatsHeldUpTo.withLock { $0 } }
        set { saved.floatsHeldUpTo.withLock { $0 = newValue } }
    }

    /// The folder the saved search copies are kept in (`<index>-search`).
    public var savedSearchFolder: String { saved.folder }

    /// How many copies this store has read back from saved files instead of deriving them.
    public var savedSearchReads: Int { saved.reads.withLock { $0 } }

    /// How many of those were older than the index and caught up from its log of writes.
    public var savedSearchCatchUps: Int { saved.caughtUp.withLock { $0 } }
}

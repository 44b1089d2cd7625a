package import Foundation
import KBCore
import KBMemory

/// What `kb export` copied.
public struct ExportReport: Sendable, Hashable, Codable {
    /// Where the copy is: a file path or a `postgres://` URL without password.
    public var destination: String
    public var sources = 0
    public var snippets = 0
    /// Vectors copied, by embedder.
    public var vectors: [String: Int] = [:]
    public var memories = 0
    public var memoryVersions = 0
    public var bots = 0
    public var cachedVectors = 0
    /// Originals of uploaded sources copied (their bytes, for reading them again).
    public var originals = 0
    /// Whether the destination's server wrote the copy to disk at once (PostgreSQL); nil otherwise.
    public var checkpoint: CheckpointReport?
}

/// A whole index copied into another (`kb export`): an SQLite file or a PostgreSQL database,
/// over the store contract. Holds no state of its own.
package struct IndexCopier: Sendable {
    package let store: any IndexStore

    package init(store: any IndexStore) { self.store = store }

    /// Copies this whole index — sources (with uploads' originals), snippets, tags, every
    /// embedder's vectors, memories with their history, bots, the embedding cache and token usage — into the empty index
    /// `target` (an SQLite file or a `postgres://` database), with the `kb_meta` values named in
    /// `meta` (what else the index remembers about itself). Each source and memory is written in
    /// its own transaction; the copy holds the same data, so searches give the same results
    /// (keyword scores are each backend's own).
    package func export(into target: any IndexStore, meta: [String],
                        progress: @Sendable (_ done: Int, _ total: Int, _ item: String) -> Void = { _, _, _ in })
        async throws -> ExportReport {
        guard target.location != store.location else {
            throw KBError(.invalidArgument, "The destination is the index itself (\(store.location)). Name another file or database.")
        }
        let targetStatus = try await target.snapshot { try $0.status() }
        let targetBots = try await target.snapshot { try $0.bots() }
        guard targetStatus.sources == 0, targetBots.isEmpty else {
            throw KBError(.conflict,
                "\(target.location) already holds an index (\(targetStatus.sources) sources, \(targetBots.count) bots). Export into an empty file or database.")
        }
        let (record, embedders, sources, bots, status) = try await store.snapshot { s in
            (try s.embedderRecord(), try s.embedders(), try s.sources(), try s.bots(), try s.status())
        }
        var report = ExportReport(destination: target.location)
        if let record {
            for (key, value) in record.metaValues {
                try await target.setMeta(key, value)
            }
        }
        for key in meta {
            if let value = try await store.snapshot({ try $0.meta(key) }) { try await target.setMeta(key, value) }
        }
        // Keyword tuning chosen with --language (an SQLite index records it), before any snippet is
        // copied. A target whose language was fixed when it was made (PostgreSQL: KB_TEXT_SEARCH)
        // keeps its own, and a source that records none has none to give: neither stops the copy.
        if target.retunesKeywordLanguage, let recorded = try await store.snapshot({ try $0.meta("language") }) {
            try await target.setKeywordLanguage(try KeywordLanguage(recorded))
        }
        let others = embedders.filter { $0.name != record?.name }
        let total = sources.count + bots.count
        // A store with a faster way to take a whole index (PostgreSQL: keyword blocks written once
        // at the end) gets it; sources and memories then go in batches of about `batchSnippets`
        // snippets a transaction.
        let bulk = try await target.beginBulkLoad()
        let batchSnippets = bulk ? Self.batchSnippets : 1
        var batch = Batch()
        // Two batches are written at once (a store may prepare one while it writes the other) while
        // the next is read.
        var writing: [Task<[String: Int], any Error>] = []
        func settle(keeping kept: Int) async throws {
            while writing.count > kept {
                for (name, count) in try await writing.removeFirst().value { report.vectors[name, default: 0] += count }
            }
        }
        func flush() async throws {
            try await settle(keeping: 1)
            guard !batch.isEmpty else { return try await settle(keeping: 0) }
            let full = batch, record = record
            batch = Batch()
            writing.append(Task { try await full.write(into: target, record: record, others: others) })
        }
        do {
        for (index, stored) in sources.enumerated() {
            progress(index, total, stored.path)
            let path = stored.path
            let copied = try await store.snapshot { s -> (SourceDocument, [String: [Float]?], Memory?, [MemoryVersion])? in
                guard let document = try s.document(path: path) else { return nil }   // removed meanwhile
                let ids = try s.snippetIDs(ofSource: path)
                var vectors: [String: [Float]?] = [:]
                for embedder in embedders {
                    let byID = try s.vectors(of: ids, embedder: embedder)
                    let ordered = ids.compactMap { byID[$0] }
                    vectors[embedder.name] = ordered.count == ids.count ? ordered.flatMap { $0 } : nil
                }
                let memory = stored.kind == .memory ? try s.memories(sourcePaths: [path])[path] : nil
                return (document, vectors, memory, try memory.map { try s.memoryHistory($0.id) } ?? [])
            }
            guard let (document, vectors, memory, history) = copied else { continue }
            let current = record.flatMap { vectors[$0.name] ?? nil }.map { Self.rows($0, dimension: record!.dimension) }
            report.snippets += document.snippets.count
            if let record, current != nil { report.vectors[record.name, default: 0] += document.snippets.count }
            if let memory, let record {
                let write = MemoryWrite(memory: memory, contentKey: MemoryRules.contentKey(memory.content), document: document,
                                        vector: current?.first, embedder: record)
                batch.memories.append((write, history, vectors))
                report.memories += 1
                report.memoryVersions += history.count
            } else if let (job, chunks) = try await original(of: path) {
                try await flush()
                try await settle(keeping: 0)
                let effect = try await target.replace(document, vectors: current, embedder: record ?? .none, ingestedAt: stored.ingestedAt)
                for (name, count) in try await Self.copyOtherVectors(vectors, of: document, effect: effect, others: others, into: target) {
                    report.vectors[name, default: 0] += count
                }
                try await target.importOriginal(job, chunks: chunks)
                report.sources += 1
                report.originals += 1
                continue
            } else {
                batch.sources.append((document, current, stored.ingestedAt, vectors))
                report.sources += 1
            }
            batch.snippets += max(1, document.snippets.count)
            if batch.snippets >= batchSnippets { try await flush() }
        }
        try await flush()
        try await settle(keeping: 0)
        } catch {
            // Batches still being written end before the error is reported.
            for task in writing { _ = try? await task.value }
            throw error
        }
        if bulk {
            progress(sources.count, total, "keyword index")
            report.checkpoint = try await target.finishBulkLoad()
        }
        for (index, bot) in bots.enumerated() {
            progress(sources.count + index, total, "bot \(bot.name)")
            try await target.createBot(bot)
            report.bots += 1
        }
        // The embedding cache and token usage, per embedder they were recorded for.
        let cacheNames = Set(status.cachedVectors.keys).union(status.tokensUsed.keys)
        for name in cacheNames.sorted() {
            let known = embedders.first { $0.name == name } ?? (record?.name == name ? record : nil)
            let entries = try await store.snapshot { s in
                try known.map { try s.cacheEntries(embedder: $0) } ?? []
            }
            let embedder = known ?? EmbedderRecord(name: name, dimension: 0, spec: name)
            try await target.cacheVectors(embedder: embedder, entries, tokens: status.tokensUsed[name] ?? 0)
            report.cachedVectors += entries.count
        }
        progress(total, total, "")
        return report
    }

    /// About how many snippets a batch of sources holds when the target takes a bulk load.
    static let batchSnippets = 4_000

    /// Sources and memories read, not yet written.
    struct Batch: Sendable {
        var sources: [(document: SourceDocument, vectors: [[Float]]?, ingestedAt: Date, all: [String: [Float]?])] = []
        var memories: [(write: MemoryWrite, history: [MemoryVersion], all: [String: [Float]?])] = []
        var snippets = 0

        var isEmpty: Bool { sources.isEmpty && memories.isEmpty }

        /// Writes the batch (sources in one transaction, memories in another); returns the other
        /// embedders' vectors it copied, by embedder.
        func write(into target: any IndexStore, record: EmbedderRecord?, others: [EmbedderRecord]) async throws -> [String: Int] {
            var counts: [String: Int] = [:]
            if !sources.isEmpty {
                let effects = try await target.copyIn(sources.map { ($0.document, $0.vectors, $0.ingestedAt) }, embedder: record ?? .none)
                for (entry, effect) in zip(sources, effects) {
                    counts.merge(try await copyOtherVectors(entry.all, of: entry.document, effect: effect, others: others, into: target), uniquingKeysWith: +)
                }
            }
            if !memories.isEmpty {
                let outcomes = try await target.importMemories(memories.map { ($0.write, $0.history) }, replacing: false)
                for (entry, outcome) in zip(memories, outcomes) {
                    counts.merge(try await copyOtherVectors(entry.all, of: entry.write.document, effect: outcome.1 ?? WriteEffect(),
                                                            others: others, into: target), uniquingKeysWith: +)
                }
            }
            return counts
        }
    }

    /// The vectors of embedders other than the index's own (kept by a reindex), for the snippets
    /// `effect` inserted; how many, by embedder.
    static func copyOtherVectors(_ vectors: [String: [Float]?], of document: SourceDocument, effect: WriteEffect, others: [EmbedderRecord],
                                 into target: any IndexStore) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for embedder in others {
            guard let flat = vectors[embedder.name] ?? nil, effect.insertedSnippets.count == document.snippets.count else { continue }
            let rows = rows(flat, dimension: embedder.dimension)
            try await target.addVectors(embedder: embedder, Array(zip(effect.insertedSnippets, rows)).map { (id: $0, vector: $1) })
            counts[embedder.name, default: 0] += rows.count
        }
        return counts
    }

    /// An uploaded source's original: the finished job whose bytes it was read from, and the bytes.
    package func original(of path: String) async throws -> (StoredJob, [Data])? {
        try await store.snapshot { snapshot in
            guard let id = try snapshot.originalJobID(sourcePath: path), let job = try snapshot.storedJob(id: id) else { return nil }
            return (job, try snapshot.jobChunks(id: id))
        }
    }

    static func rows(_ flat: [Float], dimension: Int) -> [[Float]] {
        guard dimension > 0 else { return [] }   // a keyword-only index's "vectors"
        return stride(from: 0, to: flat.count, by: dimension).map { Array(flat[$0..<$0 + dimension]) }
    }
}

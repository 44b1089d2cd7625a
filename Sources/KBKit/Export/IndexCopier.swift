import Foundation
import KBCore
import KBStore
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
}

/// A whole index copied into another (`kb export`): an SQLite file or a PostgreSQL database.
/// Holds no state of its own.
struct IndexCopier: Sendable {
    let store: any IndexStore
    let environment: [String: String]

    /// Copies this whole index — sources (with uploads' originals), snippets, tags, every
    /// embedder's vectors, memories with their history, bots, the embedding cache and token usage — into the empty index at
    /// `destination` (an SQLite file or a `postgres://` database, made when missing). Each source
    /// and memory is written in its own transaction; the copy holds the same data, so searches
    /// give the same results (keyword scores are each backend's own).
    func export(to destination: String, progress: @Sendable (_ done: Int, _ total: Int, _ item: String) -> Void = { _, _, _ in })
        async throws -> ExportReport {
        let target = try KnowledgeBase.openStore(destination, create: true, options: try StoreOptions(environment: environment), environment: environment)
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
            for (key, value) in [("embedder", record.name), ("dimension", String(record.dimension)), ("embedder_spec", record.spec)] {
                try await target.setMeta(key, value)
            }
        }
        // What else the index remembers about itself: the corpus `kb eval` loaded into it, the
        // languages OCR was given.
        for key in ["eval_corpus", Ingestor.ocrLanguagesKey] {
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
            let effect: WriteEffect
            if let memory, let record {
                let write = MemoryWrite(memory: memory, contentKey: MemoryRules.contentKey(memory.content), document: document,
                                        vector: current?.first, embedder: record)
                let (_, written) = try await target.importMemory(write, history: history, replacing: false)
                effect = written ?? WriteEffect()
                report.memories += 1
                report.memoryVersions += history.count
            } else {
                effect = try await target.replace(document, vectors: current, embedder: record ?? .none, ingestedAt: stored.ingestedAt)
                report.sources += 1
                if let (job, chunks) = try await original(of: path) {
                    try await target.importOriginal(job, chunks: chunks)
                    report.originals += 1
                }
            }
            report.snippets += document.snippets.count
            if let record, current != nil { report.vectors[record.name, default: 0] += document.snippets.count }
            for embedder in others {
                guard let flat = vectors[embedder.name] ?? nil, effect.insertedSnippets.count == document.snippets.count else { continue }
                let rows = Self.rows(flat, dimension: embedder.dimension)
                try await target.addVectors(embedder: embedder, Array(zip(effect.insertedSnippets, rows)).map { (id: $0, vector: $1) })
                report.vectors[embedder.name, default: 0] += rows.count
            }
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

    /// An uploaded source's original: the finished job whose bytes it was read from, and the bytes.
    func original(of path: String) async throws -> (StoredJob, [Data])? {
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

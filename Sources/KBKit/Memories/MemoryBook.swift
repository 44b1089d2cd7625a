import Crypto
import Foundation
import KBCore
import KBMemory
import KBRequests
import KBRetrieval
import KBStore

/// Memories: added, read, changed, forgotten, recalled, exported and imported — through the
/// memory rules of KBMemory and the store's memory transactions — and learned from
/// conversations (`MemoryBook+Extraction`). Holds no state of its own.
struct MemoryBook: Sendable {
    let store: any IndexStore
    let limits: Limits
    let embedders: Embedders
    let retriever: Retriever

    var profile: RetrievalProfile { retriever.profile }

    /// Memories that match a query (see `recall(_ query: MemoryQuery)`), of scopes the caller
    /// may read.
    func recall(_ checked: Checked<RecallRequest>, as caller: Caller) async throws -> MemoryResults {
        let query = checked.valid
        try caller.requireScopes(query.scopes, writing: false)
        return try await recall(checked: query)
    }

    /// Stores a memory (see `remember(_:options:superseding:embedder:)`) in a scope the caller may
    /// write. `embedder` applies to a new index only; an existing one keeps its own.
    func remember(_ checked: Checked<RememberRequest>, embedder choice: EmbedderChoice? = nil, as caller: Caller) async throws -> RememberResult {
        let (draft, options, supersede) = checked.valid
        try caller.requireScopes([draft.scope], writing: true)
        return try await remember(draft, options: options, superseding: supersede, embedder: choice)
    }

    /// Changes a memory of a scope the caller may write, keeping the previous version (see
    /// `updateMemory(_:_:options:)`).
    func changeMemory(_ checked: Checked<MemoryChangeRequest>, as caller: Caller) async throws -> Memory {
        let (id, change, options) = checked.valid
        return try await updateMemory(id, change, options: options) { try caller.requireScopes([$0.scope], writing: true) }
    }

    /// Deletes a memory of a scope the caller may write, and its history.
    func forget(_ checked: Checked<ForgetRequest>, as caller: Caller) async throws -> Deleted {
        Deleted(try await forget(checked.valid) { try caller.requireScopes([$0.scope], writing: true) }.id)
    }

    /// Memories of scopes the caller may read, oldest first. A scoped token must name them.
    func memories(_ checked: Checked<MemoryListRequest>, as caller: Caller) async throws -> [Memory] {
        let (scopes, tags, includeSuperseded) = checked.valid
        try caller.requireScopes(scopes, writing: false)
        return try await memories(scopes: scopes, tags: tags, includeSuperseded: includeSuperseded)
    }

    /// A memory's vector (nil for a keyword-only index), through the embedding cache.
    func embedOne(_ text: String, with embedder: (any Embedder)?, record: EmbedderRecord) async throws -> [Float]? {
        try await embedders.passages([text], with: embedder, record: record)?.first
    }

    static func memoryWrite(_ memory: Memory, vector: [Float]?, record: EmbedderRecord) -> MemoryWrite {
        let data = Data(memory.content.utf8)
        let snippet = Snippet(ordinal: 0, text: memory.content, start: 0, end: memory.content.unicodeScalars.count, tags: memory.tags)
        let source = Source(
            path: memory.sourcePath, kind: .memory, title: memory.title ?? "", contentHash: DocumentReader.contentHash(data),
            size: data.count, modifiedAt: memory.updatedAt, tags: memory.tags)
        return MemoryWrite(
            memory: memory, contentKey: MemoryRules.contentKey(memory.content),
            document: SourceDocument(source: source, snippets: [snippet]), vector: vector, embedder: record)
    }

    /// Adds a memory (see `KnowledgeBase.remember(_:options:superseding:embedder:)`).
    func remember(
        _ draft: MemoryDraft, options: MemoryOptions = MemoryOptions(), superseding: String? = nil, embedder choice: EmbedderChoice? = nil
    ) async throws -> RememberResult {
        let content = try MemoryRules.validContent(draft.content, options: options)
        let title = try MemoryRules.validTitle(draft.title)
        let tags = try MemoryRules.validTags(draft.tags)
        let supersedingID = try superseding.map(MemoryRules.idOrPrefix)
        guard (0...1).contains(options.nearDuplicateThreshold) else {
            throw KBError(.invalidArgument, "The near-duplicate threshold is a cosine similarity between 0 and 1; got \(options.nearDuplicateThreshold).")
        }
        let key = MemoryRules.contentKey(content), scope = draft.scope
        if supersedingID == nil, let existing = try await store.snapshot({ try $0.currentMemory(contentKey: key, scope: scope) }) {
            return RememberResult(memory: existing, created: false, nearDuplicates: [], superseded: nil)
        }
        let now = MemoryArchive.roundedToMilliseconds(Date())
        let validity = try MemoryTime.validity(from: draft.validFrom, to: draft.validTo, expiresAt: draft.expiresAt, storedAt: now)
        // A single-valued fact (`fact:KEY`) replaces the scope's current one: that one is closed.
        var supersedes = supersedingID
        if supersedes == nil { supersedes = try await currentFact(of: tags, in: scope) }
        let (embedder, record) = try await embedders.forWrites(choice)
        let vector = try await embedOne(content, with: embedder, record: record)
        let memory = Memory(id: UUID.random().uuidString.lowercased(), scope: draft.scope, title: title, content: content, tags: tags,
                            createdAt: now, updatedAt: now, validFrom: validity.from, validTo: validity.to, expiresAt: validity.expiresAt)
        switch try await store.addMemory(Self.memoryWrite(memory, vector: vector, record: record), superseding: supersedes) {
        case .existing(let existing):
            let superseded = try await supersedes.asyncMap { id in try await store.snapshot { try $0.memory(id) } }
            return RememberResult(memory: existing, created: false, nearDuplicates: [],
                                  superseded: superseded?.supersededBy == existing.id ? superseded?.id : nil)
        case .added(_, let neighbours):
            var near: [NearDuplicate] = []
            if let vector {
                let close = NearDuplicates.find(vector, among: neighbours, threshold: options.nearDuplicateThreshold)
                let paths = close.map { Memory.sourcePath($0.id) }
                let stored = try await store.snapshot { try $0.memories(sourcePaths: paths) }
                near = close.compactMap { entry in
                    stored[Memory.sourcePath(entry.id)].map { NearDuplicate(id: entry.id, similarity: entry.similarity, content: $0.content) }
                }
            }
            let superseded = try await supersedes.asyncMap { id in try await store.snapshot { try $0.memory(id).id } }
            return RememberResult(memory: memory, created: true, nearDuplicates: near, superseded: superseded)
        }
    }

    /// The id of the scope's current memory of the single-valued fact a tag set names
    /// (`fact:KEY`), if there is one.
    func currentFact(of tags: [Tag], in scope: MemoryScope) async throws -> String? {
        guard let fact = tags.first(where: { $0.name.hasPrefix("fact:") }) else { return nil }
        return try await store.snapshot { try $0.memories(scopes: [scope], tags: [fact], includeSuperseded: false) }.last?.id
    }

    /// The memory with this id, or a unique prefix of it (4 characters or more), and with
    /// `history` its earlier versions, oldest first (the current state is the memory itself) —
    /// if it is of a scope the caller may read.
    func memory(_ id: String, history: Bool = false, as caller: Caller) async throws -> MemoryWithHistory {
        let id = try MemoryRules.idOrPrefix(id)
        return try await store.snapshot { snapshot in
            let memory = try snapshot.memory(id)
            try caller.requireScopes([memory.scope], writing: false)
            return MemoryWithHistory(memory: memory, history: history ? try snapshot.memoryHistory(memory.id) : nil,
                                     feedback: history ? try snapshot.memoryFeedback(memory.id) : nil)
        }
    }

    /// The memory with this id or unique prefix, for a change whose `authorize` decides whether
    /// the caller may make it.
    func stored(_ id: String) async throws -> Memory {
        let id = try MemoryRules.idOrPrefix(id)
        return try await store.snapshot { try $0.memory(id) }
    }

    /// Memories, oldest first. `scopes` empty means all; every tag must be present.
    func memories(scopes: [MemoryScope] = [], tags: [Tag] = [], includeSuperseded: Bool = false) async throws -> [Memory] {
        let tags = try MemoryRules.validTags(tags)
        return try await store.snapshot { try $0.memories(scopes: scopes, tags: tags, includeSuperseded: includeSuperseded) }
    }

    /// Changes a memory, keeping the previous state in its history. A change that changes
    /// nothing (content equal after whitespace normalisation) writes nothing. The new content must not be the content of another current
    /// memory of the scope.
    ///
    /// `authorize` sees the memory before anything is changed, and may refuse.
    func updateMemory(_ id: String, _ change: MemoryChange, options: MemoryOptions = MemoryOptions(),
                      authorize: (Memory) throws -> Void = { _ in }) async throws -> Memory {
        guard !change.isEmpty else {
            throw KBError(.invalidArgument, "Nothing to update: give new content, a title, tags or valid times.")
        }
        let current = try await stored(id)
        try authorize(current)
        var next = current
        if let content = change.content {
            let valid = try MemoryRules.validContent(content, options: options)
            // Content that differs only in whitespace is the same content (as for duplicates).
            if MemoryRules.contentKey(valid) != MemoryRules.contentKey(current.content) { next.content = valid }
        }
        if let title = change.title { next.title = try MemoryRules.validTitle(title) }
        if let tags = change.tags { next.tags = try MemoryRules.validTags(tags) }
        if change.validFrom != nil || change.validTo != nil || change.expiresAt != nil {
            let validity = try MemoryTime.validity(from: change.validFrom ?? current.validFrom, to: change.validTo ?? current.validTo,
                                                   expiresAt: change.expiresAt ?? current.expiresAt, storedAt: current.createdAt)
            (next.validFrom, next.validTo, next.expiresAt) = (validity.from, validity.to, validity.expiresAt)
        }
        guard next.content != current.content || next.title != current.title || next.tags != current.tags
            || next.validFrom != current.validFrom || next.validTo != current.validTo || next.expiresAt != current.expiresAt else { return current }
        // A corrected memory has been reviewed: a "wrong" mark ends with the correction.
        if next.content != current.content { next.flaggedWrong = false }
        let (embedder, record) = try await embedders.forWrites(nil)
        let vector = try await embedOne(next.content, with: embedder, record: record)
        next.version = current.version + 1
        next.updatedAt = MemoryArchive.roundedToMilliseconds(Date())
        _ = try await store.updateMemory(Self.memoryWrite(next, vector: vector, record: record), expectedVersion: current.version)
        return next
    }

    /// Deletes a memory and its history; it is gone from keyword and vector search at once.
    /// `authorize` sees the memory inside the deleting transaction, and may refuse.
    @discardableResult
    func forget(_ id: String, authorize: @escaping @Sendable (Memory) throws -> Void = { _ in }) async throws -> Memory {
        let memory = try await store.deleteMemory(MemoryRules.idOrPrefix(id), authorize: authorize).memory
        try await store.scrub()
        return memory
    }

    /// Memories that match a query, searched like snippets (hybrid by default) within the
    /// query's scopes only.
    func recall(_ query: MemoryQuery) async throws -> MemoryResults {
        try Retriever.check(recallSearch(query))
        return try await recall(checked: query)
    }

    /// A recall whose query was checked (`RecallRequest.validated`, or `recall(_:)`).
    func recall(checked query: MemoryQuery) async throws -> MemoryResults {
        let query = try await namingTime(query)
        let (results, memories) = try await retriever.search(recallSearch(query)) { snapshot, results in
            try snapshot.memories(sourcePaths: results.hits.map(\.sourcePath))
        }
        return Self.recalled(query, results, memories: memories)
    }

    /// The snippet search a recall runs: memories only, of the query's scopes, deep enough for
    /// recency to reorder (`RetrievalProfile.widening` times the memories wanted, at least
    /// `candidates`).
    func recallSearch(_ query: MemoryQuery) -> SearchQuery {
        var search = SearchQuery(query.text)
        search.kinds = [.memory]
        search.scopes = query.scopes
        search.tags = query.tags
        search.includeSuperseded = query.includeSuperseded
        search.memoriesAsOf = query.asOf
        search.memoriesDuring = query.during
        search.mode = query.mode
        search.limit = query.recency == nil ? query.limit : max(query.limit * profile.widening, profile.candidates)
        search.candidates = max(profile.candidates, search.limit)
        search.excerpts = false
        return search
    }

    /// The memories of a recall search's hits, weighted by recency when asked.
    static func recalled(_ query: MemoryQuery, _ results: SearchResults, memories: [String: Memory]) -> MemoryResults {
        var hits = results.hits.compactMap { hit -> MemoryHit? in
            guard let memory = memories[hit.sourcePath] else { return nil }
            let weight = (query.recency?.weight(updated: memory.updatedAt, now: query.now) ?? 1) * MemoryTime.usefulWeight(memory.useful)
            return MemoryHit(rank: hit.rank, score: hit.score * weight, memory: memory)
        }
        if query.recency != nil || hits.contains(where: { $0.memory.useful > 0 }) {
            hits.sort { $0.score != $1.score ? $0.score > $1.score : $0.rank < $1.rank }
        }
        hits = Array(hits.prefix(query.limit))
        for i in hits.indices { hits[i].rank = i + 1 }
        return MemoryResults(query: query.text, mode: results.mode, embedder: results.embedder, hits: hits, degraded: results.degraded,
                             during: query.during)
    }

    /// The query with the window its words name — a date ("last week", "in March") or an event
    /// the scope's memories know ("since I moved": when the current home began) — unless it has
    /// `asOf` or a window already, or `timeFromWords` is off.
    func namingTime(_ query: MemoryQuery) async throws -> MemoryQuery {
        guard query.timeFromWords, query.asOf == nil, query.during == nil, !query.includeSuperseded else { return query }
        var query = query
        if let event = MemoryWindow.event(in: query.text) {
            if let start = try await eventStart(event.words, fact: event.fact, scopes: query.scopes) {
                query.during = TimeWindow(start: start, end: nil, told: event.told)
            }
        } else if let window = MemoryWindow.find(in: query.text, at: query.now) {
            query.during = TimeWindow(start: window.start, end: window.end, told: window.told)
        }
        return query
    }

    /// When an event began: the current memory of the fact it changed, else the memory that
    /// best matches its words.
    func eventStart(_ words: String, fact: String?, scopes: [MemoryScope]) async throws -> Date? {
        if let fact {
            let current = try await store.snapshot { try $0.memories(scopes: scopes, tags: [Tag("fact:" + fact)], includeSuperseded: false) }
            if let latest = current.max(by: { $0.validFrom < $1.validFrom }) { return latest.validFrom }
        }
        var lookup = MemoryQuery(words)
        lookup.scopes = scopes
        lookup.limit = 1
        lookup.includeSuperseded = true
        lookup.timeFromWords = false
        return try await recall(checked: lookup).hits.first?.memory.validFrom
    }

    /// Deletes every memory of a scope — superseded ones, every version, their vectors, keyword
    /// rows and cached embeddings (the caller scrubs the index files).
    func erase(_ scope: MemoryScope) async throws -> MemoryErasure {
        try await store.eraseMemories(scope: scope) { Data(SHA256.hash(data: Data($0.utf8))) }
    }

    /// Memories as JSON Lines, oldest first, superseded ones and history included.
    func exportMemories(scopes: [MemoryScope] = []) async throws -> String {
        let records = try await store.snapshot { snapshot in
            try snapshot.memories(scopes: scopes, tags: [], includeSuperseded: true).map { MemoryRecord(memory: $0, history: try snapshot.memoryHistory($0.id)) }
        }
        return try records.map { try MemoryArchive.encode($0) + "\n" }.joined()
    }

    /// Imports JSON Lines written by `exportMemories`, each memory in its own transaction with
    /// its id, times and history. The same memory already stored is left alone; a stored memory
    /// with the same id but other data is a conflict unless `replacing`. Bad lines are reported
    /// by number and the rest still import.
    func importMemories(_ text: String, options: MemoryOptions = MemoryOptions(), replacing: Bool = false,
                               embedder choice: EmbedderChoice? = nil) async throws -> MemoryImportReport {
        var report = MemoryImportReport()
        let parsed = MemoryArchive.decode(lines: text, options: options)
        let (embedder, record) = try await embedders.forWrites(choice)
        let batchSize = 64
        for start in stride(from: 0, to: parsed.count, by: batchSize) {
            let batch = parsed[start..<min(start + batchSize, parsed.count)]
            var good: [(line: Int, record: MemoryRecord)] = []
            for entry in batch {
                switch entry.result {
                case .success(let record): good.append((entry.line, record))
                case .failure(let error): report.failed.append(.init(line: entry.line, message: error.message))
                }
            }
            var vectors: [[Float]?] = good.map { _ in nil }
            if let embedder, !good.isEmpty {
                do {
                    let fresh = try await embedder.embed(good.map(\.record.memory.content), role: .passage)
                    guard fresh.count == good.count, fresh.allSatisfy({ $0.count == record.dimension }) else {
                        throw KBError(.embedding, "\(embedder.id) returned \(fresh.count) vectors for \(good.count) memories.")
                    }
                    vectors = fresh
                } catch {
                    for entry in good { report.failed.append(.init(line: entry.line, message: "\(error)")) }
                    continue
                }
            }
            for (entry, vector) in zip(good, vectors) {
                do {
                    let write = Self.memoryWrite(entry.record.memory, vector: vector, record: record)
                    switch try await store.importMemory(write, history: entry.record.history, replacing: replacing).0 {
                    case .added: report.added += 1
                    case .unchanged: report.unchanged += 1
                    case .replaced: report.replaced += 1
                    }
                } catch let error as KBError {
                    report.failed.append(.init(line: entry.line, message: error.message))
                }
            }
        }
        report.failed.sort { $0.line < $1.line }
        return report
    }
}


public import Foundation
public import KBCore
import KBRetrieval
import KBStore
public import KBMemory

/// A memory to add.
///
/// ```swift
/// let draft = MemoryDraft("Prefers metric units", scope: try .user("ada"), tags: ["preference"])
/// ```
public struct MemoryDraft: Sendable, Hashable {
    public var content: String
    public var title: String?
    public var tags: [Tag]
    /// The default is `global`.
    public var scope: MemoryScope

    public init(_ content: String, title: String? = nil, scope: MemoryScope = .global, tags: [Tag] = []) {
        self.content = content
        self.title = title
        self.scope = scope
        self.tags = tags
    }
}

/// A stored memory whose content is very close to one just added.
public struct NearDuplicate: Sendable, Hashable, Codable {
    public var id: String
    /// Cosine similarity of the two contents' embeddings.
    public var similarity: Float
    public var content: String
}

/// What `remember` did.
public struct RememberResult: Sendable, Hashable, Codable {
    /// The new memory, or the existing one that already holds the same content.
    public var memory: Memory
    /// False when an identical memory (after whitespace normalisation) was already in the scope:
    /// nothing was added.
    public var created: Bool
    /// Current memories of the scope whose embedding is at least the threshold close.
    public var nearDuplicates: [NearDuplicate]
    /// The memory marked as superseded by this one, if one was named.
    public var superseded: String?
}

/// Changes to a memory; nil fields stay as they are.
public struct MemoryChange: Sendable, Hashable {
    public var content: String?
    /// `.some(nil)` removes the title.
    public var title: String??
    /// Replaces the tag set.
    public var tags: [Tag]?

    public init(content: String? = nil, title: String?? = nil, tags: [Tag]? = nil) {
        self.content = content
        self.title = title
        self.tags = tags
    }
}

/// What to recall.
public struct MemoryQuery: Sendable, Hashable {
    public var text: String
    /// Scopes searched; empty means every scope. The default is empty.
    public var scopes: [MemoryScope] = []
    /// Every tag must be on a memory. The default is none.
    public var tags: [Tag] = []
    /// How many memories to return. The default is 8 (`RetrievalProfile.hits`).
    public var limit = RetrievalProfile.standard.hits
    /// The default is `.hybrid` (keyword ranking on an index without vectors).
    public var mode: SearchMode = .hybrid
    /// Prefer recent memories: scores are multiplied by 2^(−age / half-life). The default is none.
    public var recency: Recency?
    /// Also return memories superseded by newer ones. The default is false.
    public var includeSuperseded = false
    /// The time ages are measured from. The default is now.
    public var now = Date()

    public init(_ text: String) { self.text = text }
}

/// One recalled memory.
public struct MemoryHit: Sendable, Hashable, Codable {
    public var rank: Int
    /// The search score, times the recency weight when a half-life was given.
    public var score: Double
    public var memory: Memory
}

/// The recalled memories and how they were ranked.
public struct MemoryResults: Sendable, Hashable, Codable {
    public var query: String
    public var mode: SearchMode
    public var embedder: String?
    public var hits: [MemoryHit]
    /// Set when a hybrid recall fell back to keywords because the query could not be embedded.
    public var degraded: Degraded?
}

/// A memory and, when asked for, its earlier versions.
public struct MemoryWithHistory: Sendable, Hashable, Codable {
    public var memory: Memory
    public var history: [MemoryVersion]?
}

/// What `importMemories` did, line by line.
public struct MemoryImportReport: Sendable, Hashable, Codable {
    public struct Failure: Sendable, Hashable, Codable {
        public var line: Int
        public var message: String
    }
    public var added = 0
    public var unchanged = 0
    public var replaced = 0
    public var failed: [Failure] = []
}

extension KnowledgeBase {
    /// The embedder memory writes use: the index's own (loaded once), else `choice`, else the
    /// local model. nil for a keyword-only index.
    func memoryEmbedder(_ choice: EmbedderChoice?) async throws -> (embedder: (any Embedder)?, record: EmbedderRecord) {
        if let recorded = try await store.snapshot({ try $0.embedderRecord() }) {
            if let choice, choice.spec != recorded.spec {
                let (_, record) = try await embedder(choice)   // throws the mismatch message
                return (nil, record)
            }
            return recorded.hasVectors ? (try await embedders.recorded(recorded), recorded) : (nil, .none)
        }
        return try await embedder(choice)
    }

    func embedOne(_ text: String, with embedder: (any Embedder)?, record: EmbedderRecord) async throws -> [Float]? {
        guard let embedder else { return nil }
        let vectors = try await embedder.embed([text], role: .passage)
        guard vectors.count == 1, vectors[0].count == record.dimension else {
            throw KBError(.embedding, "\(embedder.id) returned \(vectors.count) vectors of \(vectors.first?.count ?? 0) dimensions for one memory.")
        }
        return vectors[0]
    }

    static func memoryWrite(_ memory: Memory, vector: [Float]?, record: EmbedderRecord) -> MemoryWrite {
        let data = Data(memory.content.utf8)
        let snippet = Snippet(ordinal: 0, text: memory.content, start: 0, end: memory.content.unicodeScalars.count, tags: memory.tags)
        let source = Source(
            path: memory.sourcePath, kind: .memory, title: memory.title ?? "", contentHash: contentHash(data),
            size: data.count, modifiedAt: memory.updatedAt, tags: memory.tags)
        return MemoryWrite(
            memory: memory, contentKey: MemoryRules.contentKey(memory.content),
            document: SourceDocument(source: source, snippets: [snippet]), vector: vector, embedder: record)
    }

    /// Adds a memory. Content identical (after whitespace normalisation) to a current memory of
    /// the scope returns that memory and adds nothing; content whose embedding is at least
    /// `options.nearDuplicateThreshold` close to others is added, and they are reported.
    ///
    /// ```swift
    /// let result = try await kb.remember(MemoryDraft("Allergic to peanuts", scope: try .user("ada")))
    /// ```
    ///
    /// - Parameters:
    ///   - draft: the content, title, tags and scope.
    ///   - options: size limit and near-duplicate threshold.
    ///   - superseding: a memory of the same scope that the new one replaces: it stays, marked as
    ///     superseded, and searches leave it out.
    ///   - choice: the embedder for a new index; an existing one keeps its own.
    public func remember(
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
        let (embedder, record) = try await memoryEmbedder(choice)
        let vector = try await embedOne(content, with: embedder, record: record)
        let now = MemoryArchive.roundedToMilliseconds(Date())
        let memory = Memory(id: UUID.random().uuidString.lowercased(), scope: draft.scope, title: title, content: content, tags: tags,
                            createdAt: now, updatedAt: now)
        switch try await store.addMemory(Self.memoryWrite(memory, vector: vector, record: record), superseding: supersedingID) {
        case .existing(let existing):
            let superseded = try await supersedingID.asyncMap { id in try await store.snapshot { try $0.memory(id) } }
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
            let superseded = try await supersedingID.asyncMap { id in try await store.snapshot { try $0.memory(id).id } }
            return RememberResult(memory: memory, created: true, nearDuplicates: near, superseded: superseded)
        }
    }

    /// The memory with this id, or a unique prefix of it (4 characters or more), and with
    /// `history` its earlier versions, oldest first (the current state is the memory itself) —
    /// if it is of a scope the caller may read.
    public func memory(_ id: String, history: Bool = false, as caller: Caller = .admin) async throws -> MemoryWithHistory {
        let id = try MemoryRules.idOrPrefix(id)
        return try await store.snapshot { snapshot in
            let memory = try snapshot.memory(id)
            try caller.requireScopes([memory.scope], writing: false)
            return MemoryWithHistory(memory: memory, history: history ? try snapshot.memoryHistory(memory.id) : nil)
        }
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
        guard change.content != nil || change.title != nil || change.tags != nil else {
            throw KBError(.invalidArgument, "Nothing to update: give new content, a title or tags.")
        }
        let current = try await memory(id).memory
        try authorize(current)
        var next = current
        if let content = change.content {
            let valid = try MemoryRules.validContent(content, options: options)
            // Content that differs only in whitespace is the same content (as for duplicates).
            if MemoryRules.contentKey(valid) != MemoryRules.contentKey(current.content) { next.content = valid }
        }
        if let title = change.title { next.title = try MemoryRules.validTitle(title) }
        if let tags = change.tags { next.tags = try MemoryRules.validTags(tags) }
        guard next.content != current.content || next.title != current.title || next.tags != current.tags else { return current }
        let (embedder, record) = try await memoryEmbedder(nil)
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
    public func recall(_ query: MemoryQuery) async throws -> MemoryResults {
        try Retriever.check(recallSearch(query))
        return try await recall(checked: query)
    }

    /// A recall whose query was checked (`RecallRequest.validated`, or `recall(_:)`).
    func recall(checked query: MemoryQuery) async throws -> MemoryResults {
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
            let weight = query.recency?.weight(updated: memory.updatedAt, now: query.now) ?? 1
            return MemoryHit(rank: hit.rank, score: hit.score * weight, memory: memory)
        }
        if query.recency != nil {
            hits.sort { $0.score != $1.score ? $0.score > $1.score : $0.rank < $1.rank }
        }
        hits = Array(hits.prefix(query.limit))
        for i in hits.indices { hits[i].rank = i + 1 }
        return MemoryResults(query: query.text, mode: results.mode, embedder: results.embedder, hits: hits, degraded: results.degraded)
    }

    /// Memories as JSON Lines, oldest first, superseded ones and history included.
    public func exportMemories(scopes: [MemoryScope] = []) async throws -> String {
        let records = try await store.snapshot { snapshot in
            try snapshot.memories(scopes: scopes, tags: [], includeSuperseded: true).map { MemoryRecord(memory: $0, history: try snapshot.memoryHistory($0.id)) }
        }
        return try records.map { try MemoryArchive.encode($0) + "\n" }.joined()
    }

    /// Imports JSON Lines written by `exportMemories`, each memory in its own transaction with
    /// its id, times and history. The same memory already stored is left alone; a stored memory
    /// with the same id but other data is a conflict unless `replacing`. Bad lines are reported
    /// by number and the rest still import.
    public func importMemories(_ text: String, options: MemoryOptions = MemoryOptions(), replacing: Bool = false,
                               embedder choice: EmbedderChoice? = nil) async throws -> MemoryImportReport {
        var report = MemoryImportReport()
        let parsed = MemoryArchive.decode(lines: text, options: options)
        let (embedder, record) = try await memoryEmbedder(choice)
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

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

public import Foundation
public import KBCore
public import KBIndex
import PostgresNIO

extension PostgresStore {
    // MARK: - Memories (the rules are MemoryTransaction's; each call is one write transaction)

    public func addMemory(_ write: MemoryWrite, superseding: String?) async throws -> MemoryAddOutcome {
        try await self.write { session, config in try PostgresMemoryTransaction(session: session, config: config).addMemory(write, superseding: superseding) }
    }

    public func updateMemory(_ write: MemoryWrite, expectedVersion: Int) async throws -> WriteEffect {
        try await self.write { session, config in
            try PostgresMemoryTransaction(session: session, config: config).updateMemory(write, expectedVersion: expectedVersion)
        }
    }

    public func deleteMemory(_ idOrPrefix: String) async throws -> (memory: Memory, effect: WriteEffect) {
        try await write { session, config in try PostgresMemoryTransaction(session: session, config: config).deleteMemory(idOrPrefix) }
    }

    public func importMemory(_ write: MemoryWrite, history: [MemoryVersion], replacing: Bool) async throws -> (MemoryImportOutcome, WriteEffect?) {
        try await self.write { session, config in
            try PostgresMemoryTransaction(session: session, config: config).importMemory(write, history: history, replacing: replacing)
        }
    }

    /// Vectors of the current memories of a scope from one embedder.
    static func memoryVectors(scope: MemoryScope, embedder: EmbedderRecord, excluding id: String?, _ session: PGSession) throws -> [(id: String, vector: [Float])] {
        try session.rows("""
            SELECT m.id, v.embedding::real[] FROM memories m
            JOIN snippets sn ON sn.source_id = m.source_id
            JOIN vectors v ON v.snippet_id = sn.id
            JOIN embedders e ON e.id = v.embedder_id
            WHERE m.scope = $1 AND m.superseded_by IS NULL AND e.name = $2 AND m.id != $3
            ORDER BY m.id COLLATE "C"
            """, .text(scope.name), .text(embedder.name), .text(id ?? "")).map { (try $0.get(0, String.self), try $0.get(1, [Float].self)) }
    }

    /// Writes the source, snippet, vector and memory row of `write`, in the caller's transaction.
    static func storeMemory(_ write: MemoryWrite, history: [MemoryVersion], config: String, _ session: PGSession) throws -> WriteEffect {
        if let vector = write.vector {
            guard vector.count == write.embedder.dimension else {
                throw KBError(.embedding, "\(write.embedder.name) returned a \(vector.count)-dim vector; the index holds \(write.embedder.dimension)-dim vectors.")
            }
        }
        try recordEmbedder(write.vector == nil ? .none : write.embedder, session)
        let effect = try replace(write.document, ingestedAt: write.memory.updatedAt, config: config, session)
        if let vector = write.vector { try insertVectors([(effect.insertedSnippets[0], vector)], embedder: write.embedder, session) }
        let m = write.memory
        if let other = try PostgresRows.current(contentKey: write.contentKey, scope: m.scope, session), other.id != m.id {
            throw KBError(.conflict,
                "The memory \(other.id) in scope \(m.scope) already holds this content. Update or delete that one instead.")
        }
        try session.execute("""
            INSERT INTO memories (id, source_id, scope, title, content, content_key, tags, created_at, updated_at, version, superseded_by)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            ON CONFLICT (id) DO UPDATE SET
                scope = excluded.scope, title = excluded.title, content = excluded.content, content_key = excluded.content_key,
                tags = excluded.tags, created_at = excluded.created_at, updated_at = excluded.updated_at,
                version = excluded.version, superseded_by = excluded.superseded_by
            """, .text(m.id), .int(effect.sourceID), .text(m.scope.name), .text(m.title), .text(m.content), .text(write.contentKey),
            .text(m.tags.map(\.name).joined(separator: "\n")), .double(m.createdAt.timeIntervalSince1970),
            .double(m.updatedAt.timeIntervalSince1970), .int(Int64(m.version)), .text(m.supersededBy))
        try session.execute("DELETE FROM memory_versions WHERE memory_id = $1", .text(m.id))
        for v in history {
            try session.execute("""
                INSERT INTO memory_versions (memory_id, version, title, content, tags, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
                """, .text(m.id), .int(Int64(v.version)), .text(v.title), .text(v.content),
                .text(v.tags.map(\.name).joined(separator: "\n")), .double(v.updatedAt.timeIntervalSince1970))
        }
        return effect
    }

    // MARK: - Bots

    public func createBot(_ bot: Bot) async throws {
        try await write { session, _ in
            if try session.value(Bool.self, "SELECT true FROM bots WHERE name = $1", .text(bot.name)) == true {
                throw KBError(.conflict, "A bot named \(bot.name) exists already. Change it with `kb bot update`, or pick another name.")
            }
            try Self.saveBot(bot, session)
        }
    }

    public func updateBot(named name: String, _ change: @Sendable (inout Bot) throws -> Void) async throws -> Bot {
        try await withoutActuallyEscaping(change) { change in
            try await write { session, _ in
                guard let row = try session.rows("SELECT * FROM bots WHERE name = $1", .text(name)).first else {
                    throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots.")
                }
                var bot = try PostgresRows.bot(row)
                try change(&bot)
                bot.updatedAt = Date()
                try Self.saveBot(bot, session)
                return try PostgresRows.bot(try session.rows("SELECT * FROM bots WHERE name = $1", .text(name)).first!)
            }
        }
    }

    static func saveBot(_ bot: Bot, _ session: PGSession) throws {
        let sources = String(decoding: try JSONEncoder().encode(bot.sources.map(\.description)), as: UTF8.self)
        try session.execute("""
            INSERT INTO bots (name, system_prompt, sources, memory_scopes, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (name) DO UPDATE SET system_prompt = excluded.system_prompt, sources = excluded.sources,
                memory_scopes = excluded.memory_scopes, updated_at = excluded.updated_at
            """, .text(bot.name), .text(bot.systemPrompt), .text(sources), .text(bot.memoryScopes.joined(separator: "\n")),
            .double(bot.createdAt.timeIntervalSince1970), .double(bot.updatedAt.timeIntervalSince1970))
    }

    public func deleteBot(named name: String) async throws {
        try await write { session, _ in
            guard try session.rows("DELETE FROM bots WHERE name = $1 RETURNING name", .text(name)).count > 0 else {
                throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots.")
            }
        }
    }
}

/// The steps of memory writes in one PostgreSQL write transaction.
struct PostgresMemoryTransaction: MemoryTransaction {
    let session: PGSession
    let config: String

    func resolveMemoryID(_ idOrPrefix: String) throws -> String { try PostgresRows.resolveMemoryID(idOrPrefix, session) }
    func fetchMemory(id: String) throws -> Memory? { try PostgresRows.fetchMemory(id: id, session) }
    func currentMemory(contentKey: String, scope: MemoryScope) throws -> Memory? { try PostgresRows.current(contentKey: contentKey, scope: scope, session) }
    func memoryHistory(_ id: String) throws -> [MemoryVersion] { try PostgresRows.history(id, session) }

    func memoriesSuperseded(by id: String) throws -> [(id: String, scope: MemoryScope, contentKey: String)] {
        try session.rows("SELECT id, scope, content_key FROM memories WHERE superseded_by = $1 ORDER BY id COLLATE \"C\"", .text(id))
            .map { (id: try $0.get(0, String.self), scope: try MemoryScope(try $0.get(1, String.self)), contentKey: try $0.get(2, String.self)) }
    }

    func setSupersededBy(_ newer: String?, of id: String) throws {
        try session.execute("UPDATE memories SET superseded_by = $1 WHERE id = $2", .text(newer), .text(id))
    }

    func memoryVectors(scope: MemoryScope, embedder: EmbedderRecord, excluding id: String?) throws -> [(id: String, vector: [Float])] {
        try PostgresStore.memoryVectors(scope: scope, embedder: embedder, excluding: id, session)
    }

    func storeMemory(_ write: MemoryWrite, history: [MemoryVersion]) throws -> WriteEffect {
        try PostgresStore.storeMemory(write, history: history, config: config, session)
    }

    func deleteMemorySource(_ memory: Memory) throws -> [Int64] {
        let removed = try PostgresRows.snippetIDs(ofPath: memory.sourcePath, session)
        try session.execute("DELETE FROM sources WHERE path = $1", .text(memory.sourcePath))
        return removed
    }

    func finishDelete() throws -> Int64 {
        let generation = try PostgresRows.bumpGeneration(session)
        try PostgresStore.deleteUnusedTags(session)
        return generation
    }
}

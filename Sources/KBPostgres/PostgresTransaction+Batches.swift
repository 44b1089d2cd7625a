import Foundation
import KBCore
import KBStore

/// Writes of many sources or memories at once, for a copy into a new index (`kb export`): the
/// same rules as `replace` and `importMemory` one at a time, in a handful of statements for the
/// whole batch. A batch that touches anything stored already (a path or a memory id) is written
/// one at a time, as the rules say.
extension PostgresTransaction {
    /// Sources copied from another index, each with its ingestion time.
    func copyIn(_ documents: [(document: SourceDocument, vectors: [[Float]]?, ingestedAt: Date)], embedder: EmbedderRecord) throws -> [WriteEffect] {
        let paths = documents.map(\.document.source.path)
        guard Set(paths).count == paths.count, try !anyStored(paths: paths, memoryIDs: []) else {
            return try documents.map { try replace($0.document, vectors: $0.vectors, embedder: embedder, ingestedAt: $0.ingestedAt) }
        }
        for entry in documents { try embedder.check(entry.vectors, for: entry.document) }
        for keywordOnly in Set(documents.map { $0.vectors == nil }).sorted(by: { !$0 && $1 }) {
            try recordEmbedder(keywordOnly ? .none : embedder)
        }
        let sourceIDs = try insertSources(documents.map { ($0.document.source, $0.ingestedAt) })
        let snippetIDs = try insertContents(Array(zip(documents.map(\.document), sourceIDs)))
        var vectors: [(id: Int64, vector: [Float])] = []
        for (ids, entry) in zip(snippetIDs, documents) {
            if let given = entry.vectors { vectors += zip(ids, given).map { (id: $0, vector: $1) } }
        }
        if !vectors.isEmpty { try saveVectors(vectors, embedder: embedder) }
        let generation = try bumpGeneration()
        return zip(sourceIDs, snippetIDs).map { sourceID, ids in
            var effect = WriteEffect(sourceID: sourceID)
            effect.insertedSnippets = ids
            effect.generation = generation
            return effect
        }
    }

    /// Memories imported with their histories (`MemoryTransaction.importMemory`'s rules: a memory
    /// whose content another current memory of its scope holds is a conflict).
    func importMemories(_ entries: [(write: MemoryWrite, history: [MemoryVersion])], replacing: Bool) throws -> [(MemoryImportOutcome, WriteEffect?)] {
        let ids = entries.map(\.write.memory.id), paths = entries.map(\.write.document.source.path)
        guard Set(ids).count == ids.count, Set(paths).count == paths.count, try !anyStored(paths: paths, memoryIDs: ids) else {
            return try entries.map { try importMemory($0.write, history: $0.history, replacing: replacing) }
        }
        // Content held by a current memory: stored ones, and those written before in the batch.
        var current: [String: String] = [:]
        for row in try session.rows("""
            SELECT m.scope, m.content_key, m.id FROM memories m JOIN unnest($1::text[], $2::text[]) AS u(scope, content_key)
                ON m.scope = u.scope AND m.content_key = u.content_key
            WHERE m.superseded_by IS NULL AND m.valid_to IS NULL
            """, .texts(entries.map(\.write.memory.scope.name)), .texts(entries.map(\.write.contentKey))) {
            current[try row.get(0, String.self) + "\u{1}" + row.get(1, String.self)] = try row.get(2, String.self)
        }
        for entry in entries {
            let memory = entry.write.memory, key = memory.scope.name + "\u{1}" + entry.write.contentKey
            if let other = current[key], other != memory.id {
                throw KBError(.conflict, "The memory \(other) in scope \(memory.scope) already holds this content. Update or delete that one instead.")
            }
            if memory.supersededBy == nil, memory.validTo == nil { current[key] = memory.id }
            try entry.write.embedder.check(entry.write.vector.map { [$0] }, for: entry.write.document)
        }
        var recorded = Set<String>()
        for entry in entries {
            let choice = entry.write.vector == nil ? EmbedderRecord.none : entry.write.embedder
            if recorded.insert(choice.name).inserted { try recordEmbedder(choice) }
        }
        let sourceIDs = try insertSources(entries.map { ($0.write.document.source, $0.write.memory.updatedAt) })
        let snippetIDs = try insertContents(Array(zip(entries.map(\.write.document), sourceIDs)))
        var vectors: [String: (embedder: EmbedderRecord, rows: [(id: Int64, vector: [Float])])] = [:]
        for (entry, ids) in zip(entries, snippetIDs) {
            guard let vector = entry.write.vector, let id = ids.first else { continue }
            vectors[entry.write.embedder.name, default: (entry.write.embedder, [])].rows.append((id, vector))
        }
        for (embedder, rows) in vectors.values { try saveVectors(rows, embedder: embedder) }
        try insertMemoryRows(entries.map(\.write), sourceIDs: sourceIDs)
        let versions = entries.flatMap { entry in entry.history.map { (entry.write.memory.id, $0) } }
        if !versions.isEmpty {
            try session.execute("""
                INSERT INTO memory_versions (memory_id, version, title, content, tags, updated_at)
                SELECT m, v, NULLIF(t, chr(1)), c, g, u FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::float8[])
                    AS x(m, v, t, c, g, u)
                """, .texts(versions.map(\.0)), .ints(versions.map { Int64($0.1.version) }), .texts(versions.map { $0.1.title ?? "\u{1}" }),
                .texts(versions.map(\.1.content)), .texts(versions.map { StoredForms.text($0.1.tags) }),
                .doubles(versions.map { $0.1.updatedAt.timeIntervalSince1970 }))
        }
        let generation = try bumpGeneration()
        return zip(sourceIDs, snippetIDs).map { sourceID, ids in
            var effect = WriteEffect(sourceID: sourceID)
            effect.insertedSnippets = ids
            effect.generation = generation
            return (.added, effect)
        }
    }

    /// Whether any of these source paths or memory ids is stored.
    private func anyStored(paths: [String], memoryIDs: [String]) throws -> Bool {
        try session.value(Bool.self, """
            SELECT EXISTS (SELECT 1 FROM sources WHERE path = ANY ($1)) OR EXISTS (SELECT 1 FROM memories WHERE id = ANY ($2))
            """, .texts(paths), .texts(memoryIDs)) ?? true
    }

    /// New sources (no source has their paths); their ids, in order.
    private func insertSources(_ sources: [(source: Source, ingestedAt: Date)]) throws -> [Int64] {
        guard !sources.isEmpty else { return [] }
        // Absent values go as chr(1) and NaN (arrays of one type) and are stored as NULL.
        let rows = try session.rows("""
            INSERT INTO sources (path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr, owner)
            SELECT p, k, t, h, s, NULLIF(m, 'NaN'), i, w, NULLIF(o, chr(1)), NULLIF(n, chr(1))
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::float8[], $8::text[], $9::text[], $10::text[])
                AS x(p, k, t, h, s, m, i, w, o, n)
            RETURNING id, path
            """, .texts(sources.map(\.source.path)), .texts(sources.map(\.source.kind.rawValue)), .texts(sources.map(\.source.title)),
            .texts(sources.map(\.source.contentHash)), .ints(sources.map { Int64($0.source.size) }),
            .doubles(sources.map { $0.source.modifiedAt?.timeIntervalSince1970 ?? .nan }), .doubles(sources.map { $0.ingestedAt.timeIntervalSince1970 }),
            .texts(sources.map { $0.source.keywords.joined(separator: "\n") }), .texts(sources.map { $0.source.ocr ?? "\u{1}" }),
            .texts(sources.map { $0.source.owner ?? "\u{1}" }))
        var idByPath: [String: Int64] = [:]
        for row in rows { idByPath[try row.get(1, String.self)] = try row.get(0, Int64.self) }
        return try sources.map { entry in
            guard let id = idByPath[entry.source.path] else { throw KBError(.database, "The source \(entry.source.path) was not stored.") }
            return id
        }
    }

    /// Memories' rows (as `saveMemoryRow` writes one), for new memories.
    private func insertMemoryRows(_ writes: [MemoryWrite], sourceIDs: [Int64]) throws {
        let memories = writes.map(\.memory)
        try session.execute("""
            INSERT INTO memories (id, source_id, scope, title, content, content_key, tags, created_at, updated_at, version, superseded_by,
                                  valid_from, valid_to, expires_at, flagged_wrong, useful)
            SELECT id, s, sc, NULLIF(t, chr(1)), c, k, g, ca, ua, v, NULLIF(sb, chr(1)), vf, NULLIF(vt, 'NaN'), NULLIF(e, 'NaN'), f, u
            FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::float8[], $9::float8[],
                        $10::bigint[], $11::text[], $12::float8[], $13::float8[], $14::float8[], $15::bigint[], $16::bigint[])
                AS x(id, s, sc, t, c, k, g, ca, ua, v, sb, vf, vt, e, f, u)
            """, .texts(memories.map(\.id)), .ints(sourceIDs), .texts(memories.map(\.scope.name)), .texts(memories.map { $0.title ?? "\u{1}" }),
            .texts(memories.map(\.content)), .texts(writes.map(\.contentKey)), .texts(memories.map { StoredForms.text($0.tags) }),
            .doubles(memories.map { $0.createdAt.timeIntervalSince1970 }), .doubles(memories.map { $0.updatedAt.timeIntervalSince1970 }),
            .ints(memories.map { Int64($0.version) }), .texts(memories.map { $0.supersededBy ?? "\u{1}" }),
            .doubles(memories.map { $0.validFrom.timeIntervalSince1970 }), .doubles(memories.map { $0.validTo?.timeIntervalSince1970 ?? .nan }),
            .doubles(memories.map { $0.expiresAt?.timeIntervalSince1970 ?? .nan }), .ints(memories.map { $0.flaggedWrong ? 1 : 0 }),
            .ints(memories.map { Int64($0.useful) }))
    }
}

public import Foundation
public import KBCore
public import KBIndex
import PostgresNIO

extension PostgresStore {
    // MARK: - Sources

    @discardableResult
    public func replace(_ document: SourceDocument, vectors: [[Float]]?, embedder: EmbedderRecord, ingestedAt: Date) async throws -> WriteEffect {
        try embedder.check(vectors, for: document)
        return try await write { session, config in
            try Self.recordEmbedder(vectors == nil ? .none : embedder, session)
            let effect = try Self.replace(document, ingestedAt: ingestedAt, config: config, session)
            if let vectors { try Self.insertVectors(zip(effect.insertedSnippets, vectors), embedder: embedder, session) }
            return effect
        }
    }

    static func replace(_ document: SourceDocument, ingestedAt: Date, config: String, _ session: PGSession) throws -> WriteEffect {
        let source = document.source
        let keywords = source.keywords.joined(separator: "\n")
        guard let sourceID = try session.value(Int64.self, """
            INSERT INTO sources (path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (path) DO UPDATE SET
                kind = excluded.kind, title = excluded.title, content_hash = excluded.content_hash,
                size = excluded.size, modified_at = excluded.modified_at,
                ingested_at = excluded.ingested_at, keywords = excluded.keywords, ocr = excluded.ocr
            RETURNING id
            """, .text(source.path), .text(source.kind.rawValue), .text(source.title), .text(source.contentHash),
            .int(Int64(source.size)), .double(source.modifiedAt?.timeIntervalSince1970), .double(ingestedAt.timeIntervalSince1970),
            .text(keywords), .text(source.ocr)) else {
            throw KBError(.database, "The source \(source.path) vanished while it was being written.")
        }
        var effect = WriteEffect(sourceID: sourceID)
        effect.removedSnippets = try session.rows("DELETE FROM snippets WHERE source_id = $1 RETURNING id", .int(sourceID))
            .map { try $0.get(0, Int64.self) }
        try session.execute("DELETE FROM source_tags WHERE source_id = $1", .int(sourceID))

        let tagIDs = try Self.tagIDs(Set(source.tags + document.snippets.flatMap(\.tags)), session)
        if !source.tags.isEmpty {
            try session.execute("INSERT INTO source_tags (source_id, tag_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING",
                                .int(sourceID), .ints(Array(Set(source.tags.compactMap { tagIDs[$0] }))))
        }
        guard !document.snippets.isEmpty else {
            effect.generation = try PostgresRows.bumpGeneration(session)
            return effect
        }
        // All snippets in one statement, in ordinal order (ids come back in the same order).
        let snippets = document.snippets
        var sql = SQL()
        let fts = PostgresRows.ftsExpression(config: config, text: "u.text", title: sql.bind(.text(source.title)),
                                             heading: "u.heading_path", keywords: sql.bind(.text(keywords)))
        let sourceParameter = sql.bind(.int(sourceID))
        // Labels, pages and OCR confidences absent are sent as chr(1) and -1 (arrays of one type),
        // and stored as NULL.
        sql += """
            INSERT INTO snippets (source_id, ordinal, text, start_offset, end_offset, heading_path,
                                  page_start, page_end, page_label_start, page_label_end, ocr_confidence, fts)
            SELECT \(sourceParameter), u.ordinal, u.text, u.start_offset, u.end_offset, u.heading_path,
                   NULLIF(u.page_start, -1), NULLIF(u.page_end, -1), NULLIF(u.label_start, chr(1)), NULLIF(u.label_end, chr(1)),
                   NULLIF(u.ocr_confidence, -1), \(fts)
            FROM unnest(\(sql.bind(.ints(snippets.map { Int64($0.ordinal) })))::bigint[], \(sql.bind(.texts(snippets.map(\.text))))::text[],
                        \(sql.bind(.ints(snippets.map { Int64($0.start) })))::bigint[], \(sql.bind(.ints(snippets.map { Int64($0.end) })))::bigint[],
                        \(sql.bind(.texts(snippets.map(\.headingPathString))))::text[],
                        \(sql.bind(.ints(snippets.map { Int64($0.pages?.start ?? -1) })))::bigint[],
                        \(sql.bind(.ints(snippets.map { Int64($0.pages?.end ?? -1) })))::bigint[],
                        \(sql.bind(.texts(snippets.map { $0.pages?.startLabel ?? "\u{1}" })))::text[],
                        \(sql.bind(.texts(snippets.map { $0.pages?.endLabel ?? "\u{1}" })))::text[],
                        \(sql.bind(.floats(snippets.map { Float($0.ocr?.confidence ?? -1) })))::real[])
                 AS u(ordinal, text, start_offset, end_offset, heading_path, page_start, page_end, label_start, label_end, ocr_confidence)
            ORDER BY u.ordinal
            RETURNING id, ordinal
            """
        let inserted = try session.rows(sql).map { (id: try $0.get(0, Int64.self), ordinal: Int(try $0.get(1, Int32.self))) }
        let idByOrdinal = Dictionary(uniqueKeysWithValues: inserted.map { ($0.ordinal, $0.id) })
        effect.insertedSnippets = snippets.map { idByOrdinal[$0.ordinal]! }
        var pairs: [(Int64, Int64)] = []
        for snippet in snippets {
            for tag in Set(snippet.tags) { if let tagID = tagIDs[tag] { pairs.append((idByOrdinal[snippet.ordinal]!, tagID)) } }
        }
        if !pairs.isEmpty {
            try session.execute("""
                INSERT INTO snippet_tags (snippet_id, tag_id) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING
                """, .ints(pairs.map(\.0)), .ints(pairs.map(\.1)))
        }
        effect.generation = try PostgresRows.bumpGeneration(session)
        return effect
    }

    static func tagIDs(_ tags: Set<Tag>, _ session: PGSession) throws -> [Tag: Int64] {
        guard !tags.isEmpty else { return [:] }
        let names = tags.map(\.name).sorted()
        try session.execute("INSERT INTO tags (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING", .texts(names))
        let ids = try session.rows("SELECT name, id FROM tags WHERE name = ANY ($1)", .texts(names))
            .reduce(into: [String: Int64]()) { $0[try $1.get(0, String.self)] = try $1.get(1, Int64.self) }
        return tags.reduce(into: [Tag: Int64]()) { result, tag in result[tag] = ids[tag.name] }
    }

    public func removeSources(matching paths: [String]) async throws -> (paths: [String], effect: WriteEffect) {
        try await write { session, _ in
            var removed: [String] = []
            var effect = WriteEffect()
            for path in paths {
                let folder = path.folderPrefix
                let matches = try session.rows("SELECT path FROM sources WHERE path = $1 OR starts_with(path, $2) ORDER BY path COLLATE \"C\"",
                                               .text(path), .text(folder)).map { try $0.get(0, String.self) }
                for match in matches where !removed.contains(match) {
                    effect.removedSnippets += try PostgresRows.snippetIDs(ofPath: match, session)
                    try session.execute("DELETE FROM sources WHERE path = $1", .text(match))
                    removed.append(match)
                }
            }
            if !removed.isEmpty { effect.generation = try PostgresRows.bumpGeneration(session) }
            try Self.deleteUnusedTags(session)
            return (removed, effect)
        }
    }

    public func removeSources(exactly paths: [String]) async throws -> (count: Int, effect: WriteEffect) {
        try await write { session, _ in
            var effect = WriteEffect()
            let ids = try session.rows("""
                SELECT sn.id FROM snippets sn JOIN sources so ON so.id = sn.source_id WHERE so.path = ANY ($1)
                """, .texts(paths)).map { try $0.get(0, Int64.self) }
            effect.removedSnippets = ids
            let count = try session.rows("DELETE FROM sources WHERE path = ANY ($1) RETURNING id", .texts(paths)).count
            if count > 0 { effect.generation = try PostgresRows.bumpGeneration(session) }
            try Self.deleteUnusedTags(session)
            return (count, effect)
        }
    }

    /// The text search configuration is chosen when the index is made (`KB_TEXT_SEARCH`); kb does
    /// not rebuild a PostgreSQL index's keyword data for another one.
    @discardableResult
    public func setKeywordLanguage(_ language: KeywordLanguage) async throws -> Bool {
        let config = try await textSearchConfig()
        guard Self.keywordLanguage(textSearchConfig: config) != language else { return false }
        throw KBError(.unsupportedMode,
            "This PostgreSQL index searches keywords with the '\(config)' text search configuration, chosen when it was made. "
          + "Make a new index with KB_TEXT_SEARCH=\(Self.textSearchConfig(for: language)) for \(language.rawValue) keywords.")
    }

    /// The keyword language a text search configuration stands for.
    static func keywordLanguage(textSearchConfig config: String) -> KeywordLanguage {
        switch config {
        case "english": .english
        case "russian": .russian
        case "arabic": .arabic
        default: .simple
        }
    }

    /// The text search configuration closest to a keyword language (PostgreSQL has no Ukrainian stemmer).
    static func textSearchConfig(for language: KeywordLanguage) -> String {
        switch language {
        case .english: "english"
        case .russian: "russian"
        case .arabic: "arabic"
        case .ukrainian, .simple: "simple"
        }
    }

    public func cacheOCRPage(_ page: OCRPage, contentHash: String, key: String) async throws {
        try await write { session, _ in
            try session.execute("""
                INSERT INTO ocr_pages (content_hash, settings, page, text, confidence, words, quarter_turns) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (content_hash, settings, page) DO UPDATE SET
                    text = excluded.text, confidence = excluded.confidence, words = excluded.words, quarter_turns = excluded.quarter_turns
                """, .text(contentHash), .text(key), .int(Int64(page.page)), .text(page.text), .double(page.confidence),
                .int(Int64(page.words)), .int(Int64(page.quarterTurns)))
        }
    }

    public func deleteUnusedTags() async throws {
        try await write { session, _ in try Self.deleteUnusedTags(session) }
    }

    static func deleteUnusedTags(_ session: PGSession) throws {
        try session.execute("""
            DELETE FROM tags t WHERE NOT EXISTS (SELECT 1 FROM source_tags st WHERE st.tag_id = t.id)
                                 AND NOT EXISTS (SELECT 1 FROM snippet_tags st WHERE st.tag_id = t.id)
            """)
    }

    // MARK: - Embedders and vectors

    /// Records the index's embedder, unless one is recorded already (then it must be the same).
    static func recordEmbedder(_ record: EmbedderRecord, _ session: PGSession) throws {
        if let existing = try PostgresRows.embedderRecord(session) {
            guard existing.name == record.name, existing.dimension == record.dimension else {
                throw KBError(.embedderMismatch, SQLiteStore.mismatchMessage(index: existing, requested: record))
            }
            return
        }
        try setEmbedder(record, session)
    }

    static func setEmbedder(_ record: EmbedderRecord, _ session: PGSession) throws {
        for (key, value) in [("embedder", record.name), ("dimension", String(record.dimension)), ("embedder_spec", record.spec)] {
            try PostgresSchema.setMeta(key, value, session)
        }
    }

    static func embedderID(_ record: EmbedderRecord, _ session: PGSession) throws -> Int64 {
        try session.execute("INSERT INTO embedders (name, dimension, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
                            .text(record.name), .int(Int64(record.dimension)), .double(Date().timeIntervalSince1970))
        return try session.value(Int64.self, "SELECT id FROM embedders WHERE name = $1", .text(record.name))!
    }

    /// Inserts (or replaces) vectors of existing snippets; rows whose snippet is gone are skipped.
    static func insertVectors(_ entries: some Sequence<(Int64, [Float])>, embedder: EmbedderRecord, _ session: PGSession) throws {
        let entries = Array(entries)
        guard !entries.isEmpty else { return }
        let embedderID = try embedderID(embedder, session)
        for start in stride(from: 0, to: entries.count, by: 1_000) {
            let part = entries[start..<min(start + 1_000, entries.count)]
            try session.execute("""
                INSERT INTO vectors (snippet_id, embedder_id, embedding)
                SELECT u.id, $1, u.v::vector FROM unnest($2::bigint[], $3::text[]) AS u(id, v)
                WHERE EXISTS (SELECT 1 FROM snippets sn WHERE sn.id = u.id)
                ON CONFLICT (snippet_id, embedder_id) DO UPDATE SET embedding = excluded.embedding
                """, .int(embedderID), .ints(part.map(\.0)), .texts(part.map { PostgresRows.vectorLiteral($0.1) }))
        }
    }

    public func cacheVectors(embedder: EmbedderRecord, _ entries: [(hash: Data, vector: [Float])], tokens: Int) async throws {
        let hashes = entries.map { PostgresRows.hex($0.hash) }
        let blobs = entries.map { PostgresRows.hex(VectorCoding.encode($0.vector)) }
        try await write { session, _ in
            if !hashes.isEmpty {
                try session.execute("""
                    INSERT INTO embedding_cache (embedder, text_hash, data)
                    SELECT $1, decode(h, 'hex'), decode(d, 'hex') FROM unnest($2::text[], $3::text[]) AS u(h, d)
                    ON CONFLICT (embedder, text_hash) DO UPDATE SET data = excluded.data
                    """, .text(embedder.name), .texts(hashes), .texts(blobs))
            }
            if tokens > 0 {
                try session.execute("""
                    INSERT INTO embedder_usage (embedder, tokens) VALUES ($1, $2)
                    ON CONFLICT (embedder) DO UPDATE SET tokens = embedder_usage.tokens + excluded.tokens
                    """, .text(embedder.name), .int(Int64(tokens)))
            }
        }
    }

    public func addVectors(embedder: EmbedderRecord, _ entries: [(id: Int64, vector: [Float])]) async throws {
        if let bad = entries.first(where: { $0.vector.count != embedder.dimension }) {
            throw KBError(.embedding, "\(embedder.name) returned a \(bad.vector.count)-dim vector; it gave \(embedder.dimension)-dim vectors before.")
        }
        let pairs = entries.map { ($0.id, $0.vector) }
        try await write { session, _ in try Self.insertVectors(pairs, embedder: embedder, session) }
    }

    public func switchEmbedder(to embedder: EmbedderRecord, dropOthers: Bool) async throws -> Bool {
        try await write { session, _ in
            let embedderID = try Self.embedderID(embedder, session)
            let missing = try session.value(Int64.self, """
                SELECT count(*) FROM snippets sn WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.snippet_id = sn.id AND v.embedder_id = $1)
                """, .int(embedderID)) ?? 0
            guard missing == 0 else { return false }
            try Self.setEmbedder(embedder, session)
            if dropOthers {
                try session.execute("DELETE FROM vectors WHERE embedder_id != $1", .int(embedderID))
                try session.execute("DELETE FROM embedders WHERE id != $1", .int(embedderID))
            }
            try PostgresRows.bumpGeneration(session)
            return true
        }
    }
}

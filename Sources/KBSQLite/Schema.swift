import Foundation
import GRDB

/// The index file's schema: named, forward-only migrations. Never edit a shipped migration;
/// add a new one.
enum Schema {
    /// The schema version an up-to-date index records in `kb_meta`.
    static var version: Int { migrationNames.count }
    static let migrationNames = ["v1-sources-snippets-tags-fts", "v2-embedders-vectors", "v3-memories", "v4-bots", "v5-embedding-cache",
                                 "v6-bot-sources-json", "v7-ocr", "v8-uploads-jobs-owners",
                                 "v9-request-log", "v10-formats-weights", "v11-conversations", "v12-memory-time",
                                 "v13-memory-validity-indexes", "v14-search-log", "v15-page-starts"]

    /// The trigger that indexes a new snippet's words (with its source's title and keywords):
    /// made in v1, and again in v7 and v10, when `sources` is rebuilt.
    static let keywordInsertTrigger = """
        CREATE TRIGGER snippets_after_insert AFTER INSERT ON snippets BEGIN
            INSERT INTO snippets_fts (rowid, text, title, heading_path, keywords)
            SELECT new.id, new.text, s.title, new.heading_path, s.keywords
            FROM sources s WHERE s.id = new.source_id;
        END;
        """

    /// The triggers that drop recognised pages with the last source of their file hash (v7, v10).
    static let ocrPageTriggers = """
        CREATE TRIGGER sources_drop_ocr_pages_after_delete AFTER DELETE ON sources BEGIN
            DELETE FROM ocr_pages WHERE content_hash = old.content_hash
                AND NOT EXISTS (SELECT 1 FROM sources WHERE content_hash = old.content_hash);
        END;
        CREATE TRIGGER sources_drop_ocr_pages_after_update AFTER UPDATE OF content_hash ON sources
        WHEN old.content_hash != new.content_hash BEGIN
            DELETE FROM ocr_pages WHERE content_hash = old.content_hash
                AND NOT EXISTS (SELECT 1 FROM sources WHERE content_hash = old.content_hash);
        END;
        """

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(migrationNames[0]) { db in
            try db.execute(sql: """
                CREATE TABLE kb_meta (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                ) WITHOUT ROWID;

                CREATE TABLE sources (
                    id INTEGER PRIMARY KEY,
                    path TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL CHECK (kind IN ('note', 'pdf', 'memory')),
                    title TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    modified_at REAL,
                    ingested_at REAL NOT NULL,
                    keywords TEXT NOT NULL DEFAULT ''
                );
                CREATE INDEX sources_by_kind ON sources(kind);

                CREATE TABLE snippets (
                    id INTEGER PRIMARY KEY,
                    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
                    ordinal INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    start_offset INTEGER NOT NULL,
                    end_offset INTEGER NOT NULL,
                    heading_path TEXT NOT NULL DEFAULT '',
                    page_start INTEGER,
                    page_end INTEGER,
                    page_label_start TEXT,
                    page_label_end TEXT,
                    UNIQUE (source_id, ordinal)
                );

                CREATE TABLE tags (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE
                );
                CREATE TABLE source_tags (
                    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
                    tag_id INTEGER NOT NULL REFERENCES tags(id),
                    PRIMARY KEY (source_id, tag_id)
                ) WITHOUT ROWID;
                CREATE TABLE snippet_tags (
                    snippet_id INTEGER NOT NULL REFERENCES snippets(id) ON DELETE CASCADE,
                    tag_id INTEGER NOT NULL REFERENCES tags(id),
                    PRIMARY KEY (tag_id, snippet_id)
                ) WITHOUT ROWID;
                CREATE INDEX snippet_tags_by_snippet ON snippet_tags(snippet_id);

                -- Keyword index over snippet text, source title, heading path and source keywords
                -- (aliases, description). Kept in sync by triggers, inside the writing transaction.
                CREATE VIRTUAL TABLE snippets_fts USING fts5(
                    text, title, heading_path, keywords,
                    tokenize = 'porter unicode61 remove_diacritics 2'
                );
                \(keywordInsertTrigger)
                CREATE TRIGGER snippets_after_delete AFTER DELETE ON snippets BEGIN
                    DELETE FROM snippets_fts WHERE rowid = old.id;
                END;
                """)
        }
        migrator.registerMigration(migrationNames[1]) { db in
            try db.execute(sql: """
                -- Every embedder that has written vectors into this index. Never holds API keys.
                CREATE TABLE embedders (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    dimension INTEGER NOT NULL CHECK (dimension > 0),
                    created_at REAL NOT NULL
                );
                -- One vector per snippet and embedder: little-endian float32 × dimension.
                CREATE TABLE vectors (
                    snippet_id INTEGER NOT NULL REFERENCES snippets(id) ON DELETE CASCADE,
                    embedder_id INTEGER NOT NULL REFERENCES embedders(id),
                    data BLOB NOT NULL,
                    PRIMARY KEY (snippet_id, embedder_id)
                );
                """)
        }
        migrator.registerMigration(migrationNames[2]) { db in
            try db.execute(sql: """
                -- A memory is a source of kind 'memory' (path 'memory:ID') with one snippet; this
                -- table adds what only memories have. Times are Unix seconds, rounded to milliseconds.
                CREATE TABLE memories (
                    id TEXT PRIMARY KEY NOT NULL,
                    source_id INTEGER NOT NULL UNIQUE REFERENCES sources(id) ON DELETE CASCADE,
                    scope TEXT NOT NULL,
                    title TEXT,
                    content TEXT NOT NULL,
                    content_key TEXT NOT NULL,
                    tags TEXT NOT NULL DEFAULT '',
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
                    superseded_by TEXT
                );
                CREATE INDEX memories_by_scope ON memories(scope, created_at);
                -- One current memory per content in a scope (whitespace-normalised).
                CREATE UNIQUE INDEX memories_by_content ON memories(scope, content_key) WHERE superseded_by IS NULL;
                CREATE INDEX memories_by_superseding ON memories(superseded_by) WHERE superseded_by IS NOT NULL;

                -- Earlier versions of updated memories.
                CREATE TABLE memory_versions (
                    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
                    version INTEGER NOT NULL,
                    title TEXT,
                    content TEXT NOT NULL,
                    tags TEXT NOT NULL DEFAULT '',
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (memory_id, version)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration(migrationNames[3]) { db in
            try db.execute(sql: """
                -- Bots: a system prompt, knowledge selectors (one per line: a path, tag:NAME or
                -- kind:KIND) and memory scope templates (one per line, e.g. user:{user}).
                CREATE TABLE bots (
                    name TEXT PRIMARY KEY NOT NULL,
                    system_prompt TEXT NOT NULL,
                    sources TEXT NOT NULL DEFAULT '',
                    memory_scopes TEXT NOT NULL DEFAULT '',
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration(migrationNames[4]) { db in
            try db.execute(sql: """
                -- Vectors of remote embedders by (embedder, SHA-256 of the text), so re-ingesting,
                -- re-chunking or switching back never pays for the same text twice.
                CREATE TABLE embedding_cache (
                    embedder TEXT NOT NULL,
                    text_hash BLOB NOT NULL,
                    data BLOB NOT NULL,
                    PRIMARY KEY (embedder, text_hash)
                ) WITHOUT ROWID;
                -- Tokens each embedder reported using.
                CREATE TABLE embedder_usage (
                    embedder TEXT PRIMARY KEY NOT NULL,
                    tokens INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration(migrationNames[5]) { db in
            // A bot's sources as a JSON array of strings, not one per line: a path may hold a line break.
            for row in try Row.fetchAll(db, sql: "SELECT name, sources FROM bots") {
                let sources: String = row["sources"]
                let lines = sources.split(separator: "\n").map(String.init)
                let json = String(decoding: try JSONEncoder().encode(lines), as: UTF8.self)
                try db.execute(sql: "UPDATE bots SET sources = ? WHERE name = ?", arguments: [json, row["name"]])
            }
        }
        migrator.registerMigration(migrationNames[6]) { db in
            // Scanned images become sources of kind 'image': SQLite cannot change a CHECK constraint,
            // so `sources` is rebuilt (the migrator runs with foreign keys off and checks them after).
            try db.execute(sql: """
                DROP TRIGGER snippets_after_insert;
                CREATE TABLE sources_v7 (
                    id INTEGER PRIMARY KEY,
                    path TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL CHECK (kind IN ('note', 'pdf', 'image', 'memory')),
                    title TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    modified_at REAL,
                    ingested_at REAL NOT NULL,
                    keywords TEXT NOT NULL DEFAULT '',
                    -- How OCR read the source (`auto eng 300`), 'never' when it left pages unread; NULL otherwise.
                    ocr TEXT
                );
                INSERT INTO sources_v7 (id, path, kind, title, content_hash, size, modified_at, ingested_at, keywords)
                    SELECT id, path, kind, title, content_hash, size, modified_at, ingested_at, keywords FROM sources;
                DROP TABLE sources;
                ALTER TABLE sources_v7 RENAME TO sources;
                CREATE INDEX sources_by_kind ON sources(kind);
                CREATE INDEX sources_by_content_hash ON sources(content_hash);
                \(keywordInsertTrigger)

                -- The weakest OCR confidence (0-100) among the pages a snippet spans; NULL when no
                -- page of it was read by OCR.
                ALTER TABLE snippets ADD COLUMN ocr_confidence REAL;

                -- Pages Tesseract recognised, by file hash, settings (languages@dpi) and page, so an
                -- interrupted ingest of a long scan does not recognise them again. Rows go when no
                -- source has the hash any more (the triggers below).
                CREATE TABLE ocr_pages (
                    content_hash TEXT NOT NULL,
                    settings TEXT NOT NULL,
                    page INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    confidence REAL NOT NULL,
                    words INTEGER NOT NULL,
                    quarter_turns INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (content_hash, settings, page)
                ) WITHOUT ROWID;
                \(ocrPageTriggers)
                """)
        }
        migrator.registerMigration(migrationNames[7]) { db in
            try db.execute(sql: """
                -- Reading a source added over the API, in the background. Its bytes (job_chunks) are
                -- stored before the job is acknowledged; a finished job's bytes are the source's
                -- original (sources.original_job), the others' are dropped.
                CREATE TABLE jobs (
                    id TEXT PRIMARY KEY NOT NULL,
                    -- The upload id of the source it reads (its path is 'upload:' || source).
                    source TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('receiving', 'queued', 'running', 'done', 'failed')),
                    content_type TEXT NOT NULL,
                    size INTEGER NOT NULL DEFAULT 0,
                    content_hash TEXT,
                    title TEXT,
                    tags TEXT NOT NULL DEFAULT '',
                    owner TEXT,
                    bots TEXT NOT NULL DEFAULT '',
                    pages_done INTEGER NOT NULL DEFAULT 0,
                    pages_total INTEGER NOT NULL DEFAULT 0,
                    snippets_done INTEGER NOT NULL DEFAULT 0,
                    snippets_total INTEGER NOT NULL DEFAULT 0,
                    error TEXT,
                    warnings TEXT NOT NULL DEFAULT '',
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    -- When the process working on it last said it was alive.
                    heartbeat REAL NOT NULL
                );
                CREATE INDEX jobs_by_state ON jobs(state, created_at);
                CREATE INDEX jobs_by_source ON jobs(source, created_at);
                CREATE TABLE job_chunks (
                    job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL,
                    data BLOB NOT NULL,
                    PRIMARY KEY (job_id, seq)
                ) WITHOUT ROWID;

                -- A private source's user: only requests made for that user see it.
                ALTER TABLE sources ADD COLUMN owner TEXT;
                CREATE INDEX sources_by_owner ON sources(owner) WHERE owner IS NOT NULL;
                -- The job whose bytes are an uploaded source's original.
                ALTER TABLE sources ADD COLUMN original_job TEXT REFERENCES jobs(id) ON DELETE SET NULL;
                """)
        }
        migrator.registerMigration(migrationNames[8]) { db in
            try db.execute(sql: """
                -- What kb serve answered (kb usage): no query text unless --log-queries, users as
                -- salted hashes. Pruned after --log-retention.
                CREATE TABLE request_log (
                    id INTEGER PRIMARY KEY,
                    at REAL NOT NULL,
                    route TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    request_id TEXT NOT NULL,
                    caller TEXT,
                    bot TEXT,
                    report TEXT,
                    user_hash TEXT,
                    results INTEGER,
                    tokens INTEGER,
                    budget INTEGER,
                    degraded INTEGER NOT NULL DEFAULT 0,
                    latency_ms REAL NOT NULL,
                    query TEXT
                );
                CREATE INDEX request_log_by_time ON request_log(at);
                """)
        }
        migrator.registerMigration(migrationNames[9]) { db in
            // EPUB, HTML, DOCX and record files are sources of their own kinds (`sources` rebuilt,
            // as in v7, for its CHECK constraint), and a record's snippet keeps its boost.
            try db.execute(sql: """
                DROP TRIGGER snippets_after_insert;
                CREATE TABLE sources_v10 (
                    id INTEGER PRIMARY KEY,
                    path TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL CHECK (kind IN ('note', 'pdf', 'image', 'epub', 'html', 'docx', 'record', 'memory')),
                    title TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    modified_at REAL,
                    ingested_at REAL NOT NULL,
                    keywords TEXT NOT NULL DEFAULT '',
                    ocr TEXT,
                    owner TEXT,
                    original_job TEXT REFERENCES jobs(id) ON DELETE SET NULL
                );
                INSERT INTO sources_v10 (id, path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr, owner, original_job)
                    SELECT id, path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr, owner, original_job FROM sources;
                DROP TABLE sources;
                ALTER TABLE sources_v10 RENAME TO sources;
                CREATE INDEX sources_by_kind ON sources(kind);
                CREATE INDEX sources_by_content_hash ON sources(content_hash);
                CREATE INDEX sources_by_owner ON sources(owner) WHERE owner IS NOT NULL;
                \(keywordInsertTrigger)
                \(ocrPageTriggers)

                -- A record's boost (`--record-weight`); NULL for the default, 1.
                ALTER TABLE snippets ADD COLUMN weight REAL;
                """)
        }
        migrator.registerMigration(migrationNames[10]) { db in
            // Conversations (chat transcripts: one snippet per turn) are sources of their own
            // kind (`sources` rebuilt, as in v7 and v10, for its CHECK constraint).
            try db.execute(sql: """
                DROP TRIGGER snippets_after_insert;
                CREATE TABLE sources_v11 (
                    id INTEGER PRIMARY KEY,
                    path TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL CHECK (kind IN ('note', 'pdf', 'image', 'epub', 'html', 'docx', 'record', 'conversation', 'memory')),
                    title TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    modified_at REAL,
                    ingested_at REAL NOT NULL,
                    keywords TEXT NOT NULL DEFAULT '',
                    ocr TEXT,
                    owner TEXT,
                    original_job TEXT REFERENCES jobs(id) ON DELETE SET NULL
                );
                INSERT INTO sources_v11 (id, path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr, owner, original_job)
                    SELECT id, path, kind, title, content_hash, size, modified_at, ingested_at, keywords, ocr, owner, original_job FROM sources;
                DROP TABLE sources;
                ALTER TABLE sources_v11 RENAME TO sources;
                CREATE INDEX sources_by_kind ON sources(kind);
                CREATE INDEX sources_by_content_hash ON sources(content_hash);
                CREATE INDEX sources_by_owner ON sources(owner) WHERE owner IS NOT NULL;
                \(keywordInsertTrigger)
                \(ocrPageTriggers)
                """)
        }
        migrator.registerMigration(migrationNames[11]) { db in
            // Valid time and feedback. A memory holds from valid_from (its creation, for those
            // stored before) until valid_to (a superseded one: its successor's creation) and
            // expires_at; "current" (one per content in a scope) now also means not closed.
            try db.execute(sql: """
                ALTER TABLE memories ADD COLUMN valid_from REAL NOT NULL DEFAULT 0;
                ALTER TABLE memories ADD COLUMN valid_to REAL;
                ALTER TABLE memories ADD COLUMN expires_at REAL;
                ALTER TABLE memories ADD COLUMN flagged_wrong INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE memories ADD COLUMN useful INTEGER NOT NULL DEFAULT 0;
                UPDATE memories SET valid_from = created_at;
                UPDATE memories SET valid_to = MAX(valid_from, COALESCE(
                    (SELECT n.created_at FROM memories n WHERE n.id = memories.superseded_by), updated_at))
                    WHERE superseded_by IS NOT NULL;
                DROP INDEX memories_by_content;
                CREATE UNIQUE INDEX memories_by_content ON memories(scope, content_key) WHERE superseded_by IS NULL AND valid_to IS NULL;
                CREATE INDEX memories_by_expiry ON memories(expires_at) WHERE expires_at IS NOT NULL;
                -- Feedback on memories, with who gave it.
                CREATE TABLE memory_feedback (
                    id INTEGER PRIMARY KEY,
                    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
                    feedback TEXT NOT NULL,
                    caller TEXT NOT NULL,
                    note TEXT,
                    at REAL NOT NULL
                );
                CREATE INDEX memory_feedback_by_memory ON memory_feedback(memory_id, at);
                """)
        }
        migrator.registerMigration(migrationNames[12]) { db in
            // The next time a memory starts or stops holding (what a user's recall filter is kept
            // until) is a look-up in these, not a scan of every memory (100,000: ~10 ms a request).
            try db.execute(sql: """
                CREATE INDEX memories_by_validity_start ON memories(valid_from);
                CREATE INDEX memories_by_validity_end ON memories(valid_to) WHERE valid_to IS NOT NULL;
                """)
        }
        migrator.registerMigration(migrationNames[13]) { db in
            // What each write did to snippets and vectors since the copies saved beside the index
            // were made (`SearchLog`): a copy older than the index catches up instead of being
            // derived again. One row a write transaction, covering generations (before, generation]:
            // the snippets it removed, and those it added or wrote vectors for.
            try db.execute(sql: """
                CREATE TABLE kb_search_log (
                    generation INTEGER PRIMARY KEY,
                    before INTEGER NOT NULL,
                    reset INTEGER NOT NULL DEFAULT 0,
                    removed BLOB NOT NULL,
                    written BLOB NOT NULL
                );
                """)
        }
        migrator.registerMigration(migrationNames[14]) { db in
            // Where each page of a book starts in its text (`PageStart`, one `offset<TAB>label`
            // line a page): pages asked for, grep matches and citations exact to the page.
            try db.execute(sql: """
                CREATE TABLE source_pages (
                    source_id INTEGER PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
                    starts TEXT NOT NULL
                );
                """)
        }
        return migrator
    }
}

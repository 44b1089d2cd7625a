import Foundation
import GRDB
import GRDBSQLite
public import KBCore
public import KBStore

extension SQLiteStore.Snapshot {
    /// The ranking `keywordRanking` would read from FTS5, from the postings in memory
    /// (`KeywordIndex`); nil when they cannot give it: this process's copy is newer than the
    /// snapshot, or a search word is more than one token (a phrase, which needs positions).
    func keywordRankingInMemory(_ text: String, language: KeywordLanguage, limit: Int, allowed: Set<Int64>?) throws -> [(id: Int64, score: Double)]? {
        guard let words = KeywordQuery.searchWords(in: text, language: language) else { return nil }
        let tokenizer = try keywordTokenizer(language)
        var terms: [String] = []
        for word in words {
            let tokens = try tokenizer.tokenize(query: word).filter { !$0.flags.contains(.colocated) }
            guard tokens.count == 1 else { return nil }
            terms.append(tokens[0].token)
        }
        return try keywordIndex(tokenizer)?.ranking(terms, limit: limit, allowed: allowed)
    }

    /// `IndexSnapshot.keywordCoverage`: the query's terms as the keyword ranking reads them, with
    /// their document frequencies from the postings in memory when this process holds them, else
    /// from FTS5's own vocabulary.
    public func keywordCoverage(_ query: SearchQuery, of ids: [Int64]) throws -> [KeywordCoverage] {
        let language = try keywordLanguage()
        guard !ids.isEmpty, let words = KeywordQuery.searchWords(in: query.text, language: language) else { return [] }
        let tokenizer = try keywordTokenizer(language)
        var terms: [String] = [], seen = Set<String>()
        for word in words {
            for token in try tokenizer.tokenize(query: word) where !token.flags.contains(.colocated) && seen.insert(token.token).inserted {
                terms.append(token.token)
            }
        }
        guard !terms.isEmpty else { return [] }
        let counted: (rows: Int, frequencies: [Int])
        if keywords.holdsCopy, let index = try keywordIndex(tokenizer) {
            counted = index.documentFrequencies(terms)
        } else {
            try db.execute(sql: "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kb_keyword_rows USING fts5vocab(main, 'snippets_fts', 'row')")
            let lookup = try db.cachedStatement(sql: "SELECT doc FROM temp.kb_keyword_rows WHERE term = ?")
            counted = (try Int.fetchOne(db, sql: "SELECT count(*) FROM snippets_fts_docsize") ?? 0,
                       try terms.map { try Int.fetchOne(lookup, arguments: [$0]) ?? 0 })
        }
        let documents = Dictionary(try keywordDocuments(ids, tokenizer: tokenizer).map { ($0.id, Set($0.columns.joined())) },
                                   uniquingKeysWith: { first, _ in first })
        return ids.map { id in
            KeywordCoverage(terms: zip(terms, counted.frequencies).map {
                .init(term: $0, documentFrequency: Double($1), held: documents[id]?.contains($0) ?? false)
            }, snippets: Double(counted.rows))
        }
    }

    /// The keyword table's tokenizer, on this connection.
    func keywordTokenizer(_ language: KeywordLanguage) throws -> any FTS5Tokenizer {
        try db.makeTokenizer(FTS5TokenizerDescriptor(components: language.ftsTokenizer.split(separator: " ").map(String.init)))
    }

    /// Loads the vectors (and the int8 copy of the knowledge's from `quantizingFrom` of them)
    /// and the keyword postings into memory.
    @discardableResult
    public func prepareSearches(embedder: EmbedderRecord?, quantizingFrom: Int) throws -> [String] {
        if let embedder, embedder.hasVectors {
            for cache in [vectors, memoryVectors] {
                let index = try vectorIndex(cache, embedder: embedder)
                // Only knowledge is scanned approximately (a bot's context); recall gathers rows.
                if cache.rows == .knowledge, index.count >= quantizingFrom {
                    index.enableQuantization()
                    _ = index.signStageDepth   // calibrated now (and saved with the copy), not at the first search
                }
            }
        }
        _ = try keywordIndex(try keywordTokenizer(try keywordLanguage()))
        return saved.takeNotes()
    }

    /// The keyword postings in memory as of this snapshot (see `KeywordCache`).
    func keywordIndex(_ tokenizer: any FTS5Tokenizer) throws -> KeywordIndex? {
        try keywords.index(generation: try generation(), load: loadKeywordIndexOrSaved, fetch: { try keywordDocuments($0, tokenizer: tokenizer) })
    }

    /// The keyword table's rows of `ids` (those there), tokenized column by column as FTS5 does.
    func keywordDocuments(_ ids: [Int64], tokenizer: any FTS5Tokenizer) throws -> [(id: Int64, columns: [[String]])] {
        var documents: [(id: Int64, columns: [[String]])] = []
        for chunk in stride(from: 0, to: ids.count, by: 10_000) {
            let rows = try Row.fetchCursor(db, sql: """
                SELECT rowid, text, title, heading_path, keywords FROM snippets_fts
                WHERE rowid IN (\(ids[chunk..<min(chunk + 10_000, ids.count)].map(String.init).joined(separator: ",")))
                """)
            while let row = try rows.next() {
                let columns = try (1...4).map { column -> [String] in
                    guard let text = row[column] as String?, !text.isEmpty else { return [] }
                    return try tokenizer.tokenize(document: text).compactMap { $0.flags.contains(.colocated) ? nil : $0.token }
                }
                documents.append((row[0], columns))
            }
        }
        return documents
    }

    /// The keyword table's columns, in the order of `SQLiteStore.bm25Weights`.
    static let keywordColumns = ["text", "title", "heading_path", "keywords"]

    /// The postings of FTS5's own index, read through an `fts5vocab` table of its instances
    /// (term, snippet, column; in term order, then snippet): no text is tokenized again. Every
    /// row of the keyword table is a document, its length the number of its instances.
    func loadKeywordIndex() throws -> KeywordIndex {
        let weights = SQLiteStore.bm25WeightValues
        try db.execute(sql: "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kb_keyword_instances USING fts5vocab(main, 'snippets_fts', 'instance')")
        let ids = try Int64.fetchAll(db, sql: "SELECT id FROM snippets_fts_docsize ORDER BY id")
        // Snippet id → document: a table over the id range when ids are dense, else a dictionary.
        let lowest = ids.first ?? 0, span = Int((ids.last ?? 0) - lowest + 1)
        var dense: [Int32] = []
        var sparse: [Int64: UInt32] = [:]
        if span <= max(ids.count, 1) * 8 {
            dense = Array(repeating: -1, count: span)
            for (document, id) in ids.enumerated() { dense[Int(id - lowest)] = Int32(document) }
        } else {
            sparse = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, UInt32($0)) })
        }
        func document(_ id: Int64) -> UInt32? {
            if dense.isEmpty { return sparse[id] }
            let offset = id - lowest
            guard offset >= 0, offset < Int64(dense.count), dense[Int(offset)] >= 0 else { return nil }
            return UInt32(dense[Int(offset)])
        }
        let columns = Self.keywordColumns.map { Array($0.utf8) }
        var lengths = [UInt32](repeating: 0, count: ids.count)
        var terms: [String] = [], documents: [[UInt32]] = [], frequencies: [Frequencies] = []
        var term: [UInt8] = [], termDocuments: [UInt32] = [], termFrequencies = Frequencies()
        var lastID: Int64 = .min
        func finishTerm() {
            if !termDocuments.isEmpty {
                terms.append(String(decoding: term, as: UTF8.self))
                documents.append(termDocuments)
                frequencies.append(termFrequencies)
            }
            termDocuments = []
            termFrequencies = Frequencies()
            lastID = .min
        }
        let statement = try db.makeStatement(sql: "SELECT term, doc, col FROM temp.kb_keyword_instances")
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw KBError(.database, "Cannot read the keyword index of \(path): \(String(cString: sqlite3_errmsg(db.sqliteConnection)))")
            }
            let termLength = Int(sqlite3_column_bytes(handle, 0))
            guard let termBytes = sqlite3_column_text(handle, 0) else { continue }
            if termLength != term.count || !term.withUnsafeBufferPointer({ memcmp($0.baseAddress!, termBytes, termLength) == 0 }) {
                finishTerm()
                term = Array(UnsafeBufferPointer(start: termBytes, count: termLength))
            }
            let id = sqlite3_column_int64(handle, 1)
            guard let document = document(id) else { continue }
            let columnLength = Int(sqlite3_column_bytes(handle, 2))
            let column = sqlite3_column_text(handle, 2).flatMap { name in
                columns.firstIndex { $0.count == columnLength && $0.withUnsafeBufferPointer { memcmp($0.baseAddress!, name, columnLength) == 0 } }
            } ?? 0
            let weight = Float(column < weights.count ? weights[column] : 1)
            lengths[Int(document)] += 1
            if id == lastID {
                termFrequencies[termFrequencies.count - 1] += weight
            } else {
                termDocuments.append(document)
                termFrequencies.append(weight)
                lastID = id
            }
        }
        finishTerm()
        return KeywordIndex(weights: weights, snippetIDs: ids, lengths: lengths, terms: terms, documents: documents, frequencies: frequencies)
    }
}

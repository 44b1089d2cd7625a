import Foundation
import GRDB
import KBCore
import KBStore
import Testing
@testable import KBSQLite

/// `FoldingAnalyzer` gives another store (PostgreSQL) exactly the terms SQLite's keyword index
/// keeps: read back from FTS5's own vocabulary of an index, column by column, in order.
@Suite struct FoldingAnalyzerTests {
    @Test func itGivesTheTermsTheKeywordIndexKeepsInOrder() async throws {
        let path = temporaryPath("kb.sqlite")
        let store = try SQLiteStore.open(at: path, create: true)
        let text = """
            Transiting planets triggered the natal charts. Häuser und Straßen. Книги і книгою про планети. \
            Планеты движутся вокруг Солнца. الكَوَاكِبُ تَدُورُ حَوْلَ الشَّمْسِ. 北京大学是一所大学。 ﺍﻟﻜﻮﺍﻛﺐ हिन्दी भाषा 2019م
            """
        try await store.replace(document("/a.md", title: "Planetary Books", snippets: [text]))
        var configuration = Configuration()
        configuration.prepareDatabase { db in db.add(tokenizer: FoldingTokenizer.self) }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let columns = try await queue.write { db -> [String: [String]] in
            try db.execute(sql: "CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, 'snippets_fts', 'instance')")
            return try Row.fetchAll(db, sql: "SELECT col, term FROM temp.terms ORDER BY col, \"offset\"")
                .reduce(into: [:]) { $0[$1[0] as String, default: []].append($1[1]) }
        }
        let analyzer = try FoldingAnalyzer(language: .auto)
        #expect(analyzer.language == .auto)
        #expect(columns["text"] == analyzer.terms(in: text))
        #expect(columns["title"] == analyzer.terms(in: "Planetary Books"))
        #expect(columns["heading_path"] == analyzer.terms(in: "H › Sub 0"))
        // What the rules do, for the record.
        #expect(analyzer.terms(in: "Книги і книгою") == ["книг", "і", "книг"])
        #expect(analyzer.terms(in: "北京大学") == ["北京", "京大", "大学"])
        #expect(analyzer.terms(in: "Transiting planets") == ["transit", "planet"])
        #expect(try FoldingAnalyzer(language: .simple).terms(in: "Transiting Häuser") == ["transiting", "hauser"])
    }

    @Test func anExcerptMarksTheWordsWhoseTermsTheQueryHas() throws {
        let analyzer = try FoldingAnalyzer(language: .auto)
        let text = "The gardener planted roses. Later, books about planting and книгою."
        let terms = Set(["plant", "книг"])
        #expect(KeywordExcerpt.excerpt(of: text, matching: terms, analyze: analyzer.terms)
            == "The gardener **planted** roses. Later, books about **planting** and **книгою**.")
        #expect(KeywordExcerpt.excerpt(of: text, matching: ["moon"], analyze: analyzer.terms) == nil)
        let long = (1...60).map { "w\($0)" }.joined(separator: " ") + " planted here."
        #expect(KeywordExcerpt.excerpt(of: long, matching: terms, words: 8, analyze: analyzer.terms) == "…w55 w56 w57 w58 w59 w60 **planted** here.")
    }
}

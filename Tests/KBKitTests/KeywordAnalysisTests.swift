import Foundation
import KBCore
import KBStore
import KBIngest
import KBTestSupport
import Testing
@testable import KBKit

/// Keyword analysis of a new index (`auto`: each word by its script's rules), on both engines:
/// SQLite analyses inside FTS5, PostgreSQL stores the terms kb's analysis gives.
@Suite struct KeywordAnalysisTests {
    func index(_ notes: [String: String]) async throws -> KnowledgeBase {
        let ws = try Workspace()
        for (name, text) in notes { try ws.write(name, text) }
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let report = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect(report.failed.isEmpty)
        return kb
    }

    func titles(_ kb: KnowledgeBase, _ text: String) async throws -> [String] {
        try await kb.search(.keyword(text), as: .admin).hits.map(\.sourceTitle)
    }

    @Test func oneIndexReadsSeveralLanguagesEachByItsRules() async throws {
        let kb = try await index([
            "books.md": "# Бібліотека\n\nКнига про планети та їхні рухи стоїть на полиці.",
            "sun.md": "# Солнце\n\nПланеты движутся вокруг Солнца.",
            "planets.md": "# الكواكب\n\nالكَوَاكِبُ تَدُورُ حَوْلَ الشَّمْسِ.",
            "transits.md": "# Transits\n\nTransiting planets trigger the natal chart.",
            "beijing.md": "# 北京\n\n北京大学是一所大学。",
        ])
        #expect(try await titles(kb, "книгою") == ["Бібліотека"])
        #expect(try await titles(kb, "солнцем") == ["Солнце"])
        #expect(try await titles(kb, "والشمس") == ["الكواكب"])
        #expect(try await titles(kb, "transit") == ["Transits"])
        // Chinese is written without spaces: pairs of ideographs are its words.
        #expect(try await titles(kb, "大学") == ["北京"])
        #expect(try await titles(kb, "北京的大学") == ["北京"])
        #expect(try await kb.status(as: .admin).keywordLanguage == "auto")
        // The excerpt marks the word as written, found by its stem.
        let hit = try #require(try await kb.search(.keyword("книгою"), as: .admin).hits.first)
        #expect(hit.excerpt.contains("**Книга**"), "\(hit.excerpt)")
        #expect(try await kb.status(as: .admin).languages["uk"] == 1)
        #expect(try await kb.status(as: .admin).languages["ar"] == 1)
    }

    @Test func aFunctionWordOfOneLanguageNeverMatchesAnothersText() async throws {
        let kb = try await index([
            "lindisfarne.md": "# Линдисфарн\n\nГруппа Lindisfarne известна песней Fog on the Tyne, которую пели на стадионе.",
            "defense.md": "# Defense\n\nThe Panthers defense gave up only 308 points.",
        ])
        // "the" is an English function word: it leaves the query, so only "defense" is sought.
        #expect(try await titles(kb, "the defense") == ["Defense"])
        #expect(try await titles(kb, "what is on the") .count == 2)   // nothing else to search for: the words stay
        // A Russian query leaves out Russian function words, an English one English words.
        #expect(try await titles(kb, "песней на стадионе") == ["Линдисфарн"])
        #expect(KeywordQuery.searchWords(in: "How many points did the Panthers defense surrender?", language: .auto)
            == ["points", "panthers", "defense", "surrender"])
        #expect(KeywordQuery.searchWords(in: "Wie viele Punkte hat die Verteidigung abgegeben?", language: .auto)
            == ["punkte", "verteidigung", "abgegeben"])
    }

    @Test func arabicPresentationFormsAndInvisibleCharactersAreFoundByPlainText() async throws {
        let kb = try await index([
            // What a PDF's text layer often holds: presentation forms (ﺍﻟﻜﻮﺍﻛﺐ = الكواكب) and a
            // byte-order mark, a soft hyphen and a zero-width space inside words.
            "forms.md": "# Forms\n\n\u{FEFF}ﺍﻟﻜﻮﺍﻛﺐ ﺗﺪﻭﺭ. Astro\u{00AD}logy and ho\u{200B}roscope.",
        ])
        #expect(try await titles(kb, "الكواكب") == ["Forms"])
        #expect(try await titles(kb, "كواكب") == ["Forms"])
        #expect(try await titles(kb, "astrology") == ["Forms"])
        #expect(try await titles(kb, "horoscope") == ["Forms"])
        let hit = try #require(try await kb.search(.keyword("astrology"), as: .admin).hits.first)
        #expect(!hit.snippet.text.unicodeScalars.contains { [0xFEFF, 0x00AD, 0x200B].contains($0.value) })
    }
}

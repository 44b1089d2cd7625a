import Foundation
import KBCore
import KBStore
import KBIngest
import KBTestSupport
import Testing
@testable import KBKit

/// Keyword search per language: a new index reads each word by its script's rules (`auto`), so
/// inflected Ukrainian, Russian and Arabic words meet in one index where the English Porter
/// stemmer (`--language english`, the default of older indexes) misses them; one language can
/// still be chosen for the whole index (`kb ingest --language`).
@Suite(.enabled(if: TestBackend.isSQLite, "PostgreSQL keeps the text search configuration the index was made with"))
struct KeywordLanguageTests {
    // The notes indexed with the defaults, and the titles a keyword search finds (as KeywordAnalysisTests).
    func index(_ notes: [String: String]) async throws -> KnowledgeBase { try await KeywordAnalysisTests().index(notes) }
    func titles(_ kb: KnowledgeBase, _ text: String) async throws -> [String] { try await KeywordAnalysisTests().titles(kb, text) }

    @Test func ukrainianInflectionsMeetOnceTheIndexIsTunedForUkrainian() async throws {
        let kb = try await index([
            "books.md": "# Бібліотека\n\nКнига про планети та їхні рухи стоїть на полиці.",
            "moon.md": "# Місяць\n\nМісяць змінює знак кожні два-три дні.",
        ])
        // A new index meets the forms already; English stemming leaves Cyrillic endings alone.
        #expect(try await kb.status(as: .admin).keywordLanguage == "auto")
        #expect(try await titles(kb, "книгою планетами") == ["Бібліотека"])
        #expect(try await kb.setKeywordLanguage(.english, as: .admin))
        #expect(try await titles(kb, "книгою планетами").isEmpty)
        #expect(try await kb.setKeywordLanguage(.ukrainian, as: .admin))
        #expect(try await titles(kb, "книгою планетами") == ["Бібліотека"])
        #expect(try await titles(kb, "Місяця") == ["Місяць"])
        #expect(try await titles(kb, "знаки") == ["Місяць"])
        #expect(try await kb.status(as: .admin).keywordLanguage == "ukrainian")
        #expect(try await !kb.setKeywordLanguage(.ukrainian, as: .admin))
        // New text is indexed the same way.
        let ws = try Workspace()
        try ws.write("saturn.md", "# Сатурн\n\nСатурном опікується час.")
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), as: .admin)
        #expect(try await titles(kb, "сатурна") == ["Сатурн"])
        // Function words alone still search; among other words they are left out.
        #expect(try await titles(kb, "про") == ["Бібліотека"])
        #expect(try await titles(kb, "про місяць") == ["Місяць"])
    }

    @Test func arabicDiacriticsTatweelAndAffixesFold() async throws {
        let kb = try await index([
            "planets.md": "# الكواكب\n\nالكَوَاكِبُ تَدُورُ حَوْلَ الشَّمْسِ.",
            "books.md": "# الكتب\n\nفي المكتبة كتب كلاسيكية عن علم الفلك.",
        ])
        #expect(try await titles(kb, "كواكب") == ["الكواكب"])
        try await kb.setKeywordLanguage(.english, as: .admin)
        #expect(try await titles(kb, "كواكب").isEmpty)
        try await kb.setKeywordLanguage(.arabic, as: .admin)
        #expect(try await titles(kb, "كواكب") == ["الكواكب"])
        #expect(try await titles(kb, "والشمس") == ["الكواكب"])
        #expect(try await titles(kb, "الكـتب") == ["الكتب"])   // tatweel
        #expect(try await titles(kb, "مكتبة") == ["الكتب"])
    }

    @Test func russianInflectionsMeet() async throws {
        let kb = try await index(["sun.md": "# Солнце\n\nПланеты движутся вокруг Солнца."])
        #expect(try await titles(kb, "планетам") == ["Солнце"])
        try await kb.setKeywordLanguage(.english, as: .admin)
        #expect(try await titles(kb, "планетам").isEmpty)
        try await kb.setKeywordLanguage(.russian, as: .admin)
        #expect(try await titles(kb, "планетам") == ["Солнце"])
        #expect(try await titles(kb, "солнцем") == ["Солнце"])
    }

    @Test func languagesAreNamed() throws {
        #expect(try KeywordLanguage("auto") == .auto)
        #expect(try KeywordLanguage("uk") == .ukrainian && KeywordLanguage("Arabic") == .arabic)
        #expect(throws: KBError.self) { try KeywordLanguage("klingon") }
        #expect(KeywordLanguage.ukrainian.normalize("книгою") == KeywordLanguage.ukrainian.normalize("книги"))
        #expect(KeywordLanguage.arabic.normalize("الكَوَاكِبُ") == KeywordLanguage.arabic.normalize("كواكب"))
    }
}

extension KeywordLanguageTests {
    @Test func anExportKeepsTheKeywordLanguage() async throws {
        let kb = try await index(["books.md": "# Бібліотека\n\nКнига про планети."])
        try await kb.setKeywordLanguage(.ukrainian, as: .admin)
        let copy = try Workspace().root.appendingPathComponent("copy.sqlite").path
        _ = try await kb.export(to: copy, as: .admin)
        let exported = try KnowledgeBase.open(at: copy)
        #expect(try await exported.status(as: .admin).keywordLanguage == "ukrainian")
        #expect(try await titles(exported, "книгою") == ["Бібліотека"])
    }
}

import Foundation
import KBCore
import Testing
@testable import KBIngest

@Suite struct LanguageDetectorTests {
    @Test(arguments: [
        ("Saturn returns to its natal place after about twenty-nine years, and it asks for accounts.", "en"),
        ("Сатурн повертається на своє місце приблизно через двадцять дев'ять років, і це час підсумків.", "uk"),
        ("Сатурн возвращается на своё место примерно через двадцать девять лет, и это время итогов.", "ru"),
        ("يعود زحل إلى موضعه بعد نحو تسع وعشرين سنة، وهو وقت الحساب.", "ar"),
        // Russian and Ukrainian words without their own letters: function words decide.
        ("Он сказал, что это было как всегда.", "ru"),
        ("Він сказав, що це було як завжди.", "uk"),
        // Latin-script languages by their function words; other scripts by their letters.
        ("Le retour de Saturne arrive vers vingt-neuf ans, une période de bilan.", "fr"),
        ("Wie viele Punkte hat die Verteidigung der Panthers abgegeben?", "de"),
        // German words Dutch has too ("er", "als", "wie") count for both: German stays German.
        ("Er war als Kind oft krank, und niemand wusste, wie es weiterging.", "de"),
        ("¿Cuántos puntos permitió la defensa de los Panthers?", "es"),
        ("Panthers savunması kaç puan verdi?", "tr"),
        ("How many points did the Panthers defense surrender?", "en"),
        ("Πόσους πόντους παραχώρησε η άμυνα των Panthers;", "el"),
        ("पैंथर्स की रक्षा ने कितने अंक दिए?", "hi"),
        ("黑豹队的防守丢了多少分？", "zh"),
        ("שבתאי חוזר למקומו אחרי כעשרים ותשע שנים.", "he"),
    ])
    func theLanguageOfAParagraph(text: String, code: String) {
        #expect(LanguageDetector.language(of: text) == code)
    }

    @Test func englishTextWithCodeOrSharedWordsStaysEnglish() {
        // Variables named x, y, z, and words other languages have too ("a", "was", "no").
        #expect(LanguageDetector.language(of: "Example: x = 0:3; y = 0:2; z = y' * x; contour (x, y, z, 2:3). See also the contour page.") != "es")
        #expect(LanguageDetector.language(of: "I bought a car, a bike and a boat; it was no trouble at all.") == "en")
    }

    @Test func wordsBothUkrainianAndRussianUseTellNeither() {
        // "не" and "же" are both languages' words: a Ukrainian question with them is not Russian.
        #expect(LanguageDetector.language(of: "Чому двигун не заводиться взимку же?") != "ru")
        #expect(LanguageDetector.mayShareWords("uk", "ru") && LanguageDetector.mayShareWords("en", "en"))
        #expect(!LanguageDetector.mayShareWords("en", "de"))
    }

    @Test func thinEvidenceGivesNoLanguage() {
        #expect(LanguageDetector.language(of: "42 — 17") == nil)
        #expect(LanguageDetector.language(of: "Saturn") == nil)
        #expect(LanguageDetector.language(of: "Сатурн Юпитер Марс") == nil)
    }

    @Test func aSourcesOwnLanguageWinsAndTheSettingChoosesTheRest() throws {
        func document() -> SourceDocument {
            let source = Source(path: "/n.md", kind: .note, title: "n", contentHash: "h", size: 1)
            return SourceDocument(source: source, snippets: [
                Snippet(ordinal: 0, text: "The Moon rules the tides and the home.", start: 0, end: 1),
                Snippet(ordinal: 1, text: "Місяць керує припливами і домом, а також почуттями.", start: 1, end: 2, tags: ["lang:en"]),
            ])
        }
        var detected = document()
        LanguageDetector.tag(&detected, .detect)
        #expect(detected.snippets.map(\.tags) == [["lang:en"], ["lang:en"]], "a given lang: tag is kept")
        var fixed = document()
        LanguageDetector.tag(&fixed, try TextLanguage("UK"))
        #expect(fixed.snippets[0].tags == ["lang:uk"])
        var off = document()
        LanguageDetector.tag(&off, try TextLanguage("none"))
        #expect(off.snippets[0].tags.isEmpty)
        #expect(throws: KBError.self) { try TextLanguage("ukrainian!") }
    }

    /// A long document is detected on every core: each snippet gets the tag it gets alone, in
    /// its place, and a given tag is kept.
    @Test func aLongDocumentsSnippetsGetTheTagsTheyGetOneByOne() {
        let texts = ["The Moon rules the tides and the home.", "Місяць керує припливами і домом, а також почуттями.",
                     "Луна управляет приливами и домом, а также чувствами.", "القمر يحكم المد والجزر والبيت", "42"]
        let source = Source(path: "/long.md", kind: .note, title: "long", contentHash: "h", size: 1)
        var document = SourceDocument(source: source, snippets: (0..<1000).map { i in
            Snippet(ordinal: i, text: texts[i % texts.count], start: i, end: i + 1, tags: i == 7 ? ["lang:fr"] : [])
        })
        LanguageDetector.tag(&document, .detect)
        for (i, snippet) in document.snippets.enumerated() {
            let code = i == 7 ? "fr" : LanguageDetector.language(of: texts[i % texts.count])
            let expected = code.map { [Tag(key: "lang", value: $0)] } ?? []
            #expect(snippet.tags == expected, "snippet \(i)")
        }
        #expect(Set(document.snippets.flatMap(\.tags)).count >= 4)
    }

    @Test func decomposedLettersAndJoinersCountAsTheirPrecomposedForms() {
        // Words are split on characters: a decomposed "ã" (a + U+0303) and a word joined by U+200D
        // stay whole, as in the precomposed text (which is split on scalars).
        let precomposed = "A função não está aqui, mas não há uma razão para isso."
        let decomposed = precomposed.decomposedStringWithCanonicalMapping
        #expect(decomposed.unicodeScalars.count > precomposed.unicodeScalars.count)
        #expect(LanguageDetector.candidates(of: decomposed) == LanguageDetector.candidates(of: precomposed))
        #expect(LanguageDetector.language(of: precomposed) == "pt")
        #expect(LanguageDetector.candidates(of: "Der Hund und die Katze sind im Haus, und das ist gut.\u{200D}")
            == LanguageDetector.candidates(of: "Der Hund und die Katze sind im Haus, und das ist gut."))
    }

    @Test func aConcurrentMapKeepsOrderOnEveryCoreAndOnOne() {
        let numbers = Array(0..<1000)
        #expect(numbers.concurrentMap(minimumCount: 10) { $0 * 3 } == numbers.map { $0 * 3 })
        #expect(numbers.concurrentMap(minimumCount: 5000) { $0 * 3 } == numbers.map { $0 * 3 })
        #expect([Int]().concurrentMap(minimumCount: 0) { $0 } == [])
        #expect([7].concurrentMap(minimumCount: 0) { $0 + 1 } == [8])
    }
}

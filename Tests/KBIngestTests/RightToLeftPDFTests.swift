import Foundation
import KBCore
@testable import KBIngest
import Testing

/// PDFs made the way real ones are (scripts/fixtures/make-rtl-pdf-fixtures.sh): LibreOffice from
/// right-to-left HTML, and reportlab + arabic-reshaper + python-bidi. kb's stored text must hold
/// the words of the text they were made from, as a reader sees them.
@Suite struct RightToLeftPDFTests {
    static let fixtures = Bundle.module.url(forResource: "Fixtures/pdf-text", withExtension: nil)!

    /// The paragraphs a fixture was made from, one per page.
    static func truth(_ name: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent("\(name).txt"), encoding: .utf8)
    }

    /// The text kb stores: the snippets joined, overlaps once.
    static func stored(_ name: String) throws -> String {
        var text = String.UnicodeScalarView(), cursor = 0
        for snippet in try PDFFixture.load(name, chunkSize: 2000).snippets.sorted(by: { $0.start < $1.start }) where snippet.end > cursor {
            let scalars = Array(snippet.text.unicodeScalars)
            text.append(contentsOf: scalars[max(0, cursor - snippet.start)...])
            text.append(" ")
            cursor = snippet.end
        }
        return String(text)
    }

    /// Words as a reader sees them: NFKC, no tatweel, split at spaces and punctuation; without
    /// harakat when asked (arabic-reshaper drops them).
    static func words(_ text: String, harakat: Bool = true) -> [String] {
        var scalars = String.UnicodeScalarView()
        for scalar in text.precomposedStringWithCompatibilityMapping.unicodeScalars where scalar != "\u{0640}" {
            if !harakat, (0x064B...0x065F).contains(scalar.value) || scalar.value == 0x0670 { continue }
            scalars.append(".,;:!?،؛«»()\"".unicodeScalars.contains(scalar) || scalar.properties.isWhitespace ? " " : scalar)
        }
        return String(scalars).split(separator: " ").map(String.init)
    }

    /// The share of the truth's words (with repeats) found in `text`.
    static func recall(of truth: String, in text: String, harakat: Bool = true) -> Double {
        var have: [String: Int] = [:]
        for word in words(text, harakat: harakat) { have[word, default: 0] += 1 }
        let wanted = words(truth, harakat: harakat)
        var found = 0
        for word in wanted where have[word, default: 0] > 0 {
            have[word]! -= 1
            found += 1
        }
        return Double(found) / Double(max(1, wanted.count))
    }

    static var pdftotextRecall: [String: Double] {
        get throws {
            let data = try Data(contentsOf: fixtures.appendingPathComponent("pdftotext-recall.json"))
            return try JSONDecoder().decode([String: Double].self, from: data)
        }
    }

    @Test(arguments: [("arabic-writer", "arabic"), ("persian-writer", "persian"), ("ukrainian-writer", "ukrainian"), ("arabic-reportlab", "arabic")])
    func storedTextHoldsTheWordsAtLeastAsWellAsPdftotext(pdf: String, text: String) throws {
        let harakat = pdf != "arabic-reportlab"
        let recall = Self.recall(of: try Self.truth(text), in: try Self.stored(pdf), harakat: harakat)
        let bar = try #require(try Self.pdftotextRecall[pdf])
        #expect(recall >= 0.98, "\(pdf): \(recall)")
        #expect(recall >= bar, "\(pdf): kb \(recall), pdftotext \(bar)")
    }

    @Test(arguments: ["arabic-writer", "persian-writer", "arabic-reportlab"])
    func numbersAndLatinWordsStaySpacedFromArabicWords(pdf: String) throws {
        let scalars = Array(try Self.stored(pdf).unicodeScalars)
        func arabicLetter(_ s: Unicode.Scalar) -> Bool { (0x0621...0x064A).contains(s.value) || (0x067E...0x06D3).contains(s.value) }
        func latinOrDigit(_ s: Unicode.Scalar) -> Bool { s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s)) }
        for (a, b) in zip(scalars, scalars.dropFirst()) {
            #expect(!(arabicLetter(a) && latinOrDigit(b)) && !(latinOrDigit(a) && arabicLetter(b)), "\(a)\(b) fused in \(pdf)")
        }
    }

    @Test func combiningMarksStayOnTheirLetters() throws {
        let text = try Self.stored("arabic-writer")
        // LibreOffice sets tanween, damma and shadda a little above the line: poppler made lines of them.
        for word in ["دائماً", "مجاناً", "تُقرأ", "وصُوّرت", "تماماً"] {
            #expect(text.contains(word), "\(word)")
        }
        #expect(!text.components(separatedBy: "\n").contains { line in
            let letters = line.unicodeScalars.filter { !$0.properties.isWhitespace }
            return !letters.isEmpty && letters.allSatisfy { $0.properties.generalCategory == .nonspacingMark }
        })
        // Lines in reading order: the sentence that poppler split across two lines comes out whole.
        #expect(text.contains("فتحت المكتبة أبوابها للطلاب مجاناً. وفي عام"))
    }

    @Test func presentationFormsAreStoredAsLetters() throws {
        let text = try Self.stored("arabic-reportlab")
        #expect(!text.unicodeScalars.contains { (0xFB50...0xFDFF).contains($0.value) || (0xFE70...0xFEFC).contains($0.value) })
        #expect(text.contains("تأسست المكتبة الوطنية في عام 1921"))
        #expect(text.contains("Python 3.12") && text.contains("Carolina Panthers"))
    }

    @Test func leftToRightLinesAreNotRebuilt() throws {
        // The Ukrainian fixture has no right-to-left letters: poppler's own text, as before.
        #expect(!PDFLines.holdsRightToLeft(try Self.stored("ukrainian-writer")))
    }
}

@Suite struct PDFLinesTests {
    /// A word from its letters as they stand left to right, `width` points a letter.
    static func word(_ visual: String, at x: Double, line y: Double, width: Double = 5) -> PDFLines.Word {
        let scalars = Array(visual.unicodeScalars)
        return PDFLines.Word(x0: x, y0: y, x1: x + width * Double(scalars.count), y1: y + 12, scalars: scalars)
    }

    @Test func aRightToLeftLineIsReadRightToLeftWithItsNumbersLeftToRight() {
        // "من 308 آلاف" and "Python 3.12" as they stand on the page, left to right.
        let words = [Self.word("فالآ", at: 10, line: 0), Self.word("308", at: 35, line: 0), Self.word("نم", at: 55, line: 0),
                     Self.word("ةدعاقو", at: 10, line: 20), Self.word("Python", at: 50, line: 20), Self.word("3.12", at: 85, line: 20),
                     Self.word("ةغلب", at: 110, line: 20)]
        #expect(PDFLines.text(of: words) == "من 308 آلاف\nبلغة Python 3.12 وقاعدة")
    }

    @Test func aMarkAboveTheLineGoesBackOnItsLetter() {
        // "دائماً": the tanween stands over the alef, the leftmost letter, a little above the line.
        var mark = PDFLines.Word(x0: 11, y0: -3, x1: 11, y1: 9, scalars: ["\u{064B}"])
        mark.left = [11]; mark.right = [11]
        let words = [mark, Self.word("امئاد", at: 10, line: 0)]
        #expect(PDFLines.text(of: words) == "دائماً")
    }

    @Test func anArabicWordInALeftToRightLineIsTurnedAround() {
        let words = [Self.word("The", at: 0, line: 0), Self.word("word", at: 20, line: 0), Self.word("باتك", at: 45, line: 0),
                     Self.word("means", at: 70, line: 0), Self.word("book", at: 100, line: 0)]
        #expect(PDFLines.text(of: words) == "The word كتاب means book")
    }

    @Test func rotatedOrEmptyPagesStayPopplers() {
        #expect(PDFLines.text(of: []) == nil)
    }

    @Test func popplersEmbeddedRunsKeepTheirSpace() {
        // Poppler's text of "من 308 آلاف": the run's space inside the controls, at its start.
        #expect(PDFText.cleanLines("من \u{202A} 308\u{202C}آلاف") == ["من 308 آلاف"])
        #expect(PDFText.cleanLines("عام \u{202A} ،1921\u{202C}وتضم") == ["عام ،1921 وتضم"])
        // A number joined to a letter stays joined.
        #expect(PDFText.cleanLines("عام \u{202A}2019\u{202C}م") == ["عام 2019م"])
    }
}

@Suite struct ArabicTextHygieneTests {
    @Test func presentationFormsBecomeLettersAndTatweelGoes() {
        #expect(TextHygiene.clean("\u{FEEB}\u{FEAC}\u{FE8D}") == "هذا")
        #expect(TextHygiene.clean("\u{FEFB}") == "لا")                 // the lam-alef ligature: two letters
        #expect(TextHygiene.clean("كتـــاب") == "كتاب")
        #expect(TextHygiene.clean("كتاب") == "كتاب")
    }
}

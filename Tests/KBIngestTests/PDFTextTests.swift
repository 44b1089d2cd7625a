import Testing
@testable import KBIngest

@Suite struct PDFTextTests {
    @Test func joinsWordsHyphenatedAcrossLinesButKeepsRealHyphens() {
        #expect(PDFText.dehyphenate("an exam-\nple here") == "an example here")
        #expect(PDFText.dehyphenate("an X-\nRay and 2-\n3") == "an X-\nRay and 2-\n3")
    }

    @Test func aCyrillicCompoundTheBookHyphenatesKeepsItsHyphenAcrossALineBreak() {
        let pages = [["Он опоздал из-за дождя, а потом из-", "за ветра. Это инфор-", "мация о погоде, и информация важна."]]
        let text = PDFText.assemble(pages: pages.map { $0.joined(separator: "\n") }).text
        #expect(text.contains("из-\nза ветра"))          // the book writes из-за: the hyphen stays
        #expect(text.contains("информация о погоде"))    // a typesetter's break: joined
        // Without the compound elsewhere, a break is the typesetter's, as in other scripts.
        #expect(PDFText.assemble(pages: ["Он опоздал из-\nза ветра."]).text.contains("изза ветра"))
    }

    @Test func cp1251FontsBreakHyphenIsAHyphen() {
        #expect(PDFText.repairCP1251("\u{00C8}\u{00ED}\u{00F4}\u{00EE}\u{00F0}\u{007F}") == "Инфор-")
    }

    @Test func expandsLigaturesDropsBidiMarksAndFormFeedsAndCollapsesSpaces() {
        #expect(PDFText.cleanLines("\u{202B}مرحبا\u{202C}   ﬁne   ﬂow \u{0C}") == ["مرحبا ﬁne ﬂow".replacingOccurrences(of: "ﬁ", with: "fi").replacingOccurrences(of: "ﬂ", with: "fl")])
    }

    @Test func removesRunningHeadersFootersAndBarePageNumbers() {
        let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
        let pages = (1...5).map { n in
            "\(n + 10)\nGNU Octave (version 7.3.0)\n"
                + (0..<6).map { "Line \(words[(n + $0) % 8]) of the body goes on." }.joined(separator: "\n")
                + "\nChapter 2: Getting Started"
        }
        let document = PDFText.assemble(pages: pages, labels: (1...5).map { String($0 + 10) })
        #expect(!document.text.contains("Chapter 2"))
        #expect(!document.text.contains("GNU Octave"))
        #expect(!document.text.contains("11\n") && !document.text.contains("\n12"))
        #expect(document.text.hasPrefix("Line beta of the body goes on."))
        #expect(document.text.components(separatedBy: "of the body").count - 1 == 30)
        #expect(document.pageStarts.count == 5)
    }

    @Test func shortPagesKeepTheirBodyLines() {
        let pages = (1...4).map { n in "Title line\nRepeated body line\nEnd \(n)." }
        let document = PDFText.assemble(pages: pages)
        #expect(document.text.components(separatedBy: "Repeated body line").count - 1 == 4)
    }

    @Test func aParagraphContinuesAcrossAPageBreakAndHyphensRejoin() {
        let document = PDFText.assemble(pages: ["The start of a sen-", "tence goes on. Next", "page."])
        #expect(document.text == "The start of a sentence goes on. Next\npage.")
        #expect(document.page(at: 0) == 1 && document.page(at: 25) == 2)
        #expect(document.page(at: document.text.unicodeScalars.count - 1) == 3)
    }

    @Test func emptyPagesAreReported() {
        let document = PDFText.assemble(pages: ["Text.", "  \u{0C}", "More."])
        #expect(document.emptyPages == [2])
        #expect(document.text == "Text.\n\nMore.")
    }

    @Test func cyrillicReadAsLatin1IsRepairedOnlyWhenItDominates() {
        let mojibake = String(repeating: "Íå î÷åíü êðàòêîå ââåäåíèå ", count: 20)
        #expect(PDFText.looksLikeCP1251AsLatin1([mojibake]))
        #expect(PDFText.repairCP1251("Íå î÷åíü") == "Не очень")
        #expect(!PDFText.looksLikeCP1251AsLatin1([String(repeating: "Crème brûlée à la française, déjà vu. ", count: 40)]))
    }
}

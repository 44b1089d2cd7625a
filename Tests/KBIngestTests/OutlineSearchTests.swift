import Testing
@testable import KBIngest

/// Outline titles are looked for only on the lines that can match (`PDFLoader.LineCandidates`):
/// the answer must be the one reading every line gives, for titles found and not found, from
/// any offset, with section numbers, runs of spaces, blank lines and whitespace before a newline.
@Suite struct OutlineSearchTests {
    static let text = """
        Contents
        1 Introduction
        1.1  Getting   started
        Getting started
        A.3 Saturn return

        \tIndented line
        saturn RETURN
        The Saturn return comes back \n\
        every 29 years.
        2.1 
        12.3.4 Functions and operators
        Functions and operators
        functions and  operators   
        Ω Greek title
        Last line
        """

    @Test func findingOnlyTheCandidateLinesGivesTheAnswerOfReadingEveryLine() {
        let original = Array(Self.text.unicodeScalars)
        let folded = PDFLoader.foldedForSearch(original)
        let lines = PDFLoader.LineCandidates(folded: folded, original: original)
        let titles = ["Introduction", "Getting started", "Saturn return", "saturn return", "Functions and operators",
                      "Indented line", "every 29 years.", "Ω Greek title", "Last line", "Contents", "Missing title",
                      "The Saturn return comes back every 29 years.", "2.1", "operators", "S", "Ω"]
        var found = 0
        for title in titles {
            let needle = PDFLoader.foldedForSearch(Array(title.unicodeScalars))
            for from in 0...original.count {
                let everyLine = PDFLoader.find(needle, in: folded, from: from, wholeLineOf: original)
                let candidates = PDFLoader.find(needle, in: folded, from: from, wholeLineOf: original, lines: lines)
                #expect(candidates == everyLine, "\"\(title)\" from \(from)")
                if everyLine != nil { found += 1 }
            }
        }
        #expect(found > 0, "no title was found at all, so nothing was compared")
    }
}

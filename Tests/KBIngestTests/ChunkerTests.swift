import KBCore
import Testing
@testable import KBIngest

@Suite struct ChunkerTests {
    func chunks(_ text: String, target: Int = 500, overlap: Int? = nil) throws -> [(text: String, span: Chunker.Span)] {
        let s = scalars(text)
        let fm = try FrontMatter.parse(s, name: "t.md")
        let structure = MarkdownStructure.parse(s, from: fm.bodyStart)
        let chunker = try Chunker(targetCharacters: target, overlapCharacters: overlap)
        return chunker.chunk(s, sections: structure.sections).map { (slice(text, $0.range), $0) }
    }

    @Test func splitsAtHeadingsBeforeSentences() throws {
        let text = "# Book\n\nIntro line.\n\n## Chapter\n\nFirst. Second.\n\n### Section\n\nDeep text.\n\n## Other\n\nLast."
        let result = try chunks(text)
        #expect(result.map(\.text) == ["Intro line.", "First. Second.", "Deep text.", "Last."])
        #expect(result.map(\.span.headingPath) == [["Book"], ["Book", "Chapter"], ["Book", "Chapter", "Section"], ["Book", "Other"]])
    }

    @Test(arguments: [200, 500, 1200])
    func neverExceedsTheTargetSize(target: Int) throws {
        let text = generatedMarkdown(sections: 6, paragraphsPerSection: 8, seed: UInt64(target))
        let result = try chunks(text, target: target)
        #expect(result.count > 6)
        for chunk in result {
            #expect(chunk.span.range.count <= target, "chunk of \(chunk.span.range.count) > \(target)")
        }
    }

    @Test(arguments: [120, 300, 700])
    func neverCutsInsideAWord(target: Int) throws {
        let text = generatedMarkdown(sections: 3, paragraphsPerSection: 10, seed: 7)
        let s = scalars(text)
        for chunk in try chunks(text, target: target) {
            let r = chunk.span.range
            #expect(r.lowerBound == 0 || s[r.lowerBound - 1].properties.isWhitespace, "starts inside a word: \(chunk.text.prefix(20))")
            #expect(r.upperBound == s.count || s[r.upperBound].properties.isWhitespace, "ends inside a word: \(chunk.text.suffix(20))")
            #expect(!chunk.text.first!.isWhitespace && !chunk.text.last!.isWhitespace)
        }
    }

    @Test func coversEveryWordOfTheBody() throws {
        let text = generatedMarkdown(sections: 4, paragraphsPerSection: 6, seed: 3)
        let result = try chunks(text, target: 250, overlap: 0)
        let s = scalars(text)
        var covered = Array(repeating: false, count: s.count)
        for chunk in result { for i in chunk.span.range { covered[i] = true } }
        let fm = try FrontMatter.parse(s, name: "t.md")
        let headingLines = Set(text.split(separator: "\n").filter { $0.hasPrefix("#") }.map(String.init))
        var lineStart = fm.bodyStart
        for line in text.unicodeScalars.dropFirst(fm.bodyStart).split(separator: "\n", omittingEmptySubsequences: false) {
            let lineText = String(String.UnicodeScalarView(line))
            if !headingLines.contains(lineText) {
                for (i, c) in line.enumerated() where !c.properties.isWhitespace {
                    #expect(covered[lineStart + i], "character \(lineStart + i) of \"\(lineText.prefix(30))\" not in any snippet")
                }
            }
            lineStart += line.count + 1
        }
    }

    @Test func prefersSentenceBoundariesWhenAParagraphIsTooLong() throws {
        let sentence = "This sentence has exactly forty-nine characters!!"
        let paragraph = Array(repeating: sentence, count: 6).joined(separator: " ")
        let result = try chunks(paragraph, target: 120, overlap: 0)
        for chunk in result {
            #expect(chunk.text.hasSuffix("!!"), "\(chunk.text)")
            #expect(chunk.text.hasPrefix("This"), "\(chunk.text)")
        }
        #expect(result.count == 3)
    }

    @Test func repeatsTheEndOfThePreviousSnippetAsOverlap() throws {
        let paragraph = (1...60).map { "word\($0)" }.joined(separator: " ")
        let result = try chunks(paragraph, target: 100, overlap: 30)
        #expect(result.count > 3)
        for (previous, next) in zip(result, result.dropFirst()) {
            #expect(next.span.range.lowerBound < previous.span.range.upperBound)
            #expect(previous.span.range.upperBound - next.span.range.lowerBound <= 30)
        }
    }

    @Test func aWordLongerThanTheTargetIsASnippetOfItsOwn() throws {
        let long = String(repeating: "x", count: 140)
        let result = try chunks("short words here \(long) and more", target: 60, overlap: 0)
        #expect(result.map(\.text) == ["short words here", long, "and more"])
    }

    @Test func fencedCodeIsOneBlockAndItsHashLinesAreNotHeadings() throws {
        let text = "# Title\n\n```sh\n# not a heading\n\necho hi\n```\n\nAfter."
        let result = try chunks(text)
        #expect(result.map(\.text) == ["```sh\n# not a heading\n\necho hi\n```\n\nAfter."])
        #expect(result[0].span.headingPath == ["Title"])
    }

    @Test func setextHeadingsOpenSections() throws {
        let result = try chunks("Top\n===\n\nA.\n\nSub\n---\n\nB.")
        #expect(result.map(\.span.headingPath) == [["Top"], ["Top", "Sub"]])
    }

    @Test(arguments: [(10, nil as Int?), (500, 300), (500, -1)])
    func rejectsSizesThatCannotWork(target: Int, overlap: Int?) {
        #expect(throws: KBError.self) { try Chunker(targetCharacters: target, overlapCharacters: overlap) }
    }
}

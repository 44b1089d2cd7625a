import Foundation
import KBCore
import Testing
@testable import KBIngest

@Suite struct NoteLoaderTests {
    let loader = NoteLoader(options: IngestOptions())

    func load(_ text: String, path: String = "/n/venus.md", options: IngestOptions = IngestOptions()) throws -> SourceDocument {
        try NoteLoader(options: options).load(Data(text.utf8), path: path, contentHash: "h")
    }

    @Test func titleComesFromFrontMatterThenFirstHeadingThenFileName() throws {
        #expect(try load("---\ntitle: FM\n---\n# H1\ntext").source.title == "FM")
        #expect(try load("## Sub\n# H1\ntext").source.title == "H1")
        #expect(try load("just text", path: "/n/venus-notes.md").source.title == "venus-notes")
    }

    @Test func snippetOffsetsSliceBackToTheirText() throws {
        let text = "---\ntitle: Ünïcode\n---\n# Привет\n\n" + generatedMarkdown(sections: 3, paragraphsPerSection: 5, seed: 11)
            + "\r\n\r\nEmoji 👩‍👩‍👧 line. Arabic القمر line."
        let document = try load(text, options: IngestOptions(chunker: try Chunker(targetCharacters: 200)))
        #expect(document.snippets.count > 5)
        for snippet in document.snippets {
            #expect(slice(text, snippet.start..<snippet.end) == snippet.text)
        }
        #expect(document.snippets.map(\.ordinal) == Array(0..<document.snippets.count))
    }

    @Test func snippetsCarrySourceTagsCommandLineTagsAndVocabularyTags() throws {
        let vocabulary = try TagVocabulary(yaml: "planet:venus: [venus]", name: "v")
        let options = IngestOptions(tags: [Tag("Imported")], vocabulary: vocabulary)
        let document = try load("---\ntags: [astro]\n---\n# Mars\n\nMars rules war.\n\n# Venus\n\nLove.", options: options)
        #expect(document.source.tags == [Tag("astro"), Tag("imported")])
        #expect(document.snippets[0].tags == [Tag("astro"), Tag("imported")])
        #expect(document.snippets[1].tags == [Tag("astro"), Tag("imported"), Tag("planet:venus")])
    }

    @Test func plainTextIsSplitIntoParagraphsWithoutHeadings() throws {
        let document = try load("# not a heading in txt\n\nSecond paragraph.", path: "/n/a.txt")
        #expect(document.snippets.map(\.text) == ["# not a heading in txt\n\nSecond paragraph."])
        #expect(document.snippets[0].headingPath.isEmpty)
        #expect(document.source.title == "a")
    }

    @Test func aFewInvalidBytesAreRepairedWithAWarning() throws {
        var bytes = [UInt8](String(repeating: "plain text ", count: 30).utf8)
        bytes.insert(0xFF, at: 50)
        let document = try loader.load(Data(bytes), path: "/n/a.txt", displayName: "a.txt", contentHash: "h")
        #expect(document.warnings == ["a.txt: replaced 1 invalid UTF-8 sequence(s) with U+FFFD"])
        #expect(document.snippets[0].text.contains("\u{FFFD}"))
    }

    @Test func textThatIsNotUTF8FailsWithTheFix() throws {
        let latin1 = Data("café crème brûlée à la carte".data(using: .isoLatin1)!)
        let error = try #require(throws: KBError.self) { try loader.load(latin1, path: "/n/a.txt", displayName: "a.txt", contentHash: "h") }
        #expect(error.code == .invalidText)
        #expect(error.message.contains("iconv"))
    }

    @Test func binaryFilesFail() {
        #expect(throws: KBError.self) { try loader.load(Data([0x41, 0x00, 0x42]), path: "/n/a.md", contentHash: "h") }
    }

    @Test func aByteOrderMarkIsSkipped() throws {
        let document = try loader.load(Data([0xEF, 0xBB, 0xBF] + Array("# Title\n\nBody".utf8)), path: "/n/a.md", contentHash: "h")
        #expect(document.source.title == "Title")
        #expect(document.snippets.map(\.text) == ["Body"])
    }
}

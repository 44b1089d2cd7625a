import Foundation
import KBCore
import Testing
@testable import KBIngest

/// PDFs made by scripts/fixtures/make-pdf-fixtures.py.
enum PDFFixture {
    static func path(_ name: String) -> String {
        Bundle.module.url(forResource: name, withExtension: "pdf", subdirectory: "Fixtures/pdf")!.path
    }

    static func load(_ name: String, password: String? = nil, chunkSize: Int = 300) throws -> SourceDocument {
        let path = path(name)
        let options = IngestOptions(chunker: try Chunker(targetCharacters: chunkSize))
        return try PDFLoader(options: options, password: password).load(path: path, displayName: "\(name).pdf", contentHash: "h")
    }

    static func error(_ name: String, password: String? = nil) -> String {
        do {
            _ = try load(name, password: password)
            return "no error"
        } catch let error as KBError {
            return error.message
        } catch {
            return "\(error)"
        }
    }
}

@Suite struct PDFLoaderTests {
    @Test func aBookGetsItsTitleKeywordsAndPageLabels() throws {
        let document = try PDFFixture.load("book")
        #expect(document.source.kind == .pdf)
        #expect(document.source.title == "The Fixture Book")
        #expect(document.source.tags == [Tag("astronomy"), Tag("fixtures")])
        // The two short front-matter pages share the Preface section and fit one snippet.
        let preface = try #require(document.snippets.first { $0.text.contains("lower-case roman numeral") })
        #expect(preface.text.contains("second front-matter page"))
        #expect(preface.pages == PageRange(start: 1, end: 2, startLabel: "i", endLabel: "ii"))
        #expect(preface.pages?.citation == "pp. i–ii")
        #expect(preface.headingPath == ["Preface"])
    }

    @Test func aPhraseIsCitedWithItsPhysicalPageAndPrintedLabel() throws {
        let document = try PDFFixture.load("book")
        let hit = try #require(document.snippets.first { $0.text.contains("zebra quartz") })
        #expect(hit.pages?.start == 4)
        #expect(hit.pages?.startLabel == "2")
        #expect(hit.pages?.citation == "p. 2")
        #expect(hit.headingPath == ["1 Chapter One", "1.2 The Known Page"])
    }

    @Test func aParagraphContinuesAcrossAPageBreakIntoOneSnippet() throws {
        let document = try PDFFixture.load("book", chunkSize: 2000)
        let spanning = try #require(document.snippets.first { $0.pages?.start == 4 && $0.pages?.end == 5 })
        #expect(spanning.text.contains("transparency"))
        #expect(spanning.pages?.citation == "pp. 2–3")
    }

    @Test func textIsCleaned() throws {
        let all = try PDFFixture.load("book").snippets.map(\.text).joined(separator: "\n")
        #expect(all.contains("an example of a word broken"))
        #expect(all.contains("well-known"))
        #expect(!all.contains("running header"))
        #expect(all.contains("Київ є столицею України"))
        let lines = all.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(!lines.contains("ii") && !lines.contains("3"))   // bare page numbers are gone
    }

    @Test func offsetsSliceTheDocumentText() throws {
        let document = try PDFFixture.load("book")
        for (a, b) in zip(document.snippets, document.snippets.dropFirst()) {
            #expect(a.start < b.start && a.end > a.start)
        }
    }

    @Test func arabicStaysInLogicalOrderWithoutBidiMarks() throws {
        let text = try PDFFixture.load("arabic").snippets.map(\.text).joined()
        #expect(text.contains("مرحبا بالعالم"))
        #expect(!text.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) })
    }

    @Test func twoColumnsComeOutColumnByColumn() throws {
        let text = try PDFFixture.load("columns", chunkSize: 5000).snippets.map(\.text).joined(separator: "\n")
        let lastApple = try #require(text.range(of: "Apples", options: .backwards))
        let firstOrange = try #require(text.range(of: "Oranges"))
        #expect(lastApple.lowerBound < firstOrange.lowerBound)
    }

    @Test func encryptionNeedsTheRightPassword() throws {
        #expect(PDFFixture.error("encrypted") == "encrypted.pdf is encrypted. Pass its password with --password.")
        #expect(PDFFixture.error("encrypted", password: "wrong") == "encrypted.pdf is encrypted and the password given with --password does not open it.")
        let opened = try PDFFixture.load("encrypted", password: "secret")
        #expect(opened.snippets.contains { $0.text.contains("encrypted vault") })
    }

    @Test func damagedAndFakeFilesFailWithTheirOwnMessages() throws {
        #expect(PDFFixture.error("truncated") == "truncated.pdf is damaged or truncated: poppler cannot read it. Re-download or re-export the PDF.")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-pdf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let empty = folder.appendingPathComponent("empty.pdf"), fake = folder.appendingPathComponent("fake.pdf")
        try Data().write(to: empty)
        try Data("<html>not a pdf</html>".utf8).write(to: fake)
        let loader = PDFLoader(options: IngestOptions())
        #expect(throws: KBError.self) { try loader.load(path: empty.path, displayName: "empty.pdf", contentHash: "") }
        do {
            _ = try loader.load(path: fake.path, displayName: "fake.pdf", contentHash: "")
            Issue.record("a fake PDF loaded")
        } catch let error as KBError {
            #expect(error.message == "fake.pdf is not a PDF: it does not start with %PDF- (it starts with \"<html>not·a·pdf<\").")
        }
    }

    @Test func aScannedPDFFailsAndAPartlyScannedOneWarnsByPage() throws {
        #expect(PDFFixture.error("scanned") == "scanned.pdf: no text layer on 1 of 1 pages (scanned? OCR is not enabled).")
        let partly = try PDFFixture.load("partly-scanned")
        #expect(partly.warnings == ["partly-scanned.pdf: no text on 1 of 3 pages (2); images only?"])
        #expect(partly.snippets.map { $0.pages! } == [PageRange(start: 1, end: 3)])
        #expect(partly.snippets[0].text.contains("Page 1 has") && partly.snippets[0].text.contains("Page 3 has"))
    }
}

import Foundation
import KBCore
import KBTestSupport
import Testing
@testable import KBIngest

@Suite struct EPUBLoaderTests {
    let options = IngestOptions()

    @Test func anEPUB3ReadsTheSpineInOrderWithTheNavAsHeadingsAndRightToLeftTextIntact() throws {
        let document = try EPUBLoader(options: options).load(try FormatFixtures.arabicEPUB3(), path: "/books/stars.epub", contentHash: "h")
        #expect(document.source.kind == .epub)
        #expect(document.source.title == "كتاب النجوم")
        #expect(Set(document.source.tags) == [Tag("author:أبو معشر"), Tag("astrology"), Tag("lang:ar")])
        let texts = document.snippets.map(\.text)
        #expect(texts.count == 3)
        #expect(texts[0] == "الشمس في برج الحمل تعطي قوة وشجاعة.")
        #expect(texts[1] == "القمر يحكم العواطف.")
        // The footnote stays with the paragraph that refers to it, and is not repeated after it.
        #expect(texts[2] == "تحدث عودة زحل كل تسع وعشرين سنة١.\nمدار زحل ٢٩٫٥ سنة.")
        #expect(document.snippets.map(\.headingPath) == [["الفصل الأول"], ["الفصل الثاني"], ["الفصل الثاني", "عودة زحل"]])
        #expect(!texts.joined().contains("نجمة"), "images are skipped, alt text too")
    }

    @Test func anEPUB2TakesItsHeadingsFromTheNCX() throws {
        let document = try EPUBLoader(options: options).load(try FormatFixtures.englishEPUB2(), path: "/books/returns.epub", contentHash: "h")
        #expect(document.source.title == "Planets and Returns")
        #expect(Set(document.source.tags) == [Tag("author:ada-lovelace"), Tag("astrology"), Tag("saturn"), Tag("lang:en")])
        #expect(document.snippets.map(\.headingPath) == [[], ["Chapter 3"], ["Chapter 3", "The Saturn return"]])
        #expect(document.snippets.last?.text == "Around the twenty-ninth year the ringed planet comes home and asks for accounts.")
        #expect(document.snippets.last?.headingPathString == "Chapter 3 › The Saturn return")
    }

    @Test func lockedAndBrokenEPUBsFailWithTheirNameAndTheReason() throws {
        let loader = EPUBLoader(options: options)
        let locked = #expect(throws: KBError.self) { try loader.load(try FormatFixtures.lockedEPUB(), path: "/b/locked.epub", contentHash: "h") }
        #expect(locked?.message.contains("/b/locked.epub is protected by DRM") == true)
        let broken = #expect(throws: KBError.self) { try loader.load(Data("not a zip".utf8), path: "/b/broken.epub", contentHash: "h") }
        #expect(broken?.message.contains("/b/broken.epub is not an EPUB") == true)
        let empty = try FormatFixtures.zip([("mimetype", "application/epub+zip")])
        let noContainer = #expect(throws: KBError.self) { try loader.load(empty, path: "/b/empty.epub", contentHash: "h") }
        #expect(noContainer?.message.contains("META-INF/container.xml") == true)
    }
}

@Suite struct HTMLLoaderTests {
    let page = """
        <!DOCTYPE html>
        <html lang="uk-UA"><head><title>Повернення Сатурна</title>
        <meta name="keywords" content="astrology, Saturn"><meta name="description" content="What a return means">
        <style>p { color: red }</style><script>var hidden = "script text";</script></head>
        <body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
        <div class="sidebar">Popular posts</div>
        <main><h1>Saturn returns</h1><p>The <b>Saturn return</b>
        happens   every 29 years.<a href="#fn1" role="doc-noteref">1</a></p>
        <h2>First return</h2><p>Around age 29,<br>life is reviewed.</p>
        <table><tr><th>Age</th><th>Return</th></tr><tr><td>29</td><td>first</td></tr></table>
        <aside role="doc-footnote" id="fn1">Saturn's orbit takes 29.46 years.</aside>
        <aside>Subscribe to the newsletter</aside></main>
        <footer>Copyright 2026</footer></body></html>
        """

    @Test func aPageKeepsItsMainTextWithoutNavigationFootersScriptsOrStyles() throws {
        let document = try HTMLLoader(options: IngestOptions()).load(Data(page.utf8), path: "/site/saturn.html", contentHash: "h")
        #expect(document.source.kind == .html)
        #expect(document.source.title == "Повернення Сатурна")
        #expect(document.source.tags == [Tag("astrology"), Tag("saturn"), Tag("lang:uk")])
        #expect(document.source.keywords == ["What a return means"])
        #expect(document.snippets.map(\.text) == [
            "The Saturn return happens every 29 years.1\nSaturn's orbit takes 29.46 years.",
            "Around age 29,\nlife is reviewed.\n\nAge | Return\n\n29 | first",
        ])
        #expect(document.snippets.map(\.headingPath) == [["Saturn returns"], ["Saturn returns", "First return"]])
        let all = document.snippets.map(\.text).joined()
        for noise in ["Home", "Popular", "script text", "color", "Subscribe", "Copyright"] { #expect(!all.contains(noise), "\(noise)") }
    }

    @Test func withoutMainTheArticlesAreTheText() throws {
        let html = "<html><body><nav>Menu</nav><article><h1>One</h1><p>First article.</p></article><p>Sidebar text</p><article><p>Second.</p></article></body></html>"
        let document = try HTMLLoader(options: IngestOptions()).load(Data(html.utf8), path: "/site/a.htm", contentHash: "h")
        #expect(document.source.title == "One")
        // Both articles, without the text between them; the second is still under the first's heading.
        #expect(document.snippets.map(\.text) == ["First article.\n\nSecond."])
    }

    @Test func binaryBytesNamedHTMLFailClearly() throws {
        let error = #expect(throws: KBError.self) {
            try HTMLLoader(options: IngestOptions()).load(Data("%PDF-1.7 binary".utf8), path: "/site/x.html", contentHash: "h")
        }
        #expect(error?.message.contains("/site/x.html is a PDF, not an HTML page") == true)
    }
}

@Suite struct DOCXLoaderTests {
    @Test func paragraphsHeadingsAndTablesInOrderWithCoreProperties() throws {
        let document = try DOCXLoader(options: IngestOptions()).load(try FormatFixtures.docx(), path: "/docs/lease.docx", contentHash: "h")
        #expect(document.source.kind == .docx)
        #expect(document.source.title == "Flat lease 2026")
        #expect(document.source.tags == [Tag("lease"), Tag("housing"), Tag("author:ada")])
        #expect(document.source.keywords == ["Renting the flat"])
        #expect(document.snippets.map(\.headingPath) == [["Lease terms"], ["Lease terms", "Deposit"]])
        #expect(document.snippets.map(\.text) == [
            "The tenant pays rent monthly.\n\nRent: 1200 euros\ndue on the first day.",
            "Two months of rent are held as deposit.\n\nItem | Amount\n\nDeposit | 2400",
        ])
    }

    @Test func otherZipsAndBrokenFilesFailAlone() throws {
        let loader = DOCXLoader(options: IngestOptions())
        let notWord = #expect(throws: KBError.self) {
            try loader.load(try FormatFixtures.zip([("xl/workbook.xml", "<workbook/>")]), path: "/d/sheet.docx", contentHash: "h")
        }
        #expect(notWord?.message.contains("/d/sheet.docx is not a Word document") == true)
        let broken = #expect(throws: KBError.self) {
            try loader.load(try FormatFixtures.zip([("word/document.xml", "<w:document><w:body>")]), path: "/d/cut.docx", contentHash: "h")
        }
        #expect(broken?.message.contains("word/document.xml") == true)
    }
}

@Suite struct RecordLoaderTests {
    var options: IngestOptions {
        var options = IngestOptions()
        options.records = RecordMapping(text: ["text"], title: "name", tags: ["planet", "aspect", "tags"], weight: "weight", id: "id")
        return options
    }

    @Test func jsonRecordsBecomeOneSnippetEachWithTagsWeightsAndLocations() throws {
        let json = """
            [{"id": "r1", "name": "Saturn square Sun", "planet": "Saturn", "aspect": "square", "text": "A time of tests.", "tags": ["career"], "weight": 2},
             {"id": "r2", "name": "Venus trine Moon", "planet": "Venus", "aspect": "trine", "text": "Ease in love.", "weight": 1}]
            """
        let document = try RecordLoader(options: options).load(Data(json.utf8), path: "/rules/aspects.json", contentHash: "h")
        #expect(document.source.kind == .record)
        #expect(document.snippets.map(\.text) == ["A time of tests.", "Ease in love."])
        #expect(document.snippets.map(\.headingPath) == [["Saturn square Sun"], ["Venus trine Moon"]])
        #expect(document.snippets[0].tags == [Tag("planet:saturn"), Tag("aspect:square"), Tag("career")])
        #expect(document.snippets.map(\.weight) == [2, nil])
    }

    @Test func jsonLinesAndCSVReadTheSameRecords() throws {
        let jsonl = """
            {"id": "a", "text": "First rule.", "planet": "Mars", "weight": "1.5"}

            {"id": "b", "text": "Second rule.", "planet": "Mars"}
            """
        let csv = "id,text,planet,weight\na,First rule.,Mars,1.5\nb,\"Second rule.\",Mars,\n"
        for (name, data) in [("r.jsonl", jsonl), ("r.csv", csv)] {
            let document = try RecordLoader(options: options).load(Data(data.utf8), path: "/rules/" + name, contentHash: "h")
            #expect(document.snippets.map(\.text) == ["First rule.", "Second rule."], "\(name)")
            #expect(document.snippets.map(\.weight) == [1.5, nil], "\(name)")
            #expect(document.snippets.map(\.headingPath) == [["a"], ["b"]], "\(name): the id is the location without a title field")
            #expect(document.snippets[1].tags == [Tag("planet:mars")], "\(name)")
        }
    }

    @Test func aLongRecordIsCutWithinItselfAndNeverMergedWithTheNext() throws {
        var options = options
        options.chunker = try Chunker(targetCharacters: 60, overlapCharacters: 0)
        let long = String(repeating: "Saturn asks for patience. ", count: 5)
        let json = #"[{"id": "1", "text": "\#(long)"}, {"id": "2", "text": "Short."}, {"id": "3", "text": "Tiny."}]"#
        let document = try RecordLoader(options: options).load(Data(json.utf8), path: "/r.json", contentHash: "h")
        #expect(document.snippets.count >= 4)
        #expect(document.snippets.suffix(2).map(\.text) == ["Short.", "Tiny."])
        #expect(Set(document.snippets.dropLast(2).map(\.headingPath)) == [["1"]])
        #expect(document.snippets.map(\.ordinal) == Array(0..<document.snippets.count))
    }

    @Test func badRecordsFailWithTheFileAndTheRecord() throws {
        let loader = RecordLoader(options: options)
        func message(_ text: String, _ path: String) -> String? {
            (#expect(throws: KBError.self) { try loader.load(Data(text.utf8), path: path, contentHash: "h") })?.message
        }
        #expect(message(#"[{"id": "1", "text": "a", "weight": 0}]"#, "/w.json")?.contains("/w.json: record 1 has the weight '0'") == true)
        #expect(message(#"[{"id": "1", "text": "a"}, {"id": "1", "text": "b"}]"#, "/d.json")?.contains("record 2 repeats the id '1'") == true)
        #expect(message(#"[{"id": "1", "text": "a""#, "/t.json")?.contains("/t.json is not valid JSON") == true)
        #expect(message(#"{"text": "a"}"#, "/o.json")?.contains("not an array of records") == true)
        #expect(message(#"[{"body": "a"}]"#, "/f.json")?.contains("no record has a field 'text'") == true)
        #expect(message("{\"text\": \"a\"}\nnot json\n", "/l.jsonl")?.contains("/l.jsonl line 2 is not valid JSON") == true)
    }

    @Test func theVocabularyFileCanGiveTheMapping() throws {
        let vocabulary = try TagVocabulary(yaml: """
            planet:saturn: [saturn]
            records: {text: [summary, text], title: name, tags: planet, weight: boost, id: key}
            """, name: "tags.yaml")
        #expect(vocabulary.records == RecordMapping(text: ["summary", "text"], title: "name", tags: ["planet"], weight: "boost", id: "key"))
        #expect(vocabulary.tags == [Tag("planet:saturn")])
        #expect(throws: KBError.self) { try TagVocabulary(yaml: "records: {colour: red}", name: "v.yaml") }
    }
}

import KBCore
import Testing
@testable import KBIngest

@Suite struct FrontMatterTests {
    @Test func readsTitleTagsAliasesAndScalarKeys() throws {
        let text = """
            ---
            title: Venus in the Tenth House
            tags: [planet/venus, Career Change]
            aliases:
              - Venus MC
            area: career
            planet: Venus
            keywords: [love, money]
            weight: 10
            description: A long description that is searchable but certainly too long to be a sensible tag for anything.
            nested:
              map: ignored
            ---
            Body.
            """
        let fm = try FrontMatter.parse(scalars(text), name: "venus.md")
        #expect(fm.title == "Venus in the Tenth House")
        #expect(fm.tags == [Tag("planet/venus"), Tag("career-change"), Tag("area:career"), Tag("planet:venus"),
                            Tag("keywords:love"), Tag("keywords:money"), Tag("weight:10")])
        #expect(fm.keywords == ["Venus MC", "A long description that is searchable but certainly too long to be a sensible tag for anything."])
        #expect(slice(text, fm.bodyStart..<text.unicodeScalars.count) == "Body.")
    }

    @Test func acceptsTagsAsACommaSeparatedString() throws {
        let fm = try FrontMatter.parse(scalars("---\ntags: venus, love ,  career\n---\n"), name: "x.md")
        #expect(fm.tags == [Tag("venus"), Tag("love"), Tag("career")])
    }

    @Test func withoutFrontMatterEverythingIsBody() throws {
        let fm = try FrontMatter.parse(scalars("# Title\n---\ntext"), name: "x.md")
        #expect(fm == FrontMatter())
    }

    @Test func malformedYAMLIsAClearErrorNamingTheFileAndLine() throws {
        let text = "---\ntitle: ok\ntags: [unclosed\n---\nbody"
        let error = try #require(throws: KBError.self) { try FrontMatter.parse(scalars(text), name: "notes/bad.md") }
        #expect(error.code == .invalidFrontMatter)
        #expect(error.message.hasPrefix("notes/bad.md: front matter is not valid YAML (line"))
    }

    @Test func unclosedFrontMatterIsAnError() throws {
        let error = try #require(throws: KBError.self) { try FrontMatter.parse(scalars("---\ntitle: x\nbody"), name: "a.md") }
        #expect(error.message.contains("no closing `---`"))
    }

    @Test func frontMatterThatIsNotAMappingIsAnError() throws {
        let error = try #require(throws: KBError.self) { try FrontMatter.parse(scalars("---\n- a\n- b\n---\n"), name: "a.md") }
        #expect(error.message.contains("must be a YAML mapping"))
    }

    @Test func windowsLineEndingsAreUnderstood() throws {
        let fm = try FrontMatter.parse(scalars("---\r\ntitle: Win\r\n---\r\nBody"), name: "w.md")
        #expect(fm.title == "Win")
        #expect(fm.bodyStart == "---\r\ntitle: Win\r\n---\r\n".unicodeScalars.count)
    }
}

@Suite struct TagTests {
    @Test(arguments: [
        ("Area : Career Change", "area:career-change"),
        ("  PLANET:Venus ", "planet:venus"),
        ("draft", "draft"),
        ("a:b:c", "a:b:c"),
    ])
    func normalisesCaseSpacesAndKeys(raw: String, expected: String) {
        #expect(Tag(raw).name == expected)
    }

    @Test func splitsKeyAndValue() {
        #expect(Tag("area:career").key == "area")
        #expect(Tag("area:career").value == "career")
        #expect(Tag("draft").key == nil)
    }
}

import KBCore
import Testing
@testable import KBIngest

@Suite struct TagVocabularyTests {
    let vocabulary = try! TagVocabulary(yaml: """
        planet:venus: [Venus, morning star, /venus(ian)?s?/]
        area:career: career, vocation
        aspect:trine: [trine]
        """, name: "tags.yaml")

    @Test func matchesWholeWordsCaseInsensitively() {
        #expect(vocabulary.tags(for: "A VOCATION calls") == [Tag("area:career")])
        #expect(vocabulary.tags(for: "the trines and careers").isEmpty)
    }

    @Test func matchesPhrasesAcrossWhitespace() {
        #expect(vocabulary.tags(for: "the Morning\n star rises") == [Tag("planet:venus")])
    }

    @Test func matchesRegularExpressions() {
        #expect(vocabulary.tags(for: "venusian light") == [Tag("planet:venus")])
    }

    @Test func returnsEveryMatchingTag() {
        #expect(Set(vocabulary.tags(for: "Venus trine the career point")) == [Tag("planet:venus"), Tag("area:career"), Tag("aspect:trine")])
    }

    @Test func anInvalidRegularExpressionIsAClearError() throws {
        let error = try #require(throws: KBError.self) { try TagVocabulary(yaml: "x: [/(/]", name: "v.yaml") }
        #expect(error.message.contains("v.yaml: tag 'x' has an invalid regular expression /(/"))
    }

    @Test func aVocabularyThatIsNotAMappingIsAnError() {
        #expect(throws: KBError.self) { try TagVocabulary(yaml: "- a\n- b", name: "v.yaml") }
    }
}

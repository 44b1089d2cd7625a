import Foundation
@testable import KBContext
import KBCore
import KBTestSupport
import Testing

struct TokenFixture: Decodable {
    struct Sample: Decodable {
        var language: String
        var source: String
        var text: String
        var counts: [String: Int]
    }
    var encodings: [String]
    var samples: [Sample]

    static func load() throws -> TokenFixture {
        let url = try #require(Bundle.module.url(forResource: "token-counts", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(TokenFixture.self, from: Data(contentsOf: url))
    }
}

@Suite struct TokenCounterTests {
    @Test func neverCountsFewerTokensThanCl100kOrO200kOnEnglishRussianArabicAndMixedText() throws {
        let fixture = try TokenFixture.load()
        #expect(Set(fixture.samples.map(\.language)) == ["en", "ru", "ar", "mixed"])
        #expect(fixture.samples.count > 200)
        let counter = ConservativeTokenCounter()
        for sample in fixture.samples {
            let reference = sample.counts.values.max()!
            #expect(counter.count(sample.text) >= reference, "\(sample.language) \(sample.source): \(sample.text.prefix(60))")
        }
    }

    @Test func itStaysWithinTwiceTheReferenceOnProse() throws {
        // Over-counting wastes budget: check it stays useful.
        let fixture = try TokenFixture.load()
        let counter = ConservativeTokenCounter()
        for language in ["en", "ru", "ar"] {
            let samples = fixture.samples.filter { $0.language == language }
            let mine = samples.reduce(0) { $0 + counter.count($1.text) }
            let reference = samples.reduce(0) { $0 + $1.counts["cl100k_base"]! }
            #expect(Double(mine) / Double(reference) < 2, "\(language): \(mine) vs \(reference)")
        }
    }

    @Test func concatenationNeverCostsMoreThanTheParts() {
        let counter = ConservativeTokenCounter()
        let parts = ["Venus rules", " Taurus. ", "Сатурн", " — 29.5 years\n", "زحل", "✨"]
        for a in parts {
            for b in parts {
                #expect(counter.count(a + b) <= counter.count(a) + counter.count(b) + 1, "\(a)|\(b)")
            }
        }
    }

    /// The rules of `ConservativeTokenCounter`'s documentation, applied scalar by scalar.
    static func definedCount(_ text: String) -> Int {
        var tally = ConservativeTokenCounter.Tally()
        for scalar in text.unicodeScalars {
            tally.add(ConservativeTokenCounter.classify(scalar), upper: scalar.value >= 0x41 && scalar.value <= 0x5A,
                      bytes: String(scalar).utf8.count)
        }
        tally.flush()
        return tally.tokens
    }

    @Test func countingBytesMatchesCountingScalars() {
        let pieces = ["Venus", "rUles", "TAURUS", " ", "  ", "\t", "\r\n", "\n", "29.5", "—", "Сатурн", "زحل", "café", "cafe\u{301}",
                      "naïve", "ǅemal", "✨", "🪐", "日本語", "\u{2028}", "\u{00A0}", "x2", "(", "\"", "a\u{0}b"]
        var rng = SeededGenerator(seed: 5)
        let counter = ConservativeTokenCounter()
        for _ in 0..<500 {
            let text = (0..<Int.random(in: 0...30, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }
                .joined(separator: Bool.random(using: &rng) ? "" : " ")
            #expect(counter.count(text) == Self.definedCount(text), "\(text)")
        }
    }

    @Test func emptyTextIsFreeAndSymbolsCostTheirBytes() {
        let counter = ConservativeTokenCounter()
        #expect(counter.count("") == 0)
        #expect(counter.count("🪐") == 4)
        #expect(counter.count("12345") == 5)
        #expect(counter.count("SearchQuery") == counter.count("Search") + counter.count("Query"))
    }
}

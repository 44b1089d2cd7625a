import Foundation
import KBCore
import KBRetrieval
import KBTestSupport
import Testing
@testable import KBContext

/// The fast choosing code (hashed word sets, incremental MMR, Character-array overlap) must
/// choose exactly what the plain definitions choose. The definitions are here, written the
/// straightforward way (string sets, MMR recomputed from scratch, `hasSuffix`).
@Suite struct ChoosingEquivalenceTests {
    static func words(_ text: String) -> Set<String> {
        Set(text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init))
    }

    static func similarity(_ a: Set<String>, _ b: Set<String>) -> Double {
        guard !a.isEmpty, !b.isEmpty else { return a.isEmpty && b.isEmpty ? 1 : 0 }
        let shared = Double(a.intersection(b).count)
        let containment = shared / Double(min(a.count, b.count))
        return max(shared / Double(a.union(b).count), containment >= 0.95 && min(a.count, b.count) >= 8 ? containment : 0)
    }

    static func definedPrepare(_ items: [ContextItem], limit: Int, options: ContextOptions) -> [ContextItem] {
        let ranked = items.enumerated().sorted { $0.element.score != $1.element.score ? $0.element.score > $1.element.score : $0.offset < $1.offset }
        var kept: [(item: ContextItem, words: Set<String>)] = []
        for (_, item) in ranked {
            let set = words(item.text)
            if !kept.contains(where: { similarity($0.words, set) >= options.duplicateThreshold }) { kept.append((item, set)) }
        }
        let merged = ContextAssembler.mergeNeighbours(kept.map(\.item))
        guard merged.count > limit else { return merged.sorted { $0.score > $1.score } }
        let sets = merged.map { words($0.text) }
        let scale = max(merged.map(\.score).max() ?? 1, 0) > 0 ? merged.map(\.score).max()! : 1
        var picked: [Int] = [], left = Array(merged.indices)
        while picked.count < limit, !left.isEmpty {
            var best = left[0], bestValue = -Double.infinity
            for i in left {
                let redundancy = picked.map { similarity(sets[i], sets[$0]) }.max() ?? 0
                let value = options.diversity * merged[i].score / scale - (1 - options.diversity) * redundancy
                if value > bestValue { best = i; bestValue = value }
            }
            picked.append(best)
            left.removeAll { $0 == best }
        }
        return picked.map { merged[$0] }.sorted { $0.score > $1.score }
    }

    static func definedOverlap(_ a: String, _ b: String) -> Int {
        let limit = min(a.count, b.count, 600)
        guard limit >= 12 else { return 0 }
        for k in stride(from: limit, through: 12, by: -1) {
            let prefix = b.prefix(k)
            if a.hasSuffix(prefix), k == b.count || b[b.index(b.startIndex, offsetBy: k)].isWhitespace || prefix.last!.isWhitespace {
                return k
            }
        }
        return 0
    }

    static let vocabulary = ["Venus", "rules", "VENUS", "Сатурн", "управляет", "الزهرة", "كوكب", "12", "café", "cafe\u{301}", "—", "✨",
                             "house", "career", "\r\n", "\n", "(", "the", "reputation,", "naïve", "ǅemal", "x2", "déjà-vu"]

    static func text(_ rng: inout SeededGenerator, words: ClosedRange<Int>) -> String {
        (0..<Int.random(in: words, using: &rng)).map { _ in vocabulary.randomElement(using: &rng)! }.joined(separator: " ")
    }

    @Test func choosingMatchesTheDefinitionOverRandomItems() {
        var rng = SeededGenerator(seed: 7)
        let assembler = ContextAssembler(counter: ConservativeTokenCounter())
        for round in 0..<400 {
            // Some near-copies, so that deduplication and merging have work to do.
            var items: [ContextItem] = []
            for i in 0..<Int.random(in: 0...24, using: &rng) {
                var text = Self.text(&rng, words: 1...60)
                if i > 0, Bool.random(using: &rng) { text = items[i - 1].text + " " + Self.text(&rng, words: 0...3) }
                items.append(item(text, score: Double(Int.random(in: 0...20, using: &rng)) / 20, path: "/s/\(i % 3)",
                                  ordinal: Int.random(in: 0...5, using: &rng), kind: i % 7 == 0 ? .memory : .note,
                                  memory: i % 7 == 0 ? "m\(i)" : nil))
            }
            let limit = Int.random(in: 0...10, using: &rng)
            let defined = Self.definedPrepare(items, limit: limit, options: assembler.options)
            #expect(assembler.prepare(items, limit: limit) == defined, "round \(round)")
        }
    }

    @Test func wordSetsHoldTheDefinedWords() {
        var rng = SeededGenerator(seed: 11)
        for _ in 0..<300 {
            let a = Self.text(&rng, words: 0...30), b = Self.text(&rng, words: 0...30)
            let x = WordSets.words(a), y = WordSets.words(b)
            #expect(x.count == Self.words(a).count)
            #expect(WordSets.similarity(x, y) == Self.similarity(Self.words(a), Self.words(b)), "\(a) | \(b)")
            for threshold in [0.0, 0.3, 0.5, 0.8, 0.95, 1.0] {
                #expect(WordSets.reaches(x, y, threshold) == (Self.similarity(Self.words(a), Self.words(b)) >= threshold), "\(a) | \(b)")
            }
        }
    }

    @Test func overlapMatchesTheDefinition() {
        var rng = SeededGenerator(seed: 3)
        for round in 0..<400 {
            let shared = Self.text(&rng, words: 0...12)
            let a = Self.text(&rng, words: 0...8) + (Bool.random(using: &rng) ? " " : "") + shared
            let b = shared + (Bool.random(using: &rng) ? " " : "") + Self.text(&rng, words: 0...8)
            #expect(ContextAssembler.overlap(a, b) == Self.definedOverlap(a, b), "round \(round): \(a) | \(b)")
        }
        // ASCII texts (compared as bytes), some with "\r\n" (one Character: compared as Characters).
        let ascii = ["Venus", "rules", "VENUS", "12", "house", "career", "\n", "\t", "(", "the", "reputation,", "x2", "a", "\r\n"]
        func text(_ words: ClosedRange<Int>) -> String {
            (0..<Int.random(in: words, using: &rng)).map { _ in ascii.randomElement(using: &rng)! }.joined(separator: " ")
        }
        for round in 0..<400 {
            let shared = text(0...12)
            let a = text(0...8) + (Bool.random(using: &rng) ? " " : "") + shared
            let b = shared + (Bool.random(using: &rng) ? "\n" : "") + text(0...8)
            #expect(ContextAssembler.overlap(a, b) == Self.definedOverlap(a, b), "ascii round \(round): \(a) | \(b)")
        }
    }

    /// The item's words (split at spaces) joined again up to the most that fit, found by bisection.
    static func definedTruncate(_ item: ContextItem, number: Int, budget: Int, counter: some TokenCounter) -> ContextItem? {
        let words = item.text.split(separator: " ", omittingEmptySubsequences: false)
        return ContextAssembler.longestCut(item, parts: words.count) { words[0...$0].joined(separator: " ") } fits: {
            counter.count(ContextAssembler.render($0, number: number)) <= budget
        }
    }

    @Test func truncationMatchesTheDefinition() {
        var rng = SeededGenerator(seed: 13)
        let assembler = ContextAssembler(counter: ConservativeTokenCounter())
        for round in 0..<300 {
            var text = Self.text(&rng, words: 0...80)
            if Bool.random(using: &rng) { text = text.replacingOccurrences(of: "é", with: "e") + "  x \u{301}y" }
            let cut = item(text, score: 1, path: "/s", ordinal: 0, kind: .note, memory: nil)
            let budget = Int.random(in: 20...200, using: &rng)
            #expect(assembler.truncate(cut, number: 3, toFit: budget) == Self.definedTruncate(cut, number: 3, budget: budget, counter: assembler.counter as! ConservativeTokenCounter),
                    "round \(round)")
        }
    }

    /// A title from an untitled item's first words, as the plain definition makes it (every word
    /// of the text split, the first eight joined; "…" when that is shorter than the text).
    @Test func untitledItemsAreTitledByTheirFirstEightWordsAsDefined() {
        let texts = ["", "one", "one two", "a b c d e f g h", "a b c d e f g h ", " a b c d e f g h", "a  b c d e f g h",
                     "a b c d e f g h i", "a b c d e f g h\n\ni j", "word " + String(repeating: "x", count: 5_000),
                     "café naïve 東京 e\u{301}t\u{e9} \t tab\tseparated words here and more", "   ", "eight\u{2003}em spaces\u{2003}count too"]
        for text in texts {
            let words = text.split(whereSeparator: \.isWhitespace).prefix(8).joined(separator: " ")
            let defined = words.count < text.count ? words + "…" : words
            let item = ContextItem(kind: .memory, text: text, score: 1, sourcePath: "memory:x", sourceTitle: "")
            #expect(item.displayTitle == defined, "\(text.debugDescription)")
        }
    }
}

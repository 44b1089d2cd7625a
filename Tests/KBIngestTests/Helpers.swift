import Foundation
@testable import KBIngest
import KBTestSupport

func scalars(_ text: String) -> [Unicode.Scalar] { Array(text.unicodeScalars) }

func slice(_ text: String, _ range: Range<Int>) -> String {
    String(String.UnicodeScalarView(Array(text.unicodeScalars)[range]))
}

/// A long, word-rich Markdown text made deterministically from a seed.
func generatedMarkdown(sections: Int, paragraphsPerSection: Int, seed: UInt64) -> String {
    var rng = SeededGenerator(seed: seed)
    let words = ["venus", "transit", "house", "career", "aspect", "sextile", "trine", "square", "opposition",
                 "Saturn", "moon", "chart", "ruler", "ascendant", "retrograde", "element", "фаза", "القمر",
                 "extraordinarily-long-hyphenated-compound", "a", "of", "the", "in", "and"]
    var text = "---\ntitle: Generated\ntags: [test]\n---\n\n# Generated\n\n"
    for s in 0..<sections {
        text += "## Section \(s)\n\n"
        for _ in 0..<paragraphsPerSection {
            let sentences = 1 + Int(rng.next() % 6)
            var paragraph: [String] = []
            for _ in 0..<sentences {
                let count = 3 + Int(rng.next() % 30)
                var sentence = (0..<count).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ")
                sentence = sentence.prefix(1).uppercased() + sentence.dropFirst() + (rng.next() % 5 == 0 ? "!" : ".")
                paragraph.append(sentence)
            }
            text += paragraph.joined(separator: " ") + "\n\n"
        }
    }
    return text
}

import Foundation
import KBCore
import Testing
@testable import KBEmbed

@Suite struct WordPieceTokenizerTests {
    static let fixture = ReferenceFixture.shared

    @Test(arguments: ReferenceFixture.shared.cases.map(\.id))
    func tokenIDsMatchTheReference(caseID: Int) throws {
        let embedder = try InstalledModel.get()
        let reference = Self.fixture.cases[caseID]
        let ids = embedder.tokenIDs(reference.text)
        let wordPiece = try #require(embedder.tokenizer as? WordPieceTokenizer)
        #expect(ids == reference.input_ids, "case \(caseID) (\(reference.category)): \(wordPiece.pieces(reference.text).prefix(40))")
    }

    @Test func truncatesToTheMaximumLengthIncludingSpecialTokens() throws {
        let embedder = try InstalledModel.get()
        let ids = embedder.tokenIDs(String(repeating: "word ", count: 1000))
        #expect(ids.count == 256)
        let wordPiece = try #require(embedder.tokenizer as? WordPieceTokenizer)
        #expect(ids.first == wordPiece.classifierID && ids.last == wordPiece.separatorID)
    }

    static let tinyVocabulary = Data(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "run", "##ning", ",", "cafe"].joined(separator: "\n").utf8)

    @Test func splitsWordsIntoLongestMatchingPieces() throws {
        let tokenizer = try WordPieceTokenizer(vocabulary: Self.tinyVocabulary, lowercase: true)
        #expect(tokenizer.pieces("UNAFFABLE, running") == ["un", "##aff", "##able", ",", "run", "##ning"])
    }

    @Test func aWordWithoutPiecesOrTooLongIsUnknown() throws {
        let tokenizer = try WordPieceTokenizer(vocabulary: Self.tinyVocabulary, lowercase: true)
        #expect(tokenizer.pieces("unxyz run") == ["[UNK]", "run"])
        #expect(tokenizer.pieces(String(repeating: "un", count: 51)) == ["[UNK]"])
    }

    @Test func stripsAccentsAndDropsControlCharacters() throws {
        let tokenizer = try WordPieceTokenizer(vocabulary: Self.tinyVocabulary, lowercase: true)
        #expect(tokenizer.pieces("Ca\u{0301}fe\u{200B}") == ["cafe"])
        #expect(tokenizer.pieces("CAFÉ\u{0007}") == ["cafe"])
    }

    @Test func aVocabularyWithoutSpecialTokensIsRefused() {
        #expect(throws: KBError.self) { try WordPieceTokenizer(vocabulary: Data("a\nb".utf8), lowercase: true) }
    }
}

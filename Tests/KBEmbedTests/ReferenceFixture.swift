import CKBEncoder
import Foundation
import KBCore
import Testing
@testable import KBEmbed

/// `minilm-reference.json`: inputs with the reference implementation's token ids and embeddings.
struct ReferenceFixture: Decodable {
    struct Case: Decodable {
        var id: Int
        var category: String
        var text: String
        var input_ids: [Int32]
        var truncated: Bool
        var embedding: [Float]
    }
    struct Header: Decodable {
        var files_sha256: [String: String]
    }
    var header: Header
    var cases: [Case]

    static let shared: ReferenceFixture = {
        let url = Bundle.module.url(forResource: "minilm-reference", withExtension: "json", subdirectory: "Fixtures")!
        return try! JSONDecoder().decode(ReferenceFixture.self, from: Data(contentsOf: url))
    }()
}

/// The installed model in fp32 (the reference's arithmetic), loaded once for all tests. Tests
/// that need it fail (not skip) when it is missing: `scripts/test.sh` installs it.
enum InstalledModel {
    static let path = Locations.modelDirectory(ProcessInfo.processInfo.environment)
    static let embedder: Result<BERTEmbedder, any Error> = Result {
        var environment = ProcessInfo.processInfo.environment
        environment["KB_PRECISION"] = "fp32"
        return try BERTEmbedder.installed(environment: environment)
    }
    static func get() throws -> BERTEmbedder { try embedder.get() }
}

func cosine(_ a: [Float], _ b: [Float]) -> Float {
    var dot: Float = 0, na: Float = 0, nb: Float = 0
    for i in a.indices { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i] }
    return dot / (na.squareRoot() * nb.squareRoot())
}

/// A precision and how close its vectors must stay to fp32's.
struct PrecisionGate: Sendable, CustomTestStringConvertible {
    var precision: EncoderPrecision
    var minimumCosine: Float
    var testDescription: String { precision.rawValue }

    static let all = [PrecisionGate(precision: .fp32, minimumCosine: 0.9999), PrecisionGate(precision: .bf16, minimumCosine: 0.999),
                      PrecisionGate(precision: .int8, minimumCosine: 0.995)]
    /// The gates this CPU can run.
    static var available: [PrecisionGate] { all.filter { cpuHas($0.precision) } }

    static func cpuHas(_ precision: EncoderPrecision) -> Bool {
        switch precision {
        case .bf16: kb_precision_supported(KB_PRECISION_BF16) != 0
        case .int8: kb_precision_supported(KB_PRECISION_INT8) != 0
        case .fp32, .auto: true
        }
    }
}

import Foundation
import KBCore
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

/// The installed model, loaded once for all tests. Tests that need it fail (not skip) when it is
/// missing: `scripts/test.sh` installs it.
enum InstalledModel {
    static let path = Locations.modelDirectory(ProcessInfo.processInfo.environment)
    static let embedder: Result<BERTEmbedder, any Error> = Result { try BERTEmbedder.installed() }
    static func get() throws -> BERTEmbedder { try embedder.get() }
}

func cosine(_ a: [Float], _ b: [Float]) -> Float {
    var dot: Float = 0, na: Float = 0, nb: Float = 0
    for i in a.indices { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i] }
    return dot / (na.squareRoot() * nb.squareRoot())
}

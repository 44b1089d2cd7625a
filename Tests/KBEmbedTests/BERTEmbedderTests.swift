import Foundation
import KBCore
import Testing
@testable import KBEmbed

@Suite struct BERTEmbedderTests {
    static let fixture = ReferenceFixture.shared

    func check(_ vector: [Float], against reference: ReferenceFixture.Case) {
        #expect(vector.count == 384)
        let similarity = cosine(vector, reference.embedding)
        let maxDiff = zip(vector, reference.embedding).map { abs($0 - $1) }.max() ?? 0
        #expect(similarity >= 0.9999, "case \(reference.id) (\(reference.category)): cosine \(similarity)")
        #expect(maxDiff <= 1e-4, "case \(reference.id) (\(reference.category)): max difference \(maxDiff)")
    }

    @Test func embeddingsMatchTheReferenceInOneBatch() async throws {
        let embedder = try InstalledModel.get()
        let vectors = try await embedder.embed(Self.fixture.cases.map(\.text), role: .passage)
        for (vector, reference) in zip(vectors, Self.fixture.cases) { check(vector, against: reference) }
    }

    @Test func embeddingsMatchTheReferenceOneAtATime() async throws {
        let embedder = try InstalledModel.get()
        for reference in Self.fixture.cases {
            let vectors = try await embedder.embed([reference.text], role: .passage)
            check(vectors[0], against: reference)
        }
    }

    @Test func resultsComeBackInInputOrderWhateverTheBatching() async throws {
        let embedder = try InstalledModel.get()
        let small = try BERTEmbedder(folder: embedder.folder, batchSize: 3, threads: 2)
        let texts = Self.fixture.cases.map(\.text).reversed().map { $0 }
        let a = try await small.embed(texts, role: .passage)
        let b = try await embedder.embed(texts, role: .passage)
        for (x, y) in zip(a, b) { #expect(cosine(x, y) > 0.99999) }
    }

    @Test func theInstalledWeightsAreTheReferenceWeights() throws {
        let path = InstalledModel.path + "/model.safetensors"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let sum = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64)
        #expect(String(sum) == Self.fixture.header.files_sha256["model.safetensors"])
    }

    @Test func aMissingModelSaysWhichCommandInstallsIt() throws {
        let error = try #require(throws: KBError.self) { try BERTEmbedder.installed(environment: ["KB_MODEL_DIR": "/nonexistent/model"]) }
        #expect(error.code == .modelMissing)
        #expect(error.message.contains("scripts/install-model.sh"))
    }

    @Test func aTensorWithTheWrongShapeIsNamed() throws {
        // A model folder whose config claims a different hidden size than its weights.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-badmodel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for file in ["vocab.txt", "model.safetensors"] {
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent(file).path,
                                                       withDestinationPath: InstalledModel.path + "/" + file)
        }
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: InstalledModel.path + "/config.json"))) as! [String: Any]
        config["intermediate_size"] = 1024
        try JSONSerialization.data(withJSONObject: config).write(to: folder.appendingPathComponent("config.json"))
        let error = try #require(throws: KBError.self) { try BERTEmbedder(folder: ModelFolder(path: folder.path)) }
        #expect(error.message.contains("encoder.layer.0.intermediate.dense.weight"))
        #expect(error.message.contains("[1536, 384]"))
    }
}

@Suite struct HashingEmbedderTests {
    @Test func textsSharingWordsAreCloserThanUnrelatedTexts() async throws {
        let e = HashingEmbedder()
        let v = try await e.embed(["venus love money", "love and money", "saturn discipline"], role: .passage)
        #expect(cosine(v[0], v[1]) > cosine(v[0], v[2]))
        #expect(abs(v[0].reduce(0) { $0 + $1 * $1 } - 1) < 1e-5)
    }
}

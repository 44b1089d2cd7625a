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

    @Test func aModelsLayersAreBuiltWhileItsCallersGoOnAndTheirFailureIsThrownToEach() async throws {
        // A fresh model (not the shared one) answers its first texts as the shared one does.
        let fresh = try BERTEmbedder(folder: ModelFolder(path: InstalledModel.path), precision: .fp32)
        let text = Self.fixture.cases[0].text
        let first = try await fresh.embed([text], role: .passage)
        #expect(first == (try await InstalledModel.get().embed([text], role: .passage)))

        // Work that fails: every waiter gets its error, before and after it ends, async or blocking.
        let gate = DispatchSemaphore(value: 0)
        let build = LayerBuild {
            gate.wait()
            throw KBError(.invalidModel, "cannot be set up")
        }
        let early = Task { () -> String? in
            do { try await build.wait(); return nil } catch { return (error as? KBError)?.message }
        }
        gate.signal()
        #expect(await early.value == "cannot be set up")
        await #expect(throws: KBError.self) { try await build.wait() }
        #expect(throws: KBError.self) { try build.waitBlocking() }
        let done = LayerBuild {}
        try done.waitBlocking()
        try await done.wait()
    }

    @Test func resultsComeBackInInputOrderWhateverTheBatching() async throws {
        let embedder = try InstalledModel.get()
        let small = try BERTEmbedder(folder: embedder.folder, mode: .throughput, maxSequencesPerPass: 3, precision: .fp32)
        let texts = Self.fixture.cases.map(\.text).reversed().map { $0 }
        let a = try await small.embed(texts, role: .passage)
        let b = try await embedder.embed(texts, role: .passage)
        #expect(a == b)
        #expect(small.largestPass <= 3)
    }

    /// A call with many texts has them tokenised on every core: each gets the vector it gets alone.
    @Test func aLargeCallsTextsAreTokenisedOnEveryCoreAsAlone() async throws {
        let embedder = try InstalledModel.get()
        let base = Self.fixture.cases.map(\.text)
        let texts = (0..<BERTEmbedder.concurrentTokenizing + 9).map { "\($0): " + base[$0 % base.count] }
        let together = try await embedder.embed(texts, role: .passage)
        for index in [0, 1, 130, texts.count - 1] {
            #expect(try await embedder.embed([texts[index]], role: .passage)[0] == together[index], "text \(index)")
        }
    }

    /// In `.throughput` mode queries have a queue of their own (one worker on every core) and
    /// passages theirs: the same text gets the same vector from either, at once or concurrently.
    @Test func queriesAndPassagesGetTheSameVectorsFromTheirOwnQueues() async throws {
        let folder = try InstalledModel.get().folder
        #expect(folder.queryPrefix.isEmpty && folder.passagePrefix.isEmpty)   // MiniLM has no prompts
        let embedder = try BERTEmbedder(folder: folder, mode: .throughput, precision: .fp32)
        let texts = Self.fixture.cases.map(\.text)
        let passages = try await embedder.embed(texts, role: .passage)
        let passesBefore = embedder.passCount
        async let queries = embedder.embed(texts, role: .query)
        async let again = embedder.embed(Array(texts.reversed()), role: .passage)
        #expect(try await queries == passages)
        #expect(try await again == passages.reversed())
        #expect(embedder.passCount > passesBefore + 1)
    }

    /// Under `.auto` a throughput embedder (kb serve's) runs queries in int8 where the CPU has
    /// AVX-512 VNNI — inside int8's gate of the reference — and passages in the resolved precision;
    /// a precision chosen by name holds for both.
    /// Every process embeds a query to the same vector: `kb search` (latency), `kb serve` and
    /// `kb mcp` (throughput) rank an index alike.
    @Test func queriesRunInThePassagesPrecisionInEveryMode() async throws {
        let folder = try InstalledModel.get().folder
        let auto = try BERTEmbedder(folder: folder, mode: .throughput, precision: .auto)
        #expect(auto.queryPrecision == auto.precision)
        let texts = Self.fixture.cases.map(\.text)
        let queries = try await auto.embed(texts, role: .query)
        let passages = try await auto.embed(texts, role: .passage)
        for ((query, passage), reference) in zip(zip(queries, passages), Self.fixture.cases) {
            #expect(cosine(query, reference.embedding) >= 0.995, "case \(reference.id)")
            #expect(cosine(passage, reference.embedding) >= 0.999, "case \(reference.id)")
        }
        #expect(queries == passages)
        let named = try BERTEmbedder(folder: folder, mode: .throughput, precision: .fp32)
        #expect(named.queryPrecision == .fp32)
        let latency = try BERTEmbedder(folder: folder, mode: .latency, precision: .auto)
        #expect(latency.queryPrecision == auto.precision)
        #expect(try await latency.embed(texts, role: .query) == queries)
    }

    /// Micro-batching packs concurrent callers' texts into one forward pass; each text's vector
    /// must be exactly what it gets alone, whichever texts it shares a pass with.
    @Test(arguments: [ComputeMode.throughput, .latency], PrecisionGate.available.map(\.precision))
    func concurrentCallsPackedIntoSharedPassesGetTheVectorsTheyGetAlone(mode: ComputeMode, precision: EncoderPrecision) async throws {
        let folder = try InstalledModel.get().folder
        let texts = Self.fixture.cases.map(\.text) + ["saturn return", "what does venus in the tenth house mean for my job", "a"]
        let alone = try BERTEmbedder(folder: folder, mode: mode, precision: precision)
        var expected: [[Float]] = []
        for text in texts { expected.append(try await alone.embed([text], role: .query)[0]) }
        #expect(alone.largestPass == 1)

        // A long collection window, so that the concurrent calls really share passes.
        let shared = try BERTEmbedder(folder: folder, mode: mode, collectionWindow: 0.05, precision: precision)
        for round in 0..<3 {
            let order = round == 0 ? Array(texts.indices) : texts.indices.shuffled()
            let vectors = try await withThrowingTaskGroup(of: (Int, [Float]).self) { group in
                for index in order { group.addTask { (index, try await shared.embed([texts[index]], role: .query)[0]) } }
                var result = [[Float]](repeating: [], count: texts.count)
                for try await (index, vector) in group { result[index] = vector }
                return result
            }
            for index in texts.indices { #expect(vectors[index] == expected[index], "text \(index), round \(round)") }
        }
        #expect(shared.largestPass > 1, "the concurrent calls never shared a pass, so packing was not tested")
        // One call with every text is one packed request too.
        #expect(try await shared.embed(texts, role: .query) == expected)
    }

    /// bf16 and int8 (where the CPU has them) keep every reference text's vector within their
    /// gate of the reference's: cosine 0.999 for bf16, 0.995 for int8.
    @Test(arguments: PrecisionGate.available.filter { $0.precision != .fp32 })
    func reducedPrecisionStaysWithinItsQualityGate(gate: PrecisionGate) async throws {
        let embedder = try BERTEmbedder(folder: try InstalledModel.get().folder, precision: gate.precision)
        #expect(embedder.precision == gate.precision)
        let vectors = try await embedder.embed(Self.fixture.cases.map(\.text), role: .passage)
        for (vector, reference) in zip(vectors, Self.fixture.cases) {
            let similarity = cosine(vector, reference.embedding)
            #expect(similarity >= gate.minimumCosine, "\(gate.precision) case \(reference.id) (\(reference.category)): cosine \(similarity)")
        }
        // Reduced precision does change the vectors: this is not the fp32 path under another name.
        let exact = try await InstalledModel.get().embed(Self.fixture.cases.map(\.text), role: .passage)
        #expect(vectors != exact)
    }

    /// fp32 asked for, by argument or by KB_PRECISION, runs kb's own fp32 kernels on any CPU:
    /// the reference's vectors (the tests above use it), and `auto` is fp32 exactly where the CPU
    /// lacks AVX-512 BF16.
    @Test func fp32CanBeForcedAndAutoFallsBackToIt() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["KB_PRECISION"] = "fp32"
        #expect(try BERTEmbedder.installed(environment: environment).precision == .fp32)
        #expect(try BERTEmbedder(folder: try InstalledModel.get().folder, precision: .fp32).precision == .fp32)
        let auto = try BERTEmbedder(folder: try InstalledModel.get().folder, precision: .auto)
        #expect(auto.precision == (PrecisionGate.cpuHas(.bf16) ? .bf16 : .fp32))
        environment["KB_PRECISION"] = "fp16"
        let error = try #require(throws: KBError.self) { try BERTEmbedder.installed(environment: environment) }
        #expect(error.message.contains("auto, fp32, bf16 or int8"))
    }

    @Test func aPrecisionTheCPULacksIsRefusedWithTheChoicesThatRemain() throws {
        for precision in [EncoderPrecision.bf16, .int8] where !PrecisionGate.cpuHas(precision) {
            let error = try #require(throws: KBError.self) { try BERTEmbedder(folder: try InstalledModel.get().folder, precision: precision) }
            #expect(error.message.contains("--precision auto or fp32"))
        }
    }

    @Test func oneLargeCallIsSharedAmongTheWorkers() async throws {
        let embedder = try BERTEmbedder(folder: try InstalledModel.get().folder, mode: .throughput)
        let passage = "The tenth house describes career, reputation and public standing; planets there shape vocation."
        let texts = (0..<32).map { "Passage \($0). " + passage + " " + passage }
        let vectors = try await embedder.embed(texts, role: .passage)
        #expect(vectors.count == 32)
        // Each idle worker takes its share, so no pass holds more than a share of the call.
        #expect(embedder.largestPass <= (32 + embedder.workers - 1) / embedder.workers)
        #expect(embedder.passCount >= embedder.workers)
    }

    @Test func aFewShortTextsStayTogetherInOnePass() async throws {
        // Too little to split: one packed pass reads the weights once.
        let embedder = try BERTEmbedder(folder: try InstalledModel.get().folder, mode: .throughput)
        _ = try await embedder.embed(["saturn return", "venus", "my mum", "a wedding"], role: .query)
        #expect(embedder.passCount == 1)
        #expect(embedder.largestPass == 4)
    }

    @Test func passesRunOffTheCooperativePoolSoOtherTasksKeepRunning() async throws {
        // More concurrent callers than the pool has threads. If passes ran on the pool (or callers
        // blocked on a lock there), the ticker below would not run until they were all done.
        let embedder = try InstalledModel.get()
        let passage = Array(repeating: "The tenth house describes career, reputation and public standing.", count: 6).joined(separator: " ")
        let callers = ProcessInfo.processInfo.activeProcessorCount * 2
        let done = LockedValue(false), ticksWhileBusy = LockedValue(0)
        let ticker = Task {
            while !done.withLock({ $0 }) {
                try? await Task.sleep(nanoseconds: 1_000_000)
                if !done.withLock({ $0 }) { ticksWhileBusy.withLock { $0 += 1 } }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<callers { group.addTask { _ = try await embedder.embed(Array(repeating: passage, count: 96), role: .passage) } }
            try await group.waitForAll()
        }
        done.withLock { $0 = true }
        await ticker.value
        #expect(ticksWhileBusy.withLock { $0 } >= 3)
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
        let sum = String(decoding: try DescriptorIO.readToEnd(pipe.fileHandleForReading.fileDescriptor), as: UTF8.self).prefix(64)
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

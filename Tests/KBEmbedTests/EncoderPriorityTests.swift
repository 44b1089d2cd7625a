import Foundation
import KBCore
import Testing
@testable import KBEmbed

@Suite struct EncoderPriorityTests {
    func niceness() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    /// A queue of passages beside a queue of queries runs its passes at a lower priority (a
    /// higher nice value), so that the kernel serves queries and requests first.
    @Test func aQueueWithANicenessRunsItsPassesAtALowerPriority() async {
        let base = niceness()
        var lowered = EncoderQueue.Configuration(mode: .throughput, cores: 1)
        lowered.niceness = 10
        let seen: EncoderQueue.Pass = { sequences, _, _ in
            let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            return sequences.map { _ in [Float(value)] }
        }
        let low = EncoderQueue(configuration: lowered, pass: seen)
        let normal = EncoderQueue(configuration: EncoderQueue.Configuration(mode: .throughput, cores: 1), pass: seen)
        defer { low.stop(); normal.stop() }
        #expect(await low.encode([[1]]) == [[Float(min(19, base + 10))]])
        #expect(await normal.encode([[1]]) == [[Float(base)]])
        #expect(niceness() == base, "the caller's own thread is untouched")
    }

    @Test func passagesYieldBesideQueriesUnlessTurnedOff() throws {
        #expect(try BERTEmbedder.passageNiceness([:]) == 10)
        #expect(try BERTEmbedder.passageNiceness(["KB_PASSAGE_NICENESS": "0"]) == 0)
        #expect(try BERTEmbedder.passageNiceness(["KB_PASSAGE_NICENESS": "19"]) == 19)
        // A value it does not take is an error naming it, not the default unseen.
        for wrong in ["40", "ten", "-1"] {
            let error = #expect(throws: KBError.self) { try BERTEmbedder.passageNiceness(["KB_PASSAGE_NICENESS": wrong]) }
            #expect(error?.message.contains("KB_PASSAGE_NICENESS is '\(wrong)'") == true)
        }
    }
}

/// An idle worker gives back what a large pass grew, and keeps a small pass's working memory.
struct ScratchShrinkTests {
    @Test func aLargePassesMemoryIsGivenBackAndASmallOnesKept() {
        let scratch = BERTEncoder.Scratch()
        scratch.reserve(tokens: 8192, hidden: 384, intermediateSize: 1536, attention: 12 * 512 * 512, threads: 2)
        scratch.reserve(productBytes: 16 << 20)
        #expect(scratch.capacity == 8192 && scratch.attention.count == 2)
        scratch.shrink(keepingTokens: EncoderQueue.idleScratchTokens, bytes: EncoderQueue.idleScratchBytes)
        #expect(scratch.capacity == 0 && scratch.attention.isEmpty)
        // Grown again by the next pass, and small passes' memory is kept.
        scratch.reserve(tokens: 300, hidden: 384, intermediateSize: 1536, attention: 12 * 64 * 64, threads: 1)
        scratch.shrink(keepingTokens: EncoderQueue.idleScratchTokens, bytes: EncoderQueue.idleScratchBytes)
        #expect(scratch.capacity == 300 && scratch.attention.count == 1)
        scratch.x[300 * 384 - 1] = 1   // still writable
    }
}

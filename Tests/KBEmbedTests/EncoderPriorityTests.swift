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

    /// A query's pass is split across the cores no other runnable thread waits for, never fewer
    /// than one thread nor more than asked; `KB_QUERY_THREADS` bounds it.
    @Test func aQuerysPassTakesOnlyTheIdleCores() throws {
        #expect(IdleCores.runnable(loadavg: "0.52 0.58 0.59 3/467 12345\n") == 3)
        #expect(IdleCores.runnable(loadavg: "garbage") == nil)
        #expect(IdleCores.threads(upTo: 2, cores: 2, running: 1) == 2)   // only the caller runs
        #expect(IdleCores.threads(upTo: 2, cores: 2, running: 2) == 1)   // another thread holds a core
        #expect(IdleCores.threads(upTo: 2, cores: 2, running: 5) == 1)
        #expect(IdleCores.threads(upTo: 4, cores: 8, running: 1) == 4)
        #expect(IdleCores.threads(upTo: 8, cores: 8, running: 4) == 5)
        #expect(IdleCores.runnable().map { $0 >= 1 } ?? true, "this thread is runnable while it reads")
        #expect(try BERTEmbedder.queryThreads([:]) == nil)
        #expect(try BERTEmbedder.queryThreads(["KB_QUERY_THREADS": "1"]) == 1)
        #expect(throws: KBError.self) { try BERTEmbedder.queryThreads(["KB_QUERY_THREADS": "0"]) }
    }
}

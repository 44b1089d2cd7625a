import Foundation
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

    @Test func passagesYieldBesideQueriesUnlessTurnedOff() {
        #expect(BERTEmbedder.passageNiceness([:]) == 10)
        #expect(BERTEmbedder.passageNiceness(["KB_PASSAGE_NICENESS": "0"]) == 0)
        #expect(BERTEmbedder.passageNiceness(["KB_PASSAGE_NICENESS": "40"]) == 19)
    }
}

import KBLanguageModel
import NIOCore
import Testing

/// An upstream's Server-Sent Events, read as they arrive (a streamed chat answer).
@Suite struct ServerSentEventsTests {
    @Test func eventsAreReadWholeWhateverWayTheBytesArrive() {
        let stream = "data: {\"a\": \"Kyiv — Київ\"}\r\n\r\n: keep-alive\n\nevent: x\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n"
        let bytes = Array(stream.utf8)
        // Every split point, the multi-byte letters included, gives the same events.
        for cut in 1..<bytes.count {
            var events = ServerSentEvents()
            let read = events.append(ByteBuffer(bytes: bytes[..<cut])) + events.append(ByteBuffer(bytes: bytes[cut...]))
            #expect(read.map(\.data) == ["{\"a\": \"Kyiv — Київ\"}", "line one\nline two", "[DONE]"], "cut at \(cut)")
            #expect(read.map(\.raw) == ["data: {\"a\": \"Kyiv — Київ\"}", "event: x\ndata: line one\ndata: line two", "data: [DONE]"])
        }
    }

    @Test func anEventInManyReadsIsReadOnceItEnds() {
        let big = String(repeating: "x", count: 50_000)
        let bytes = Array("data: \(big)\n\ndata: two\r\n\r\ndata: [DONE]\n\n".utf8)
        // A byte at a time, then in reads of 7 bytes: nothing before an event's blank line, each event once.
        for size in [1, 7] {
            var events = ServerSentEvents()
            var read: [ServerSentEvents.Event] = []
            for offset in stride(from: 0, to: bytes.count, by: size) {
                let got = events.append(ByteBuffer(bytes: bytes[offset..<min(offset + size, bytes.count)]))
                if offset + size < 50_006 { #expect(got.isEmpty) }
                read += got
            }
            #expect(read.map(\.data) == [big, "two", "[DONE]"], "reads of \(size)")
        }
    }

    @Test func aForwardingReaderKeepsEventsWithoutDataAndTheUnfinishedTail() {
        var events = ServerSentEvents(keepingEventsWithoutData: true)
        let read = events.append(ByteBuffer(string: ": keep-alive\n\ndata: one\n\ndata: unfin"))
        #expect(read.map(\.raw) == [": keep-alive", "data: one"])
        #expect(read.map(\.data) == ["", "one"])
        let tail = events.finish()
        #expect(tail?.raw == "data: unfin" && tail?.data == "unfin")
        #expect(events.finish() == nil)
        // A reader of answers skips the comment and keeps no tail once the stream ended on a blank line.
        var answers = ServerSentEvents()
        #expect(answers.append(ByteBuffer(string: ": keep-alive\n\ndata: one\n\n")).map(\.data) == ["one"])
        #expect(answers.finish() == nil)
    }
}

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
}

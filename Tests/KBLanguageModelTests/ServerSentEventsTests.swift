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
}

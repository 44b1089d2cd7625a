public import NIOCore

/// Server-Sent Events read from a byte stream as it arrives: each event's raw text (forwarded as
/// it came) and its data.
public struct ServerSentEvents {
    public struct Event: Sendable {
        /// The event's lines as received, without the blank line that ends it.
        public let raw: String
        /// Its `data:` lines joined.
        public let data: String
    }

    private var pending: [UInt8] = []

    public init() {}

    /// The events complete once `buffer` is added (bytes are kept until their event ends, so a
    /// character split between reads stays whole).
    public mutating func append(_ buffer: ByteBuffer) -> [Event] {
        pending += buffer.readableBytesView.filter { $0 != UInt8(ascii: "\r") }
        var events: [Event] = []
        var start = 0
        var index = 0
        while index + 1 < pending.count {
            guard pending[index] == 10, pending[index + 1] == 10 else { index += 1; continue }
            let raw = String(decoding: pending[start..<index], as: UTF8.self)
            index += 2
            start = index
            let data = raw.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { $0.hasPrefix("data:") }
                .map { line in
                    let value = line.dropFirst(5)
                    return String(value.first == " " ? value.dropFirst() : value)
                }
            guard !data.isEmpty else { continue }   // comments (": keep-alive") and bare fields
            events.append(Event(raw: raw, data: data.joined(separator: "\n")))
        }
        pending.removeFirst(start)
        return events
    }
}

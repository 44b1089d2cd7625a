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

    /// Bytes of events not complete yet (carriage returns left out, so CRLF lines read as LF).
    private var pending: [UInt8] = []
    /// How far `pending` has been searched for a blank line: each byte is looked at once, however
    /// many reads an event arrives in.
    private var searched = 0

    /// Whether events without data (comments such as `: keep-alive`, bare fields) are handed back
    /// too, with empty `data`: a reader that forwards a stream keeps them; one that reads answers
    /// skips them.
    private let keepsEventsWithoutData: Bool

    public init(keepingEventsWithoutData: Bool = false) {
        keepsEventsWithoutData = keepingEventsWithoutData
    }

    /// The events complete once `buffer` is added (bytes are kept until their event ends, so a
    /// character split between reads stays whole).
    public mutating func append(_ buffer: ByteBuffer) -> [Event] {
        buffer.withUnsafeReadableBytes { bytes in
            if bytes.contains(13) {
                pending.append(contentsOf: bytes.lazy.filter { $0 != 13 })
            } else {
                pending.append(contentsOf: bytes)
            }
        }
        var events: [Event] = []
        var start = 0
        var index = searched
        while index < pending.count {
            guard let newline = pending[index...].firstIndex(of: 10) else {
                index = pending.count
                break
            }
            guard newline + 1 < pending.count else {
                index = newline   // the next read says whether a blank line follows
                break
            }
            if pending[newline + 1] == 10 {
                if let event = event(pending[start..<newline]) { events.append(event) }
                start = newline + 2
                index = start
            } else {
                index = newline + 1
            }
        }
        pending.removeFirst(start)
        searched = index - start
        return events
    }

    /// What is left once the stream ends: the bytes of an event no blank line closed, if any.
    public mutating func finish() -> Event? {
        defer { pending = []; searched = 0 }
        guard !pending.isEmpty else { return nil }
        return event(pending[...]) ?? Event(raw: String(decoding: pending, as: UTF8.self), data: "")
    }

    /// An event from its lines; nil for one without data (comments such as `: keep-alive`, bare
    /// fields) unless they are kept.
    private func event(_ bytes: ArraySlice<UInt8>) -> Event? {
        var data: [String] = []
        for line in bytes.split(separator: 10, omittingEmptySubsequences: false) where line.starts(with: Self.dataField) {
            var value = line.dropFirst(Self.dataField.count)
            if value.first == 32 { value = value.dropFirst() }
            data.append(String(decoding: value, as: UTF8.self))
        }
        guard !data.isEmpty || keepsEventsWithoutData else { return nil }
        return Event(raw: String(decoding: bytes, as: UTF8.self), data: data.joined(separator: "\n"))
    }

    private static let dataField = Array("data:".utf8)
}

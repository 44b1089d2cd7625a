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

    public init() {}

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
                if let event = Self.event(pending[start..<newline]) { events.append(event) }
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

    /// An event from its lines; nil for one without data (comments such as `: keep-alive`, bare fields).
    private static func event(_ bytes: ArraySlice<UInt8>) -> Event? {
        var data: [String] = []
        for line in bytes.split(separator: 10, omittingEmptySubsequences: false) where line.starts(with: Self.dataField) {
            var value = line.dropFirst(Self.dataField.count)
            if value.first == 32 { value = value.dropFirst() }
            data.append(String(decoding: value, as: UTF8.self))
        }
        guard !data.isEmpty else { return nil }
        return Event(raw: String(decoding: bytes, as: UTF8.self), data: data.joined(separator: "\n"))
    }

    private static let dataField = Array("data:".utf8)
}

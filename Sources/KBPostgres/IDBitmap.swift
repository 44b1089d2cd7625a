import Foundation

/// A set of snippet ids as one bit each over their range, for the keyword walk's filter test: the
/// walk asks of nearly every posting it scores whether its snippet may be shown, and a
/// `Set<Int64>` of a bot's million snippets answers with a hash and a cache miss (a tenth of
/// `kb serve`'s CPU on a million-snippet PostgreSQL index), a bitmap with one load.
struct IDBitmap: Sendable, Equatable {
    /// The smallest id held; bit `i` stands for `low + i`.
    let low: Int64
    let words: [UInt64]
    /// How many ids are held.
    let count: Int

    /// nil when the ids are too sparse for bits to be smaller than the set (more than 64 bits of
    /// range an id).
    init?(_ ids: Set<Int64>) {
        guard let low = ids.min(), let high = ids.max() else { return nil }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, span / 64 <= Int64(ids.count) else { return nil }
        var words = [UInt64](repeating: 0, count: Int(span / 64) + 1)
        for id in ids {
            let offset = Int(id &- low)
            words[offset >> 6] |= 1 << UInt64(offset & 63)
        }
        self.low = low
        self.words = words
        self.count = ids.count
    }

    @inline(__always)
    func contains(_ id: Int64) -> Bool {
        let (offset, overflow) = id.subtractingReportingOverflow(low)
        guard !overflow, offset >= 0, offset >> 6 < Int64(words.count) else { return false }
        return words[Int(offset >> 6)] & (1 << UInt64(offset & 63)) != 0
    }
}

/// The bitmaps of the large id sets a process's searches pass to the keyword walk (a filter's
/// allowed snippets, kept per index generation by the retriever, so the same set comes back
/// request after request): found by equality, which for the retriever's kept set is a check of
/// identity, and made on first use. A few sets are kept (each holds its set alive: a million ids
/// are ~30 MB), the least recently used dropped.
final class IDBitmapCache: @unchecked Sendable {
    /// Sets smaller than this are tested as they are (a hash of a small set stays in cache).
    static let smallest = 4_096
    private let lock = NSLock()
    private var entries: [(ids: Set<Int64>, bits: IDBitmap?)] = []
    let capacity: Int

    init(capacity: Int = 4) { self.capacity = capacity }

    /// `ids`' bitmap, or nil when it is small or too sparse for one.
    func bitmap(_ ids: Set<Int64>) -> IDBitmap? {
        guard ids.count >= Self.smallest else { return nil }
        if let found = lock.withLock({ () -> IDBitmap?? in
            guard let i = entries.firstIndex(where: { $0.ids.count == ids.count && $0.ids == ids }) else { return nil }
            let entry = entries.remove(at: i)
            entries.append(entry)
            return .some(entry.bits)
        }) {
            return found
        }
        let bits = IDBitmap(ids)
        lock.withLock {
            entries.append((ids, bits))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
        return bits
    }
}

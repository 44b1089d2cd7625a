public import Foundation
import KBCore

/// The rules of a memory's valid time and feedback weight. Pure.
///
/// ```swift
/// let validity = try MemoryTime.validity(from: nil, to: nil, expiresAt: sunday, storedAt: now)
/// ```
public enum MemoryTime {
    /// A memory's valid time as given: `from` defaults to `storedAt`; an end or an expiry before
    /// the start is refused (times rounded to milliseconds, as stored).
    public static func validity(from: Date?, to: Date?, expiresAt: Date?, storedAt: Date) throws -> (from: Date, to: Date?, expiresAt: Date?) {
        let start = MemoryArchive.roundedToMilliseconds(from ?? storedAt)
        let end = to.map(MemoryArchive.roundedToMilliseconds)
        let expiry = expiresAt.map(MemoryArchive.roundedToMilliseconds)
        if let end, end < start {
            throw KBError(.unprocessable,
                "validTo (\(MemoryArchive.format(end))) is before validFrom (\(MemoryArchive.format(start))); a memory cannot stop holding before it starts.")
        }
        if let expiry, expiry <= start {
            throw KBError(.unprocessable,
                "expiresAt (\(MemoryArchive.format(expiry))) is not after validFrom (\(MemoryArchive.format(start))); the memory would never hold.")
        }
        return (start, end, expiry)
    }

    /// The ranking weight of a memory feedback called useful `count` times: 5 % more per call, at
    /// most 20 % (4 calls), so that feedback breaks near-ties but never outranks relevance.
    public static func usefulWeight(_ count: Int) -> Double {
        1 + 0.05 * Double(min(max(count, 0), 4))
    }
}

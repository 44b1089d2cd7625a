import Foundation
public import KBCore

/// Comparisons of memories as stores keep them: times to the millisecond (what is stored and exported).
public enum StoredMemory {
    /// Equal, with times compared to the millisecond.
    public static func same(_ a: Memory, _ b: Memory) -> Bool {
        var b2 = b
        b2.createdAt = a.createdAt
        b2.updatedAt = a.updatedAt
        return a == b2 && close(a.createdAt, b.createdAt) && close(a.updatedAt, b.updatedAt)
    }

    public static func same(_ a: [MemoryVersion], _ b: [MemoryVersion]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            var y2 = y
            y2.updatedAt = x.updatedAt
            return x == y2 && close(x.updatedAt, y.updatedAt)
        }
    }

    static func close(_ a: Date, _ b: Date) -> Bool { abs(a.timeIntervalSince1970 - b.timeIntervalSince1970) < 0.0005 }
}

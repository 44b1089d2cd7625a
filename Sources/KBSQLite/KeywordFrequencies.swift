import Foundation
import KBCore

/// A few zeroed `[Double]` buffers lent to rankings (one each; a ranking returns its buffer zeroed).
///
/// @unchecked Sendable: `free` is guarded by `lock`.
final class ScoreScratch: @unchecked Sendable {
    private let lock = NSLock()
    private var free: [[Double]] = []

    /// Runs `body` with a zeroed buffer of at least `count` scores; `body` must leave it zeroed.
    func withScores<T>(count: Int, _ body: (UnsafeMutableBufferPointer<Double>) -> T) -> T {
        var scores = lock.withLock { free.popLast() } ?? []
        if scores.count < count { scores = [Double](repeating: 0, count: count) }
        let result = scores.withUnsafeMutableBufferPointer { body($0) }
        lock.withLock { if free.count < 8 { free.append(scores) } }
        return result
    }
}

/// A term's frequencies in its postings, in halves (the column weights, 1, 2 and 1.5, make every
/// frequency a multiple of 0.5): two bytes each instead of four — a million snippets' postings
/// take ~220 MB less. A value that halves cannot hold exactly (another weight, or over 32,767)
/// is kept exactly beside, so every frequency reads back as the same Float.
struct Frequencies: Sendable {
    private(set) var halves: [UInt16] = []
    /// Position → value, for the positions that hold `escape`.
    private(set) var exact: [Int: Float] = [:]
    private(set) var largest: Float = 0
    static let escape = UInt16.max

    init() {}

    init(_ values: [Float]) {
        halves.reserveCapacity(values.count)
        for value in values { append(value) }
    }

    var count: Int { halves.count }

    subscript(position: Int) -> Float {
        get {
            let half = halves[position]
            return half == Self.escape ? exact[position]! : Float(half) * 0.5
        }
        set {
            let (half, exactValue) = Self.encode(newValue)
            halves[position] = half
            exact[position] = exactValue
            largest = max(largest, newValue)
        }
    }

    mutating func append(_ value: Float) {
        halves.append(0)
        self[halves.count - 1] = value
    }

    static func encode(_ value: Float) -> (UInt16, Float?) {
        let doubled = value * 2
        if doubled >= 0, doubled < Float(escape), doubled == doubled.rounded(), doubled * 0.5 == value { return (UInt16(doubled), nil) }
        return (escape, value)
    }

    /// The values kept exactly, of every term, as three sections (term, position, value).
    static func exactSections(_ all: [Frequencies]) -> [SavedFile.Section] {
        var terms: [UInt32] = [], positions: [UInt32] = [], values: [Float] = []
        for (term, frequencies) in all.enumerated() {
            for (position, value) in frequencies.exact.sorted(by: { $0.key < $1.key }) {
                terms.append(UInt32(term))
                positions.append(UInt32(position))
                values.append(value)
            }
        }
        return [.array("exact.terms", terms), .array("exact.positions", positions), .array("exact.values", values)]
    }

    /// Every term's frequencies from a saved file's halves and exact values.
    static func restored(halves: [[UInt16]], file: SavedFile) throws -> [Frequencies] {
        var all = halves.map { halves -> Frequencies in
            var frequencies = Frequencies()
            frequencies.halves = halves
            frequencies.largest = halves.lazy.filter { $0 != escape }.max().map { Float($0) * 0.5 } ?? 0
            return frequencies
        }
        let terms: [UInt32] = try file.array("exact.terms"), positions: [UInt32] = try file.array("exact.positions")
        let values: [Float] = try file.array("exact.values")
        guard terms.count == positions.count, values.count == terms.count else { throw KBError(.database, "\(file.path): the exact frequencies do not add up.") }
        for ((term, position), value) in zip(zip(terms, positions), values) {
            guard Int(term) < all.count, Int(position) < all[Int(term)].count, all[Int(term)].halves[Int(position)] == escape else {
                throw KBError(.database, "\(file.path): an exact frequency has no place.")
            }
            all[Int(term)].exact[Int(position)] = value
            all[Int(term)].largest = max(all[Int(term)].largest, value)
        }
        guard all.allSatisfy({ $0.exact.count == $0.halves.lazy.filter { $0 == escape }.count }) else {
            throw KBError(.database, "\(file.path): an exact frequency is missing.")
        }
        return all
    }
}

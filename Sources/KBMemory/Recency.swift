public import Foundation
import KBCore

/// How much recall prefers recent memories: a score is multiplied by 2^(−age / half-life), so a
/// memory one half-life old counts half as much as a fresh one. Pure.
public struct Recency: Sendable, Hashable {
    public var halfLife: TimeInterval

    /// `halfLife` must be positive.
    public init(halfLife: TimeInterval) throws {
        guard halfLife > 0, halfLife.isFinite else {
            throw KBError(.invalidArgument, "A half-life must be a positive duration, e.g. 30d or 12h.")
        }
        self.halfLife = halfLife
    }

    /// Parses `30d`, `12h`, `90m`, `45s`, `2w` or a number of days.
    ///
    /// ```swift
    /// try Recency("30d").halfLife   // 2_592_000
    /// ```
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var number = Substring(trimmed)
        var unit: TimeInterval = 86_400
        if let last = trimmed.last, let seconds = units[last] {
            number = trimmed.dropLast()
            unit = seconds
        }
        guard let value = Double(number), value > 0, value.isFinite else {
            throw KBError(.invalidArgument, "'\(text)' is not a half-life. Use a number and a unit: 30d, 12h, 90m, 2w.")
        }
        try self.init(halfLife: value * unit)
    }

    /// The factor for something last written at `updated`, seen at `now` (1 for future times).
    public func weight(updated: Date, now: Date) -> Double {
        let age = max(0, now.timeIntervalSince(updated))
        return pow(2, -age / halfLife)
    }
}

import Foundation

/// A number set in an environment variable (`KB_QUERY_CACHE_MB`, `KB_PASSAGE_NICENESS`, …):
/// nil when the variable is unset or empty; a value that is not a number, or outside what the
/// variable takes, is an error naming the variable, what it was given and what it takes — a
/// typo must not fall back to the default unseen.
///
/// ```swift
/// let megabytes = try EnvironmentNumber.read("KB_QUERY_CACHE_MB", in: environment, as: Double.self, within: 0...1_048_576,
///                                            meaning: "megabytes of query vectors to keep (0 turns the cache off)")
/// ```
public enum EnvironmentNumber {
    public static func read<Number: LosslessStringConvertible & Comparable>(
        _ name: String, in environment: [String: String], as _: Number.Type = Number.self, within range: ClosedRange<Number>, meaning: String
    ) throws -> Number? {
        guard let given = environment[name]?.trimmingCharacters(in: .whitespaces), !given.isEmpty else { return nil }
        guard let value = Number(given), range.contains(value) else {
            throw KBError(.invalidArgument, "\(name) is '\(given)'; it takes \(meaning), from \(range.lowerBound) to \(range.upperBound). "
                + "Set it to such a number, or unset it for the default.")
        }
        return value
    }
}

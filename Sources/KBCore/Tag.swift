/// A label on a source or snippet: a plain word (`draft`) or `key:value` (`area:career`).
///
/// Tags are normalised when made: trimmed, lower-cased, inner whitespace turned into `-`,
/// and spaces around the first `:` removed, so `Area : Career Change` becomes `area:career-change`.
///
/// ```swift
/// let tag = Tag("Planet: Venus")   // planet:venus
/// ```
public struct Tag: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let name: String

    public init(_ raw: String) { name = Tag.normalize(raw) }
    public init(stringLiteral value: String) { self.init(value) }
    public init(key: String, value: String) { self.init(key + ":" + value) }

    /// The part before the first `:`, if any.
    public var key: String? { Tag.splitAtColon(name).map { $0.key } }
    /// The part after the first `:`, or the whole tag.
    public var value: String { Tag.splitAtColon(name)?.value ?? name }
    public var isEmpty: Bool { name.isEmpty || name == ":" }
    public var description: String { name }

    public static func < (lhs: Tag, rhs: Tag) -> Bool { lhs.name < rhs.name }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }

    /// Splits at the first `:` scalar, even one a following mark joins into one character
    /// (`:` then a skin-tone modifier), so every tag with a colon has a key.
    static func splitAtColon(_ text: String) -> (key: String, value: String)? {
        let scalars = text.unicodeScalars
        guard let colon = scalars.firstIndex(of: ":") else { return nil }
        return (String(scalars[..<colon]), String(scalars[scalars.index(after: colon)...]))
    }

    static func normalize(_ raw: String) -> String {
        let parts = Tag.splitAtColon(raw).map { [$0.key, $0.value] } ?? [raw]
        let cleaned = parts.map { part in
            part.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: "-")
        }
        return cleaned.joined(separator: ":")
    }
}

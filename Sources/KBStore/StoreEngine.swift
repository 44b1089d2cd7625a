import Foundation

/// A kind of index kb can open, named by the scheme of its location: SQLite files (plain paths,
/// built into KBKit), PostgreSQL databases (`postgres://`, `PostgresEngine` in KBPostgres), or an
/// application's own. KBKit chooses the engine by the location's scheme and knows no engine by
/// name beyond its built-in file one; an application registers the others once, at start
/// (`KnowledgeBase.register(_:)`).
public protocol StoreEngine: Sendable {
    /// The URL schemes this engine opens, lowercase (`postgres`, `postgresql`); empty for the
    /// engine of plain file paths.
    var schemes: [String] { get }
    /// Opens the index at `location`, making it when `opening.create` is true and there is none.
    func open(_ location: String, _ opening: StoreOpening) throws -> any IndexStore
}

/// What an engine is told when it opens an index, beyond where it is.
public struct StoreOpening: Sendable {
    /// Make the index when there is none (else that is a `noIndex` error saying how to make one).
    public var create: Bool
    /// A database server's settings (its pool size, its text search configuration).
    public var options: StoreOptions
    /// kb's own keyword analysis, for a store that does not analyse text itself.
    public var analyzer: any KeywordAnalyzer
    /// The environment settings come from (`PGUSER`, `PGPASSWORD`, …).
    public var environment: [String: String]

    public init(create: Bool, options: StoreOptions, analyzer: any KeywordAnalyzer, environment: [String: String]) {
        self.create = create
        self.options = options
        self.analyzer = analyzer
        self.environment = environment
    }
}

/// Where an index is: `scheme` is the lowercase scheme of a `scheme://…` URL, nil for a file path.
public enum StoreLocation {
    public static func scheme(of location: String) -> String? {
        guard let end = location.range(of: "://") else { return nil }
        let scheme = location[..<end.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return scheme.lowercased()
    }

    /// `location` fit for a message: a URL's password left out.
    public static func shown(_ location: String) -> String {
        guard scheme(of: location) != nil, var parts = URLComponents(string: location), parts.password != nil else { return location }
        parts.password = nil
        return parts.string ?? location
    }
}

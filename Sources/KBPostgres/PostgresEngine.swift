public import KBStore

/// The engine of `postgres://` and `postgresql://` locations: an index in a PostgreSQL database
/// with pgvector, which several servers can share. An application registers it once, at start:
///
/// ```swift
/// KnowledgeBase.register(PostgresEngine())
/// let kb = try KnowledgeBase.open(at: "postgres://kb@db.internal:5432/kb")
/// ```
public struct PostgresEngine: StoreEngine {
    public init() {}

    public var schemes: [String] { ["postgres", "postgresql"] }

    public func open(_ location: String, _ opening: StoreOpening) throws -> any IndexStore {
        try PostgresStore.open(url: location, create: opening.create, connections: opening.options.connections,
                               keywordCacheMegabytes: opening.options.keywordCacheMegabytes,
                               textSearchConfig: opening.options.textSearch, analyzer: opening.analyzer,
                               environment: opening.environment)
    }
}

public import KBStore

/// The engine of plain file paths: an index in one SQLite file. KBKit opens every location
/// without a URL scheme with it.
public struct SQLiteEngine: StoreEngine {
    public init() {}

    public var schemes: [String] { [] }

    public func open(_ location: String, _ opening: StoreOpening) throws -> any IndexStore {
        try SQLiteStore.open(at: location, create: opening.create)
    }
}

public import KBCore

extension KBError {
    /// Runs a store's call: kb's own errors pass through as they are, any other (the database
    /// library's) becomes the store's `KBError`, which names the index and keeps the cause.
    public static func converting<T>(_ convert: (any Error) -> KBError, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as KBError {
            throw error
        } catch {
            throw convert(error)
        }
    }
}

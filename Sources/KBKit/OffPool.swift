import Dispatch
import KBCore

/// The bridge from Swift concurrency to blocking work, written once. See the "Threads and
/// blocking" article in KBKit's documentation for who uses it.
enum OffPool {
    /// Runs blocking work (file reads and walks, parsing on all cores, loading a model) on a
    /// Dispatch thread, never on Swift's cooperative pool, and awaits it.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }

    /// As `run`, for work that throws.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await run { Result { try work() } }.get()
    }
}

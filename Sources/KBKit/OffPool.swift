import Dispatch
import KBCore

/// The two bridges between Swift concurrency and blocking work, each written once. See the
/// "Threads and blocking" article in KBKit's documentation for who uses which.
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

    /// Runs async work and blocks the calling thread until it is done: for code that already runs
    /// on a Dispatch thread of its own (a loader's OCR workers) and must ask the index. Never call
    /// it from a task on the cooperative pool.
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let result = LockedValue<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .failure(KBError(.database, "A call to the index ended without an answer."))
    }
}

import Foundation

/// Work started on a dispatch thread, whose result the starting thread collects when it needs
/// it (blocking until then). For work beside a snapshot's thread — never on Swift's cooperative
/// pool, where blocking would hold a core.
///
/// ```swift
/// let ranking = BackgroundWork { try work() }
/// // … other work on this thread …
/// let result = try ranking.result()
/// ```
///
/// @unchecked Sendable: `outcome` is written once, before `group` is left, and read after it is waited for.
final class BackgroundWork<T>: @unchecked Sendable {
    private let group = DispatchGroup()
    private var outcome: Result<T, any Error>?

    init(_ work: @escaping @Sendable () throws -> T) {
        group.enter()
        DispatchQueue.global(qos: .userInitiated).async {
            self.outcome = Result { try work() }
            self.group.leave()
        }
    }

    /// The work's result or error, once it is done.
    func result() throws -> T {
        group.wait()
        return try outcome!.get()
    }

    /// Waits for the work to end, whatever its outcome (so nothing outlives its caller's scope).
    func finish() { group.wait() }
}

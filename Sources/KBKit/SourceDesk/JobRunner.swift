import Foundation
import KBCore
import KBStore

/// Runs the jobs of sources added over the API, one at a time, in the background of a service
/// (`kb serve`): woken when this process queues one, and every `poll` seconds for jobs other
/// processes queued (replicas of one PostgreSQL index). Stop it before the knowledge base goes.
///
/// ```swift
/// let runner = kb.startJobRunner()
/// // … serve requests; uploads are read as they come …
/// await runner.stop()
/// ```
public final class JobRunner: Sendable {
    let task: Task<Void, Never>

    init(task: Task<Void, Never>) { self.task = task }

    /// Stops taking jobs and waits for the one under way (its job, if interrupted, runs again later).
    public func stop() async {
        task.cancel()
        await task.value
    }
}

/// A running job's progress, recorded in the index at most once a second (and every
/// `heartbeat` seconds, so that other processes know the job is alive).
///
/// @unchecked Sendable: `progress`, `lastWrite` and `stopped` are guarded by `lock`.
final class JobProgressReporter: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Job.Progress()
    private var lastWrite = Date.distantPast
    private var stopped = false
    private let store: any IndexStore
    private let id: String
    private var ticker: Task<Void, Never>?

    init(store: any IndexStore, id: String, heartbeat: TimeInterval) {
        self.store = store
        self.id = id
        ticker = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(heartbeat * 1e9))
                await self?.write(force: true)
            }
        }
    }

    var progress: Job.Progress { lock.withLock { current } }

    func update(_ change: (inout Job.Progress) -> Void) {
        lock.withLock { change(&current) }
        Task { await write(force: false) }
    }

    private func write(force: Bool) async {
        let due: Job.Progress? = lock.withLock {
            guard !stopped, force || Date().timeIntervalSince(lastWrite) >= 1 else { return nil }
            lastWrite = Date()
            return current
        }
        guard let due else { return }
        do {
            try await store.recordProgress(id: id, due)
        } catch {
            // Progress is advisory: the next write, or the job's end, records it.
        }
    }

    func stop() {
        lock.withLock { stopped = true }
        ticker?.cancel()
    }
}

/// Wakes the job runner when this process queues a job; a wake-up with nobody waiting is kept
/// for the next wait.
///
/// @unchecked Sendable: `pending` and `waiter` are guarded by `lock`.
final class JobSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: (id: UUID, continuation: CheckedContinuation<Void, Never>)?

    func fire() {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiter else { pending = true; return nil }
            self.waiter = nil
            return waiter.continuation
        }
        waiting?.resume()
    }

    /// Returns when fired, or after `seconds`, or when the task is cancelled.
    func wait(seconds: TimeInterval) async {
        let id = UUID.random()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow: Bool = lock.withLock {
                    if pending || Task.isCancelled {
                        pending = false
                        return true
                    }
                    waiter = (id, continuation)
                    return false
                }
                if resumeNow { continuation.resume(); return }
                Task.detached { [weak self] in
                    try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                    self?.resume(id)
                }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UUID) {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiter, waiter.id == id else { return nil }
            self.waiter = nil
            return waiter.continuation
        }
        waiting?.resume()
    }
}

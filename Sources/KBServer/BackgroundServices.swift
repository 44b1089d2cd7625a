import Foundation
import KBCore
import KBKit
import Logging
import ServiceLifecycle

// What `kb serve` runs beside its HTTP server, each a `Service` in the application's one
// `ServiceGroup` (`RetrievalService.run`): started with it, and on SIGTERM or SIGINT shut down
// gracefully after the server stops taking requests, in the reverse of the order they were added.
// Each runs until that shutdown (a service that returned earlier would end the group).

/// Readies the model and the index (`KnowledgeBase.warm`), then says so: `/healthz` answers 503
/// "warming" until then (`RetrievalService.run` clears `warmed` before the server starts), so
/// that a load balancer waits.
struct WarmUpService: Service {
    let kb: KnowledgeBase
    let warmed: LockedValue<Bool>
    let logger: Logger

    func run() async throws {
        let took = await cancelWhenGracefulShutdown { [kb] in await kb.warm() }
        warmed.withLock { $0 = true }
        logger.info("warm after \(took)")
        try? await gracefulShutdown()
    }
}

/// The jobs of sources added over the API, one at a time (`KnowledgeBase.startJobRunner`); on
/// shutdown the job under way finishes or is left to run again later.
struct JobRunnerService: Service {
    let kb: KnowledgeBase

    func run() async throws {
        let runner = kb.startJobRunner()
        try? await gracefulShutdown()
        await runner.stop()
    }
}

/// The request log's writer: each second's entries in one write, old rows pruned hourly, and
/// what is still queued written once more at shutdown.
struct RequestLogService: Service {
    let log: RequestLog

    func run() async throws {
        // Ended by the shutdown, not by cancelling it: its last write runs in a task that is not
        // cancelled (a cancelled one's write was refused on SQLite, so the last second of requests
        // was lost, and could land twice on PostgreSQL).
        await log.run(until: { Task.isShuttingDownGracefully })
    }
}

/// The watched folders kept in the index (`--watch`), started before the server (so that a
/// folder that cannot be watched stops `kb serve` with its message) and stopped at shutdown.
struct FolderWatcherService: Service {
    let watcher: FolderWatcher

    func run() async throws {
        try? await gracefulShutdown()
        await watcher.stop()
    }
}

/// The index's vectors and keyword postings read into memory ahead of the first search, and
/// saved beside the index for the next start (`KnowledgeBase.prepareSearches`,
/// `saveSearches`); at shutdown what changed since is saved again. Each step is reported in a
/// line (`kb serve` writes them to standard error).
struct SearchCopiesService: Service {
    let kb: KnowledgeBase
    let report: @Sendable (String) -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown { [kb, report] in
            let start = DispatchTime.now().uptimeNanoseconds
            do {
                let read = try await kb.prepareSearches()
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                report("vectors and keyword postings in memory (\(String(format: "%.1f", seconds)) s)")
                for line in read { report(line) }
            } catch {
                report("could not load the index into memory ahead of searches (\(error)); the first search loads it instead")
                return
            }
            guard !Task.isCancelled else { return }
            await Self.save(kb, report)
        }
        try? await gracefulShutdown()
        await Self.save(kb, report)
    }

    /// Saves the copies (nothing when the saved ones are current).
    static func save(_ kb: KnowledgeBase, _ report: @Sendable (String) -> Void) async {
        do {
            for line in try await kb.saveSearches() { report("saved \(line)") }
        } catch {
            report("\(error)")
        }
    }
}

public import Foundation
public import KBCore
public import KBIngest
public import KBRequests
public import KBStore
import KBSystem

/// How a watched folder is kept in the index.
public struct WatchSettings: Sendable {
    /// Folders to keep in the index (each read recursively, hidden files skipped, `.kbignore`
    /// respected).
    public var folders: [String]
    /// How files are read (chunking, tags, OCR).
    public var ingest: IngestOptions
    /// Changes are read once the folders have been quiet this long (an editor's save storm is one
    /// re-read). The default is 0.3 s.
    public var debounce: Duration = .milliseconds(300)
    /// Changes still arriving are read at the latest this long after the first. The default is 5 s.
    public var maxDelay: Duration = .seconds(5)
    /// Every folder is scanned again this often, in case events were lost. The default is 10 minutes.
    public var rescanEvery: Duration = .seconds(600)

    public init(folders: [String], ingest: IngestOptions = IngestOptions()) {
        self.folders = folders
        self.ingest = ingest
    }
}

/// One round of changes the watcher brought into the index.
public struct WatchReport: Sendable, Hashable, Codable {
    public enum Cause: String, Sendable, Hashable, Codable {
        /// The first scan, as the watch starts.
        case start
        /// Files written, created, moved or deleted.
        case change
        /// The periodic full scan.
        case rescan
        /// The kernel's event queue overflowed (events lost): a full scan.
        case overflow
    }

    public var cause: Cause
    public var at: Date
    /// The paths the round looked at (changed, new and gone files); empty for a whole scan.
    public var paths: [String]
    /// Files read (new or changed).
    public var read: Int
    /// Sources removed because their files are gone.
    public var removed: Int
    public var failed: [IngestReport.Failure]
    public var seconds: Double
    /// File system events behind it.
    public var events: Int
}

/// Counts since the watch started (for `/metrics`).
public struct WatchCounts: Sendable, Hashable, Codable {
    public var events = 0
    public var rounds = 0
    public var filesRead = 0
    public var sourcesRemoved = 0
    public var failures = 0
    public var rescans = 0
    public var overflows = 0
    /// Folders the kernel watches (0 where inotify is missing: periodic rescans only).
    public var folders = 0
}

/// Keeps folders in the index as files change (`kb serve --watch`, `kb ingest --watch`): Linux
/// inotify events (`FileEvents`) are gathered until the folders are quiet for the debounce, then
/// changed and new files are ingested and deleted ones' sources removed, in one ingest (a moved
/// file's new source reuses its old vectors); an overflowed event queue, a changed `.kbignore`
/// and the periodic rescan ingest the whole folders with pruning. Ingesting runs as `ingest`
/// does — reading off the cooperative pool, each file in its own transaction — so requests never
/// wait for it.
///
/// ```swift
/// let watcher = try kb.watch(WatchSettings(folders: [notes]), embedder: embedder, record: record, as: .admin) { report in
///     print(report.cause, report.read)
/// }
/// ```
public final class FolderWatcher: Sendable {
    let ingestor: Ingestor
    let settings: WatchSettings
    let embedder: (any Embedder)?
    let record: EmbedderRecord
    let roots: [String]
    let events = FileEvents()
    private let pending = LockedValue((changes: FileChanges(), first: ContinuousClock.Instant?.none, last: ContinuousClock.Instant?.none))
    private let state = LockedValue(WatchCounts())
    private let loop = LockedValue<Task<Void, Never>?>(nil)
    /// How the loop waits: asleep until its next deadline (`sleeper`), woken early by an event
    /// (`take` cancels the sleep, or marks `woken` when the loop is between sleeps).
    private let wake = LockedValue((sleeper: Task<Void, Never>?.none, woken: false))
    private let onReport: @Sendable (WatchReport) -> Void

    init(ingestor: Ingestor, settings: WatchSettings, embedder: (any Embedder)?, record: EmbedderRecord,
         report: @escaping @Sendable (WatchReport) -> Void) throws {
        self.ingestor = ingestor
        self.settings = settings
        self.embedder = embedder
        self.record = record
        self.onReport = report
        var roots: [String] = []
        for folder in settings.folders {
            let root = SourcePaths.absolute(folder)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder.boolValue else {
                throw KBError(.noSuchFile, "Cannot watch \(folder): it is not a folder. Give a folder to keep in the index (--watch DIR).")
            }
            if !roots.contains(root) { roots.append(root) }
        }
        self.roots = roots
    }

    /// Counts since the watch started.
    public var counts: WatchCounts {
        var counts = state.withLock { $0 }
        counts.folders = events.watchedFolders
        return counts
    }

    /// Starts watching: the kernel's watches are set first, then the folders are ingested once
    /// (`WatchReport.Cause.start`), then changes follow. Where inotify is missing or out of
    /// watches, the periodic rescan alone keeps the folders (the reason is reported as a failure).
    func start() {
        let task = Task { [self] in
            // Setting the watches walks the folders: off the cooperative pool.
            let problem = await OffPool.run { [self] () -> String? in
                do {
                    try events.start(roots) { [weak self] changes in self?.take(changes) }
                    return nil
                } catch {
                    return (error as? KBError)?.message ?? "\(error)"
                }
            }
            await round(.start, changes: FileChanges(), problem: problem)
            await run()
        }
        loop.withLock { $0 = task }
    }

    /// Stops watching and waits for a round being ingested to end.
    public func stop() async {
        events.stop()
        let task = loop.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    private func take(_ changes: FileChanges) {
        let now = ContinuousClock.now
        pending.withLock { pending in
            pending.changes.merge(changes)
            if pending.first == nil { pending.first = now }
            pending.last = now
        }
        state.withLock { $0.events += changes.events }
        wake.withLock { wake in
            wake.woken = true
            wake.sleeper?.cancel()
        }
    }

    /// Sleeps until `deadline`, or until an event arrives (or the watch stops).
    private func sleep(until deadline: ContinuousClock.Instant) async {
        let sleeper = wake.withLock { wake -> Task<Void, Never>? in
            if wake.woken {
                wake.woken = false
                return nil
            }
            let task = Task { _ = try? await Task.sleep(until: deadline, clock: .continuous) }
            wake.sleeper = task
            return task
        }
        guard let sleeper else { return }
        await withTaskCancellationHandler { await sleeper.value } onCancel: { sleeper.cancel() }
        wake.withLock { $0.sleeper = nil }
    }

    /// The loop: it sleeps until the next thing is due — the rescan, or the debounce (or the
    /// longest delay) of the events gathered — and an event wakes it to work that out again.
    private func run() async {
        var nextRescan = ContinuousClock.now + settings.rescanEvery
        while !Task.isCancelled {
            let due = pending.withLock { pending -> ContinuousClock.Instant in
                guard let first = pending.first, let last = pending.last else { return nextRescan }
                return min(nextRescan, last + settings.debounce, first + settings.maxDelay)
            }
            await sleep(until: due)
            let now = ContinuousClock.now
            if now >= nextRescan {
                let changes = pending.withLock { pending in
                    defer { pending = (FileChanges(), nil, nil) }
                    return pending.changes
                }
                await round(.rescan, changes: changes)
                nextRescan = ContinuousClock.now + settings.rescanEvery
                continue
            }
            let ready = pending.withLock { pending -> FileChanges? in
                guard let first = pending.first, let last = pending.last,
                      now - last >= settings.debounce || now - first >= settings.maxDelay else { return nil }
                defer { pending = (FileChanges(), nil, nil) }
                return pending.changes
            }
            guard let ready else { continue }
            if ready.overflowed {
                await round(.overflow, changes: ready)
                nextRescan = ContinuousClock.now + settings.rescanEvery
            } else {
                await round(.change, changes: ready)
            }
        }
    }

    /// Ingests one round: the changed files and the gone ones, or (start, rescan, overflow, a
    /// changed `.kbignore`) the whole folders, with pruning.
    private func round(_ cause: WatchReport.Cause, changes: FileChanges, problem: String? = nil) async {
        let started = Date()
        var paths: [String]
        var cause = cause
        if cause == .change, changes.changed.contains(where: { $0.hasSuffix("/.kbignore") }) { cause = .rescan }
        if cause == .change {
            guard let chosen = await chosenPaths(changes) else { return }
            paths = chosen
        } else {
            paths = roots
        }
        var report = paths.isEmpty ? IngestReport()
            : await ingestor.ingest(paths, options: settings.ingest, embedder: embedder, record: record, prune: true)
        if cause != .change { report.removed += await removeExcluded() }
        if let problem { report.failed.append(.init(path: roots.joined(separator: ", "), message: problem)) }
        if cause == .change && report.added + report.updated + report.removed + report.failed.count == 0 { return }
        state.withLock { counts in
            counts.rounds += 1
            counts.filesRead += report.added + report.updated
            counts.sourcesRemoved += report.removed
            counts.failures += report.failed.count
            if cause == .rescan { counts.rescans += 1 }
            if cause == .overflow { counts.overflows += 1 }
        }
        onReport(WatchReport(cause: cause, at: started, paths: cause == .change ? paths : [], read: report.added + report.updated,
                             removed: report.removed, failed: report.failed, seconds: Date().timeIntervalSince(started), events: changes.events))
    }

    /// Removes the sources under the watched folders that their `.kbignore` now excludes (a rule
    /// added while the watch runs); returns how many.
    private func removeExcluded() async -> Int {
        let roots = self.roots
        guard let stored = try? await ingestor.store.snapshot({ snapshot in try roots.map { try snapshot.sourcePaths(under: $0 + "/") } }) else { return 0 }
        let excluded = await OffPool.run {   // reads each folder's .kbignore
            zip(roots, stored).flatMap { root, paths -> [String] in
                guard let rules = try? IgnoreRules(folder: root) else { return [] }
                return paths.filter { rules.ignores(String($0.dropFirst(root.count + 1))) }
            }
        }
        guard !excluded.isEmpty, let removed = try? await ingestor.store.removeSources(exactly: excluded) else { return 0 }
        return removed.count
    }

    /// The files a round of changes asks to ingest: changed files kb reads (under a watched
    /// folder, not hidden, not excluded by its `.kbignore`), the files of new folders, and the
    /// gone paths the index holds sources for. Nil when none.
    private func chosenPaths(_ changes: FileChanges) async -> [String]? {
        let roots = self.roots
        // The sources the index holds at or under the gone paths (the ingest reads the rest).
        let gonePaths = Array(changes.gone)
        let known = gonePaths.isEmpty ? [] : Set((try? await ingestor.store.snapshot { snapshot in
            try gonePaths.flatMap { try snapshot.sourcePaths(under: $0) }
        }) ?? [])
        let chosen = await OffPool.run { () -> [String] in
            var rules: [String: IgnoreRules] = [:]
            func accepted(_ path: String) -> Bool {
                guard let root = roots.first(where: { path.hasPrefix($0 + "/") }) else { return false }
                let relative = String(path.dropFirst(root.count + 1))
                guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
                      FileTypes.kind(forExtension: (path as NSString).pathExtension) != nil else { return false }
                if rules[root] == nil { rules[root] = (try? IgnoreRules(folder: root)) ?? IgnoreRules(patterns: ["*"]) }
                return !rules[root]!.ignores(relative)
            }
            var files = changes.changed.filter { accepted($0) && FileManager.default.fileExists(atPath: $0) }
            for folder in changes.newFolders {
                let found = FileScanner.scan([folder]).files.map(\.path).filter(accepted)
                files.formUnion(found)
            }
            let gone = changes.gone.filter { path in
                !FileManager.default.fileExists(atPath: path) && known.contains { $0 == path || $0.hasPrefix(path + "/") }
            }
            return files.sorted() + gone.sorted()
        }
        return chosen.isEmpty ? nil : chosen
    }
}

extension KnowledgeBase {
    /// Keeps folders in the index as their files change (`FolderWatcher`): ingests them once
    /// now, then follows the file system until `stop()`. `report` hears every round that changed
    /// something (and every rescan). `embedder` and `record` as for `ingest` (`embedder(_:)`).
    /// The admin's only (it reads the server's disk).
    public func watch(_ settings: WatchSettings, embedder: (any Embedder)?, record: EmbedderRecord, as caller: Caller,
                      report: @escaping @Sendable (WatchReport) -> Void = { _ in }) throws -> FolderWatcher {
        try caller.requireAdmin("watch folders on the server's disk")
        let watcher = try FolderWatcher(ingestor: ingestor, settings: settings, embedder: embedder, record: record, report: report)
        watcher.start()
        return watcher
    }
}

extension WatchReport {
    /// One line for a log: `change: 2 read, 1 removed in 0.41 s (/notes/a.md, …)`.
    public var summary: String {
        var line = "\(cause.rawValue): \(read) read, \(removed) removed"
        if !failed.isEmpty { line += ", \(failed.count) failed" }
        line += String(format: " in %.2f s", seconds)
        if !paths.isEmpty { line += " (" + paths.prefix(3).joined(separator: ", ") + (paths.count > 3 ? ", …" : "") + ")" }
        for failure in failed { line += "\n  failed: \(failure.path): \(failure.message)" }
        return line
    }
}

import Foundation
import KBCore
import KBIngest
import KBStore
import Testing
@testable import KBKit

/// Watched folders: files created, edited, moved and deleted reach the index by themselves; an
/// overflowed event queue and the periodic rescan catch what events missed. Each wait is bounded
/// (a generous 300 s: the PostgreSQL run of the whole suite can make one ingest wait a minute for
/// the server); none is a timing measurement.
@Suite(.serialized) struct FolderWatcherTests {
    /// Waits until `condition` holds, checking every 50 ms, for at most `seconds`.
    /// `state` says what the watcher had done, for the message when it did not come.
    func eventually(_ what: Comment, seconds: Double = 300, state: () -> String = { "" }, _ condition: () async throws -> Bool) async throws {
        let start = Date(), end = start.addingTimeInterval(seconds)
        var checks = 0
        while Date() < end {
            checks += 1
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("not within \(Int(seconds)) s (\(checks) checks): \(what); \(state())")
    }

    func paths(_ kb: KnowledgeBase, _ words: String) async throws -> [String] {
        try await kb.search(.keyword(words), as: .admin).hits.map(\.sourcePath)
    }

    @Test func createdEditedMovedAndDeletedFilesReachTheIndex() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\nAlpha first version.")
        try ws.write(".kbignore", "drafts/*\nsecret.md\n")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let counting = CountingEmbedder()
        let record = EmbedderChoice.record(for: counting, choice: .hashing)
        let reports = LockedValue([WatchReport]())
        var settings = WatchSettings(folders: [ws.notes.path])
        settings.debounce = .seconds(1)
        let watcher = try kb.watch(settings, embedder: counting, record: record, as: .admin) { report in reports.withLock { $0.append(report) } }
        defer { Task { await watcher.stop() } }
        try await eventually("the first scan", state: { "\(reports.withLock { $0 }), \(watcher.counts)" }) {
            reports.withLock { $0.first?.cause == .start }
        }
        #expect(try await paths(kb, "alpha") == [ws.path("a.md")])
        #expect(watcher.counts.folders == 1)

        // Created.
        try ws.write("b.md", "# B\n\nBeta zebra text.")
        try await eventually("b.md searchable and its round reported") {
            try await paths(kb, "zebra") == [ws.path("b.md")] && reports.withLock { $0.count } >= 2
        }

        // Edited twice in quick succession: one re-read, of the last version.
        // (A round's files are searchable as soon as they are written, and it is counted and
        // reported just after: so each check waits for the round's report too.)
        let (readBefore, roundsBefore) = (watcher.counts.filesRead, reports.withLock { $0.count })
        try ws.write("a.md", "# A\n\nAlpha second version.")
        try ws.write("a.md", "# A\n\nAlpha third version.")
        try await eventually("the third version searchable") {
            try await paths(kb, "third") == [ws.path("a.md")] && reports.withLock { $0.count } > roundsBefore
        }
        #expect(watcher.counts.filesRead == readBefore + 1)
        #expect(try await paths(kb, "second").isEmpty)

        // Moved into a new folder: the old source goes, the new one keeps the vectors (nothing embedded again).
        let embedded = counting.lock.withLock { counting.texts.count }
        try FileManager.default.createDirectory(at: ws.notes.appendingPathComponent("moved"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: ws.path("b.md"), toPath: ws.path("moved/b2.md"))
        try await eventually("the moved file found under its new name") { try await paths(kb, "zebra") == [ws.path("moved/b2.md")] }
        #expect(counting.lock.withLock { counting.texts.count } == embedded)
        #expect(try await kb.sources(as: .admin).map(\.path).sorted() == [ws.path("a.md"), ws.path("moved/b2.md")])

        // Ignored files never come in; a deleted file's source goes.
        try FileManager.default.createDirectory(at: ws.notes.appendingPathComponent("drafts"), withIntermediateDirectories: true)
        try ws.write("drafts/draft.md", "# Draft\n\nUnfinished quokka text.")
        try ws.write("secret.md", "# Secret\n\nQuokka secret.")
        try ws.delete("a.md")
        try await eventually("a.md removed") { try await paths(kb, "alpha").isEmpty }
        #expect(try await paths(kb, "quokka").isEmpty)

        // A rule added to .kbignore takes the files it now excludes out.
        try ws.write(".kbignore", "drafts/*\nsecret.md\nmoved/*\n")
        try await eventually("moved/b2.md excluded") {
            try await paths(kb, "zebra").isEmpty && reports.withLock { $0.contains { $0.cause == .rescan } }
        }
        #expect(watcher.counts.sourcesRemoved >= 2 && watcher.counts.failures == 0)
    }

    @Test func aFolderMovedOutOfTheWatchIsGoneAndStaysGone() async throws {
        let ws = try Workspace()
        try FileManager.default.createDirectory(at: ws.notes.appendingPathComponent("sub/deep"), withIntermediateDirectories: true)
        try ws.write("sub/deep/a.md", "# A\n\nAardvark text.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let watcher = try kb.watch(WatchSettings(folders: [ws.notes.path]), embedder: nil, record: .none, as: .admin)
        defer { Task { await watcher.stop() } }
        try await eventually("the first scan") { try await paths(kb, "aardvark") == [ws.path("sub/deep/a.md")] }
        #expect(watcher.counts.folders == 3)

        let outside = ws.root.appendingPathComponent("outside")
        try FileManager.default.moveItem(at: ws.notes.appendingPathComponent("sub"), to: outside)
        try await eventually("the moved folder's source removed") { try await paths(kb, "aardvark").isEmpty }
        // Edits where it went are not the watch's: a file written there never comes in (a file
        // written in the watched folder afterwards marks the point where it would have).
        try "# B\n\nBadger text.".write(to: outside.appendingPathComponent("deep/b.md"), atomically: false, encoding: .utf8)
        try ws.write("c.md", "# C\n\nCapybara text.")
        try await eventually("c.md searchable") { try await paths(kb, "capybara") == [ws.path("c.md")] }
        #expect(try await paths(kb, "badger").isEmpty)
        #expect(watcher.counts.folders == 1)
    }

    @Test func anOverflowedEventQueueTriggersAFullRescan() async throws {
        let ws = try Workspace()
        try ws.write("a.md", "# A\n\nAlpha.")
        let kb = try KnowledgeBase.open(at: ws.dbPath)
        let reports = LockedValue([WatchReport]())
        let watcher = try kb.watch(WatchSettings(folders: [ws.notes.path]), embedder: nil, record: .none, as: .admin) { report in
            reports.withLock { $0.append(report) }
        }
        defer { Task { await watcher.stop() } }
        try await eventually("the first scan") { reports.withLock { !$0.isEmpty } }

        // While the watcher does not read, more events than the kernel queues (alternating
        // between two files, so none merge; with room for the one read of up to 64 KiB the
        // reader may still make after the pause); then a new file whose events are lost.
        watcher.events.paused.withLock { $0 = true }
        try await eventually("the reader paused") { watcher.events.readerPaused.withLock { $0 } }
        let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
        for n in 0...(limit / 2 + 4_200) {
            try Data("\(n)".utf8).write(to: ws.notes.appendingPathComponent(".noise-a"))
            try Data("\(n)".utf8).write(to: ws.notes.appendingPathComponent(".noise-b"))
        }
        try ws.write("late.md", "# Late\n\nWombat text.")
        watcher.events.paused.withLock { $0 = false }

        try await eventually("the round after the overflow", state: { "\(reports.withLock { $0 }), \(watcher.counts)" }) {
            reports.withLock { $0.count } > 1
        }
        #expect(try await paths(kb, "wombat") == [ws.path("late.md")])
        #expect(watcher.counts.overflows == 1)
        #expect(reports.withLock { $0.dropFirst().map(\.cause) == [.overflow] && $0.last?.read == 1 })
    }
}

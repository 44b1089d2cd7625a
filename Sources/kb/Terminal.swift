import Foundation
import KBCore
import KBKit
import KBRequests
import KBStore
#if PostgreSQL
import KBPostgres
#endif

/// Where output goes: results to stdout, progress and errors to stderr.
enum Terminal {
    static let stderrIsTerminal = isatty(STDERR_FILENO) == 1
    static let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1

    static func error(_ message: String) {
        FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data(("warning: " + message + "\n").utf8))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data(("note: " + message + "\n").utf8))
    }

    /// After a build or a copy into PostgreSQL: the checkpoint's time, or a warning saying why
    /// none ran and what to run instead.
    static func report(_ checkpoint: CheckpointReport?) {
        guard let checkpoint else { return }
        if checkpoint.done { print(checkpoint.sentence) } else { warning(checkpoint.sentence) }
    }

    /// In a debug build (scripts/setup.sh's, whose dependencies are unoptimised), what it costs
    /// on PostgreSQL, when one of `locations` is a PostgreSQL URL: PostgresNIO and SwiftNIO then
    /// run unoptimised, and `kb serve` answers about half the requests a release build answers
    /// (docs/development.md, "The debug build"). Nil in a release build.
    static func debugBuildNote(for locations: [String]) -> String? {
        #if DEBUG && PostgreSQL
        guard locations.contains(where: PostgresStore.isURL) else { return nil }
        return "this kb is a debug build (scripts/setup.sh's), whose PostgreSQL client is unoptimised: about half a release "
            + "build's requests/s; for a server on PostgreSQL, build with `scripts/setup.sh --release`"
        #else
        return nil
        #endif
    }

    /// One line saying that results came from keywords alone, when they did.
    static func warn(_ degraded: Degraded?) {
        guard let degraded else { return }
        warning("the query could not be embedded, so these are keyword results only: \(degraded.reason)")
    }

    /// One JSON document on stdout: kb's shared encoding, indented.
    static func printJSON<T: Encodable>(_ value: T) throws {
        FileHandle.standardOutput.write(try KBJSON.encode(value, pretty: true))
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    /// A path as short as it can be said from the current folder.
    static func display(_ path: String) -> String {
        let cwd = FileManager.default.currentDirectoryPath
        if path.hasPrefix(cwd + "/") { return String(path.dropFirst(cwd.count + 1)) }
        return path
    }

    /// An excerpt of at most about `limit` characters, cut at a word.
    static func shorten(_ text: String, limit: Int = 300) -> String {
        guard text.count > limit else { return text }
        let cut = text.prefix(limit)
        return String(cut[..<(cut.lastIndex(of: " ") ?? cut.endIndex)]) + " …"
    }

    static func bold(_ text: String) -> String {
        stdoutIsTerminal ? "\u{1B}[1m\(text)\u{1B}[0m" : text
    }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
/// @unchecked Sendable: all state is guarded by `lock`.
final class ProgressBar: @unchecked Sendable {
    private let enabled: Bool
    private let label: String
    private let lock = NSLock()
    private var lastDraw = Date.distantPast
    private var drawn = false
    /// When each unit's counting began, for its rate.
    private var started: [String: (at: Date, done: Int)] = [:]

    init(label: String, enabled: Bool = Terminal.stderrIsTerminal) {
        self.label = label
        self.enabled = enabled
    }

    /// Draws the bar; with `unit` ("snippets", "pages"), also how many of them a second since
    /// that unit's counting began.
    func update(done: Int, total: Int, item: String, unit: String? = nil) {
        guard enabled, total > 0 else { return }
        lock.lock(); defer { lock.unlock() }
        let now = Date()
        var rate = ""
        if let unit {
            let first = started[unit] ?? (now, done)
            started[unit] = first
            let seconds = now.timeIntervalSince(first.at)
            if seconds >= 0.5 { rate = String(format: " %.0f %@/s", Double(done - first.done) / seconds, unit) }
        }
        guard done == total || now.timeIntervalSince(lastDraw) > 0.05 else { return }
        lastDraw = now
        let width = 24
        let filled = width * done / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        var name = item
        if name.count > 36 { name = "…" + name.suffix(35) }
        let line = "\r\u{1B}[2K\(label) \(bar) \(done)/\(total)\(rate) \(name)"
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    func finish() {
        guard enabled else { return }
        lock.lock(); defer { lock.unlock() }
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

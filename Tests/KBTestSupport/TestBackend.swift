public import Foundation
import KBKit
import KBPostgres
import Testing

/// Which storage backend the suite runs against. By default every index is an SQLite file;
/// with `KB_TEST_BACKEND=postgres` and `KB_TEST_POSTGRES_URL=postgres://USER@HOST:PORT/DB`
/// (scripts/test.sh starts a throwaway server and sets both) the same tests run against
/// PostgreSQL, each index a database of its own, made on first use.
public enum TestBackend {
    /// The PostgreSQL server the suite runs against; nil for SQLite.
    public static let postgresServer: String? = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["KB_TEST_BACKEND"] == "postgres" else { return nil }
        guard let url = environment["KB_TEST_POSTGRES_URL"], !url.isEmpty else {
            fatalError("KB_TEST_BACKEND=postgres needs KB_TEST_POSTGRES_URL (scripts/test.sh starts a server and sets it).")
        }
        return url
    }()

    /// The suite's composition root: PostgreSQL indexes open as kb's own do.
    private static let engines: Void = KnowledgeBase.register(PostgresEngine())

    public static var isSQLite: Bool { postgresServer == nil }
    public static var isPostgres: Bool { postgresServer != nil }

    /// A new, empty index: `folder/name` for SQLite, else a new database on the test server.
    public static func freshIndex(in folder: URL, name: String = "kb.sqlite") -> String {
        _ = engines
        noteIndexMade()
        guard let server = postgresServer, var parts = URLComponents(string: server) else {
            return folder.appendingPathComponent(name).path
        }
        parts.path = "/kb_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24)
        return parts.string!
    }

    /// With `KB_TEST_INDEX_LOG` naming a file, each test that makes an index adds its id to it
    /// (`Module.Suite/test()`), and a call outside any test adds `*`: scripts/test.sh runs again on
    /// PostgreSQL only the tests that make an index, as the others would run the same twice.
    private static func noteIndexMade() {
        guard let path = ProcessInfo.processInfo.environment["KB_TEST_INDEX_LOG"], !path.isEmpty else { return }
        let line = Test.current.map { $0.id.moduleName + "." + $0.id.nameComponents.joined(separator: "/") } ?? "*"
        indexLog.withLock {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            guard let file = FileHandle(forWritingAtPath: path) else { return }
            defer { try? file.close() }
            _ = try? file.seekToEnd()
            try? file.write(contentsOf: Data((line + "\n").utf8))
        }
    }

    private static let indexLog = NSLock()
}

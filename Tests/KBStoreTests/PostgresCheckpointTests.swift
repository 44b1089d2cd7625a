import Foundation
import KBCore
@testable import KBPostgres
import KBStore
import Testing

/// After an HNSW build or a copy, kb asks the server to write its pages to disk at once
/// (`CHECKPOINT`) when the role may, and says what to run instead when it may not.
@Suite struct PostgresCheckpointTests {
    @Test(.enabled(if: ContractEngine.postgres != nil), .timeLimit(.minutes(2)))
    func aRoleThatMayCheckpointsAndOneThatMayNotIsToldWhatToRun() async throws {
        let engine = try #require(ContractEngine.postgres)
        let location = engine.freshLocation()
        let admin = try #require(try engine.open(location, create: true) as? PostgresStore)

        // The test server's role is a superuser: the server checkpoints at once.
        let before = try await Self.requestedCheckpoints(admin)
        let done = try await admin.checkpoint(after: "the test")
        #expect(done.done && done.note == nil && done.seconds >= 0)
        #expect(try await Self.requestedCheckpoints(admin, above: before) > before)

        // An application's role: it may read and write the index's rows, but not checkpoint.
        let role = "kb_plain_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
        try await admin.run(write: true) { session in
            try session.execute("CREATE ROLE \(role) LOGIN")
            try session.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role)")
            try session.execute("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO \(role)")
        }
        var parts = try #require(URLComponents(string: location))
        parts.user = String(role)
        let plain = try #require(try engine.open(parts.string!, create: false) as? PostgresStore)
        // (Asked without the right, CHECKPOINT would fail with an error, and so would this call.)
        let notDone = try await plain.checkpoint(after: "the test")
        #expect(!notDone.done)
        #expect(notDone.note?.contains(String(role)) == true && notDone.note?.contains("GRANT pg_checkpoint") == true,
                "\(String(describing: notDone.note))")

        // PostgreSQL 15 and later: pg_checkpoint's members may.
        guard try await Self.serverVersion(admin) >= 150_000 else { return }
        try await admin.run(write: true) { session in try session.execute("GRANT pg_checkpoint TO \(role)") }
        let granted = try await Self.requestedCheckpoints(admin)
        #expect(try await plain.checkpoint(after: "the test").done)
        #expect(try await Self.requestedCheckpoints(admin, above: granted) > granted)
    }

    static func serverVersion(_ store: PostgresStore) async throws -> Int64 {
        try await store.run(write: false) { session in try session.value(Int64.self, "SELECT current_setting('server_version_num')::int8") ?? 0 }
    }

    /// Checkpoints asked for since the server's statistics were reset (PostgreSQL 17 moved the count).
    /// The checkpointer reports its count after it has woken the backend that asked, so with
    /// `above`, the count is read again (for up to ten seconds) until it passes that.
    static func requestedCheckpoints(_ store: PostgresStore, above: Int64? = nil) async throws -> Int64 {
        let version = try await serverVersion(store)
        var count: Int64 = -1
        for _ in 0..<50 {
            count = try await store.run(write: false) { session in
                try session.value(Int64.self, version >= 170_000 ? "SELECT num_requested FROM pg_stat_checkpointer"
                                                                : "SELECT checkpoints_req FROM pg_stat_bgwriter") ?? -1
            }
            guard let above, count <= above else { return count }
            try await Task.sleep(for: .milliseconds(200))
        }
        return count
    }
}

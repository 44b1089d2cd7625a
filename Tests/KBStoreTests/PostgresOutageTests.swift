import Foundation
import KBCore
@testable import KBPostgres
import KBStore
import PostgresNIO
import Testing

/// A PostgreSQL connection lost in the middle of a transaction (the server killed, or this
/// backend terminated) ends the call with `databaseUnavailable` — never a wait without end — and
/// the store serves again by itself. scripts/crash-test-postgres.sh kills the whole server under load.
@Suite struct PostgresOutageTests {
    @Test(.enabled(if: ContractEngine.postgres != nil), .timeLimit(.minutes(2)))
    func aConnectionLostBetweenTwoStatementsFailsTheCallAndTheStoreRecovers() async throws {
        let engine = try #require(ContractEngine.postgres)
        let store = try #require(try engine.fresh() as? PostgresStore)
        try await store.replace(contractDocument("/a.md", snippets: ["alpha bravo"]), vectors: nil, embedder: .none)
        for write in [false, true] {
            // The backend is ended from another connection between two statements; the second
            // goes out on a socket already closed.
            let error = await #expect(throws: KBError.self) {
                try await store.run(write: write) { session in
                    try Self.endBackend(of: session, in: store)
                    try session.execute("SELECT 1")
                }
            }
            #expect(error?.code == .databaseUnavailable, "\(String(describing: error))")
        }
        let ranking = try await store.snapshot { try $0.keywordRanking(SearchQuery("alpha"), limit: 10, allowed: nil) }
        #expect(ranking.count == 1)
    }

    /// Ends `session`'s backend from another connection and waits until its socket has closed.
    static func endBackend(of session: PGSession, in store: PostgresStore) throws {
        let server = store.server, logger = store.logger
        let pid = try #require(try session.value(Int32.self, "SELECT pg_backend_pid()"))
        try blocking {
            let other = try await PostgresConnection.connect(configuration: server, id: 1, logger: logger)
            _ = try await other.query("SELECT pg_terminate_backend(\(pid))", logger: logger)
            try await other.close()
        }
        while !session.connection.isClosed { usleep(10_000) }
    }
}

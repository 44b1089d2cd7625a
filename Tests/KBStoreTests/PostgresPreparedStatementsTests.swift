import Foundation
import KBCore
@testable import KBPostgres
import KBStore
import Testing

/// A request's statements are prepared once per connection and then only bound and run
/// (`SQL.prepared`): their rows read as any statement's, their errors told apart as any
/// statement's, and a statement that failed prepared again.
@Suite struct PostgresPreparedStatementsTests {
    @Test(.enabled(if: ContractEngine.postgres != nil), .timeLimit(.minutes(2)))
    func aStatementIsPreparedOnceAndReadsAsAnyOther() async throws {
        let engine = try #require(ContractEngine.postgres)
        let store = try #require(try engine.fresh() as? PostgresStore)
        let text = "SELECT $1::int8 + 1, $2::text || '!', $3::int8[], $4::float8 * 2"
        try await store.run(write: false) { session in
            for round in 0..<3 {
                let row = try #require(try session.rows(prepared: text, .int(41), .text("hello"), .ints([1, 2, 3]), .double(1.25)).first)
                #expect(try row.get(0, Int64.self) == 42 && row.get(1, String.self) == "hello!" && row.array(2, of: Int64.self) == [1, 2, 3]
                        && row.get(3, Double.self) == 2.5, "round \(round)")
            }
            // The server holds it once for this connection, whatever the rounds.
            #expect(try session.value(Int64.self, "SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", .text(text)) == 1)
            // A null's type is the server's to infer: such a statement is not prepared.
            let row = try #require(try session.rows(prepared: "SELECT $1::text IS NULL", .text(nil)).first)
            #expect(try row.get(0, Bool.self))
            #expect(try session.value(Int64.self, "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%IS NULL'") == 0)
        }
    }

    @Test(.enabled(if: ContractEngine.postgres != nil), .timeLimit(.minutes(2)))
    func aFailedStatementSaysWhyAndIsPreparedAgain() async throws {
        let engine = try #require(ContractEngine.postgres)
        let store = try #require(try engine.fresh() as? PostgresStore)
        let text = "SELECT 10 / $1::int8"
        let error = await #expect(throws: KBError.self) {
            try await store.run(write: false) { session in _ = try session.rows(prepared: text, .int(0)) }
        }
        #expect(error?.code == .database && error?.message.contains("22012") == true, "\(String(describing: error))")
        let answer = try await store.run(write: false) { session in try session.rows(prepared: text, .int(5)).first?.get(0, Int64.self) }
        #expect(answer == 2)
    }

    @Test(.enabled(if: ContractEngine.postgres != nil), .timeLimit(.minutes(2)))
    func aConnectionLostUnderAPreparedStatementIsAnOutage() async throws {
        let engine = try #require(ContractEngine.postgres)
        let store = try #require(try engine.fresh() as? PostgresStore)
        let error = await #expect(throws: KBError.self) {
            try await store.run(write: false) { session in
                _ = try session.rows(prepared: "SELECT 1 + $1::int8", .int(1))
                try PostgresOutageTests.endBackend(of: session, in: store)
                _ = try session.rows(prepared: "SELECT 1 + $1::int8", .int(1))
            }
        }
        #expect(error?.code == .databaseUnavailable, "\(String(describing: error))")
        let answer = try await store.run(write: false) { session in try session.rows(prepared: "SELECT 1 + $1::int8", .int(2)).first?.get(0, Int64.self) }
        #expect(answer == 3)
    }
}

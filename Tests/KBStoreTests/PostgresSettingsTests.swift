import KBCore
import KBPostgres
import Testing

/// What `PostgresStore.open` reads from the environment is checked before any connection is made.
@Suite struct PostgresSettingsTests {
    @Test(arguments: ["abc", "0", "601", "1.5"])
    func aBadConnectTimeoutIsRefusedNamingTheVariable(_ value: String) {
        let error = #expect(throws: KBError.self) {
            _ = try PostgresStore.open(url: "postgres://kb@127.0.0.1:9/kb", create: false, environment: ["KB_DB_CONNECT_TIMEOUT": value])
        }
        #expect(error?.code == .invalidArgument && error?.message.contains("KB_DB_CONNECT_TIMEOUT") == true, "\(String(describing: error))")
    }

    @Test func aConnectTimeoutInRangeIsTaken() throws {
        // Opening makes no connection yet (errors surface at the first transaction), so no server is needed.
        _ = try PostgresStore.open(url: "postgres://kb@127.0.0.1:9/kb", create: false, environment: ["KB_DB_CONNECT_TIMEOUT": "60"])
    }
}

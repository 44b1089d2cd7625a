import Dispatch
import Foundation
import KBCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// A value bound to a statement parameter.
enum PGValue: Sendable {
    case text(String?)
    case int(Int64?)
    case double(Double?)
    case bytes(Data?)
    case texts([String])
    case ints([Int64])
    case int32s([Int32])
    case blobs([[UInt8]])
    case floats([Float])
    case doubles([Double])
}

extension PGValue {
    /// The type the value is sent as (nil: a null, whose type the server infers).
    var typeName: String? {
        switch self {
        case .text(let v): v == nil ? nil : "text"
        case .int(let v): v == nil ? nil : "int8"
        case .double(let v): v == nil ? nil : "float8"
        case .bytes(let v): v == nil ? nil : "bytea"
        case .texts: "text[]"
        case .ints: "int8[]"
        case .int32s: "int4[]"
        case .blobs: "bytea[]"
        case .floats: "float4[]"
        case .doubles: "float8[]"
        }
    }

    /// The value as the parameter of a prepared statement.
    func postgresData() throws -> PostgresData {
        func data<T: PostgresEncodable>(_ value: T) throws -> PostgresData {
            var buffer = ByteBuffer()
            try value.encode(into: &buffer, context: .default)
            return PostgresData(type: T.psqlType, formatCode: T.psqlFormat, value: buffer)
        }
        switch self {
        case .text(let v): return try v.map(data) ?? .null
        case .int(let v): return try v.map(data) ?? .null
        case .double(let v): return try v.map(data) ?? .null
        case .bytes(let v): return try v.map { try data(ByteBuffer(bytes: $0)) } ?? .null
        case .texts(let v): return try data(v)
        case .ints(let v): return try data(BinaryArray(v))
        case .int32s(let v): return try data(BinaryArray(v))
        case .blobs(let v): return try data(v.map { ByteBuffer(bytes: $0) })
        case .floats(let v): return try data(BinaryArray(v))
        case .doubles(let v): return try data(BinaryArray(v))
        }
    }
}

/// SQL with `$n` parameters, built up with the values they stand for.
///
/// A statement made `prepared` is prepared once per connection and then only bound and run
/// (`PGSession.rows`): a request's statements are the same few texts again and again, and
/// parsing and planning them anew cost PostgreSQL about as much as running most of them. Its
/// placeholders carry their values' types (`($1::int8)`), which the server otherwise learns from
/// the values sent with each statement (a prepared statement's are fixed when it is prepared).
struct SQL {
    var text: String
    var values: [PGValue] = []
    var prepared = false

    init(_ text: String = "", prepared: Bool = false) {
        self.text = text
        self.prepared = prepared
    }

    /// Appends `value` and returns its placeholder.
    mutating func bind(_ value: PGValue) -> String {
        values.append(value)
        guard prepared, let type = value.typeName else { return "$\(values.count)" }
        return "($\(values.count)::\(type))"
    }

    static func += (sql: inout SQL, text: String) { sql.text += text }

    var query: PostgresQuery {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .text(let v): if let v { bindings.append(v) } else { bindings.appendNull() }
            case .int(let v): if let v { bindings.append(v) } else { bindings.appendNull() }
            case .double(let v): if let v { bindings.append(v) } else { bindings.appendNull() }
            case .bytes(let v): if let v { try! bindings.append(v) } else { bindings.appendNull() }
            case .texts(let v): bindings.append(v)
            case .ints(let v): bindings.append(BinaryArray(v))
            case .int32s(let v): bindings.append(BinaryArray(v))
            case .blobs(let v): bindings.append(v.map { ByteBuffer(bytes: $0) })
            case .floats(let v): bindings.append(BinaryArray(v))
            case .doubles(let v): bindings.append(BinaryArray(v))
            }
        }
        return PostgresQuery(unsafeSQL: text, binds: bindings)
    }
}

/// One leased connection inside one transaction, used from one of the store's own threads: each
/// call sends a statement and blocks that thread (never a thread of Swift's cooperative pool)
/// until the rows are in.
///
/// @unchecked Sendable: used by one thread at a time, inside the call that leased it.
final class PGSession: @unchecked Sendable {
    let connection: PostgresConnection
    let logger: Logger
    /// The connection's session settings (`set`) as its last committed transaction left them.
    let settled: [String: String]
    /// Settings this transaction changed; they hold for the connection once it commits.
    private(set) var changed: [String: String] = [:]

    /// The statements prepared on each connection (nil: none are).
    let statements: PreparedStatements?

    init(_ connection: PostgresConnection, logger: Logger, settled: [String: String] = [:], statements: PreparedStatements? = nil) {
        self.connection = connection
        self.logger = logger
        self.settled = settled
        self.statements = statements
    }

    /// Sets a setting for the connection's session (not only this transaction), unless it holds
    /// `value` already: a setting every request needs (`hnsw.ef_search`) then costs a statement
    /// once per connection, not once per request. A transaction rolled back undoes its settings,
    /// and `changed` is then dropped with it.
    func set(_ name: String, to value: String) throws {
        guard (changed[name] ?? settled[name]) != value else { return }
        try execute("SELECT set_config($1, $2, false)", .text(name), .text(value))
        changed[name] = value
    }

    /// Every row of `sql`. The statement goes out on the connection's event loop and this thread
    /// waits for its future: no task on Swift's cooperative pool between the two (a statement's
    /// round trip is most of a small one's cost).
    ///
    /// A statement written to a connection whose socket has already closed (the server killed
    /// between two statements of a transaction) is dropped by PostgresNIO without failing its
    /// future, so a check runs on the event loop right after the write: if the channel is closed
    /// by then, the statement fails with `ConnectionLost`; if not, the write has reached the
    /// connection's handler, which fails it when the connection closes.
    ///
    /// Rows are taken one by one as they arrive (PostgresNIO's collecting form copies its growing
    /// array on every read from the socket: a statement of a thousand rows spent more in retains
    /// than in its own work).
    func rows(_ sql: SQL) throws -> [PostgresRandomAccessRow] {
        if sql.prepared, let statements, !sql.values.contains(where: { $0.typeName == nil }) {
            return try preparedRows(sql, statements)
        }
        let collected = CollectedRows()
        try Self.wait(connection.query(sql.query, logger: logger) { row in collected.rows.append(row.makeRandomAccess()) }.map { _ in () },
                      on: connection)
        return collected.rows
    }

    /// `rows` of a statement prepared on this connection (prepared first if it is not yet). A
    /// statement that fails is prepared again the next time (the server may have dropped it).
    private func preparedRows(_ sql: SQL, _ statements: PreparedStatements) throws -> [PostgresRandomAccessRow] {
        let connection = self.connection
        let statement: PreparedQuery
        if let known = statements.statement(sql.text, on: connection) {
            statement = known
        } else {
            statement = try Self.wait(connection.prepare(query: sql.text), on: connection)
            statements.keep(statement, for: sql.text, on: connection)
        }
        let binds = try sql.values.map { try $0.postgresData() }
        let collected = CollectedRows()
        do {
            try Self.wait(statement.execute(binds) { row in collected.rows.append(row.makeRandomAccess()) }, on: connection)
        } catch {
            statements.forget(sql.text, on: connection)
            throw error
        }
        return collected.rows
    }

    /// Waits for `future`, the answer to what was just written to `connection`; if the
    /// connection has closed by the time the event loop comes to it, that fails it instead (as
    /// in `rows`).
    private static func wait<T: Sendable>(_ future: EventLoopFuture<T>, on connection: PostgresConnection) throws -> T {
        let promise = connection.eventLoop.makePromise(of: T.self)
        future.cascade(to: promise)
        connection.eventLoop.execute {
            if connection.isClosed { promise.fail(ConnectionLost()) }
        }
        do {
            return try promise.futureResult.wait()
        } catch {
            throw current(error)
        }
    }

    /// PostgresNIO's prepared statements report errors in its older form (`PostgresError`): a
    /// closed connection as `ConnectionLost` and a server's error with its SQLSTATE and message
    /// (`ServerError`), as the store's callers tell them apart.
    static func current(_ error: any Error) -> any Error {
        guard let error = error as? PostgresError else { return error }
        switch error {
        case .connectionClosed: return ConnectionLost()
        case .server(let response): return ServerError(state: response.fields[.sqlState] ?? "?", message: response.fields[.message] ?? "\(error)")
        case .protocol: return error
        }
    }

    /// An error the server reported for a prepared statement.
    struct ServerError: Error, CustomStringConvertible {
        var state: String
        var message: String
        var description: String { "\(message) (SQLSTATE \(state))" }
    }

    /// A statement's rows as they arrive. @unchecked Sendable: appended to on the connection's
    /// event loop only, and read after the statement's future has succeeded.
    private final class CollectedRows: @unchecked Sendable {
        var rows: [PostgresRandomAccessRow] = []
    }

    /// A statement sent on a connection that had closed.
    struct ConnectionLost: Error, CustomStringConvertible {
        var description: String { "the connection to the server closed" }
    }

    /// `rows` of a statement prepared once per connection (`SQL.prepared`): each `$n` in `text`
    /// says its type (`$1::text`), since the server fixes the types when it prepares it.
    func rows(prepared text: String, _ values: PGValue...) throws -> [PostgresRandomAccessRow] {
        var sql = SQL(text, prepared: true)
        sql.values = values
        return try rows(sql)
    }

    func rows(_ text: String, _ values: PGValue...) throws -> [PostgresRandomAccessRow] {
        var sql = SQL(text)
        sql.values = values
        return try rows(sql)
    }

    /// Runs a statement; returns the rows it reported.
    func execute(_ text: String, _ values: PGValue...) throws {
        var sql = SQL(text)
        sql.values = values
        _ = try rows(sql)
    }

    /// The first column of the first row, if any.
    func value<T: PostgresDecodable>(_ type: T.Type, _ text: String, _ values: PGValue...) throws -> T? where T._DecodableType == T {
        var sql = SQL(text)
        sql.values = values
        guard let row = try rows(sql).first else { return nil }
        return try row.binaryCell(0).decode(Optional<T>.self)
    }
}

/// Waits on the calling thread (one of the store's own) for async work on the connection.
func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        do { box.result = .success(try await work()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// @unchecked Sendable: written once before the semaphore is signalled, read after the wait.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

extension PostgresRandomAccessRow {
    func get<T: PostgresDecodable>(_ column: String, _ type: T.Type = T.self) throws -> T {
        var cell = self[column]
        cell.format = .binary
        return try cell.decode(T.self)
    }

    func get<T: PostgresDecodable>(_ index: Int, _ type: T.Type = T.self) throws -> T {
        try binaryCell(index).decode(T.self)
    }

    /// The cell at `index`, in the binary format every statement's rows come in: PostgresNIO
    /// asks for it always, though its prepared statements describe their columns as text.
    func binaryCell(_ index: Int) -> PostgresCell {
        var cell = self[index]
        cell.format = .binary
        return cell
    }
}

/// Each open connection's session settings (`PGSession.set`) as committed, by connection.
final class ConnectionSettings: Sendable {
    private let settings = NIOLockedValueBox<[PostgresConnection.ID: [String: String]]>([:])
    /// The statements prepared on the same connections.
    let statements = PreparedStatements()

    func of(_ connection: PostgresConnection) -> [String: String] {
        settings.withLockedValue { $0[connection.id] ?? [:] }
    }

    func commit(_ session: PGSession) {
        guard !session.changed.isEmpty else { return }
        settings.withLockedValue { all in
            if all.count > 4_096 { all = [:] }   // connections closed long ago; a forgotten one is set again
            all[session.connection.id, default: [:]].merge(session.changed) { $1 }
        }
    }
}

/// The statements prepared on each open connection, by text (`SQL.prepared`).
final class PreparedStatements: Sendable {
    private struct Prepared {
        var connection: PostgresConnection
        var statements: [String: PreparedQuery] = [:]
    }

    private let prepared = NIOLockedValueBox<[PostgresConnection.ID: Prepared]>([:])

    /// Statements kept per connection; past it, the connection's are closed and prepared again as needed.
    static let perConnection = 256

    func statement(_ text: String, on connection: PostgresConnection) -> PreparedQuery? {
        prepared.withLockedValue { $0[connection.id]?.statements[text] }
    }

    /// Keeps `statement`, prepared on `connection` (the session's, which it alone uses meanwhile).
    func keep(_ statement: PreparedQuery, for text: String, on connection: PostgresConnection) {
        let evicted: [PreparedQuery] = prepared.withLockedValue { all in
            if all.count > 64 { all = all.filter { !$0.value.connection.isClosed } }
            var entry = all[connection.id] ?? Prepared(connection: connection)
            var evicted: [PreparedQuery] = []
            if entry.statements.count >= Self.perConnection {
                evicted = Array(entry.statements.values)
                entry.statements = [:]
            }
            entry.statements[text] = statement
            all[connection.id] = entry
            return evicted
        }
        for statement in evicted { _ = statement.deallocate() }
    }

    func forget(_ text: String, on connection: PostgresConnection) {
        prepared.withLockedValue { _ = $0[connection.id]?.statements.removeValue(forKey: text) }
    }
}

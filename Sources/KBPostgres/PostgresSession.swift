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

/// SQL with `$n` parameters, built up with the values they stand for.
struct SQL {
    var text: String
    var values: [PGValue] = []

    init(_ text: String = "") { self.text = text }

    /// Appends `value` and returns its placeholder.
    mutating func bind(_ value: PGValue) -> String {
        values.append(value)
        return "$\(values.count)"
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

    init(_ connection: PostgresConnection, logger: Logger, settled: [String: String] = [:]) {
        self.connection = connection
        self.logger = logger
        self.settled = settled
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
        let connection = self.connection
        let promise = connection.eventLoop.makePromise(of: Void.self)
        let collected = CollectedRows()
        connection.query(sql.query, logger: logger) { row in collected.rows.append(row.makeRandomAccess()) }
            .map { _ in () }.cascade(to: promise)
        connection.eventLoop.execute {
            if connection.isClosed { promise.fail(ConnectionLost()) }
        }
        try promise.futureResult.wait()
        return collected.rows
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
        return try row[0].decode(Optional<T>.self)
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
        try self[column].decode(T.self)
    }

    func get<T: PostgresDecodable>(_ index: Int, _ type: T.Type = T.self) throws -> T {
        try self[index].decode(T.self)
    }
}

/// Each open connection's session settings (`PGSession.set`) as committed, by connection.
final class ConnectionSettings: Sendable {
    private let settings = NIOLockedValueBox<[PostgresConnection.ID: [String: String]]>([:])

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

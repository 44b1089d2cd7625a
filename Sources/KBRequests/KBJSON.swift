public import Foundation
public import KBCore

/// kb's one JSON form, for every adapter: answers are encoded with sorted keys, unescaped
/// slashes and ISO 8601 dates; requests are decoded strictly (an unknown field is an error that
/// names it, and every other problem names its field).
///
/// ```swift
/// let request = try KBJSON.decode(SearchRequest.self, from: body)
/// let data = try KBJSON.encode(try await kb.search(request, as: .admin))
/// ```
public enum KBJSON {
    /// An answer as JSON; `pretty` indents it for people.
    public static func encode<T: Encodable>(_ value: T, pretty: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(value)
    }

    /// An answer as JSON text.
    public static func text<T: Encodable>(_ value: T, pretty: Bool = false) throws -> String {
        String(decoding: try encode(value, pretty: pretty), as: UTF8.self)
    }

    /// A request from a JSON body. `adding` sets fields from outside the body (an HTTP path's
    /// id or name); the body may repeat them only with the same value.
    public static func decode<R: KBRequest>(_ type: R.Type, from data: Data, adding: [String: JSONValue] = [:]) throws -> R {
        guard !data.isEmpty else { throw KBError(.invalidArgument, "The request needs a JSON body.") }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw KBError(.invalidArgument, "The body is not valid JSON.")
        }
        return try decode(type, from: value, adding: adding)
    }

    /// A request from a JSON value (an MCP tool call's arguments).
    public static func decode<R: KBRequest>(_ type: R.Type, from value: JSONValue, adding: [String: JSONValue] = [:]) throws -> R {
        guard case .object(var object) = value else {
            throw KBError(.invalidArgument, "The request must be a JSON object, not \(value.kindName).")
        }
        let fields = Dictionary(uniqueKeysWithValues: R.fields(Limits()).map { ($0.name, $0) })
        for (key, outside) in adding {
            if let inside = object[key], inside != outside {
                throw KBError(.invalidArgument, "\"\(key)\" is \(inside) in the body but \(outside) in the path; leave it out of the body.")
            }
            object[key] = outside
        }
        if let unknown = object.keys.sorted().first(where: { fields[$0] == nil }) {
            throw KBError(.invalidArgument, "Unknown field \"\(unknown)\". This request takes \(fields.keys.sorted().joined(separator: ", ")).")
        }
        // A turn of a conversation has a role and a content, nothing else.
        for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
            guard case .turns = field.kind, case .array(let turns)? = object[name] else { continue }
            for (index, turn) in turns.enumerated() {
                guard case .object(let entry) = turn else {
                    throw KBError(.invalidArgument, "\"\(name)\" turn \(index + 1) must be an object, {\"role\", \"content\"}.")
                }
                if let unknown = entry.keys.sorted().first(where: { $0 != "role" && $0 != "content" && $0 != "time" }) {
                    throw KBError(.invalidArgument, "\"\(name)\" turn \(index + 1) has an unknown field \"\(unknown)\"; a turn takes role, content and time.")
                }
                if let time = entry["time"] {
                    guard case .string(let text) = time else {
                        throw KBError(.invalidArgument, "\"\(name)\" turn \(index + 1) has a time that is not a string; give an ISO 8601 time like 2026-03-01T12:00:00Z.")
                    }
                    _ = try TimeText.parse(text, name: "\(name)\" turn \(index + 1) \"time")
                }
                if let role = entry["role"], !ConversationTurn.Role.allCases.map({ JSONValue.string($0.rawValue) }).contains(role) {
                    throw KBError(.invalidArgument, "\"\(name)\" turn \(index + 1) has the role \(role); use \"user\" or \"assistant\".")
                }
            }
        }
        // An entry of a list of objects has its declared fields, nothing else.
        for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
            guard case .objects(let inner) = field.kind, case .array(let entries)? = object[name] else { continue }
            let names = Set(inner.map(\.name))
            for (index, entry) in entries.enumerated() {
                guard case .object(let values) = entry else {
                    throw KBError(.invalidArgument, "\"\(name)\" entry \(index + 1) must be an object with \(inner.map(\.name).joined(separator: ", ")).")
                }
                if let unknown = values.keys.sorted().first(where: { !names.contains($0) }) {
                    throw KBError(.invalidArgument, "\"\(name)\" entry \(index + 1) has an unknown field \"\(unknown)\"; an entry takes \(inner.map(\.name).joined(separator: ", ")).")
                }
                if let missing = inner.first(where: { $0.required && values[$0.name] == nil }) {
                    throw KBError(.invalidArgument, "\"\(name)\" entry \(index + 1) has no \"\(missing.name)\"; \(missing.summary.lowercasedFirst)")
                }
                if let null = values.keys.sorted().first(where: { values[$0] == .null }) {
                    throw KBError(.invalidArgument, "\"\(name)\" entry \(index + 1) has \"\(null)\": null; leave it out instead.")
                }
            }
        }
        // null means "remove" only where a field says so; elsewhere leave the field out.
        if let null = object.keys.sorted().first(where: { object[$0] == .null && fields[$0]?.kind != .nullableString }) {
            throw KBError(.invalidArgument, "\"\(null)\" must be \(fields[null]!.expected), not null; leave it out for its default.")
        }
        do {
            return try JSONDecoder().decode(R.self, from: try encode(JSONValue.object(object)))
        } catch let error as KBError {
            throw error
        } catch let DecodingError.keyNotFound(key, _) {
            throw KBError(.invalidArgument, "\"\(key.stringValue)\" is missing.")
        } catch let DecodingError.typeMismatch(_, context) {
            throw mismatch(context, object: object, fields: fields)
        } catch let DecodingError.valueNotFound(_, context) {
            throw mismatch(context, object: object, fields: fields)
        } catch let DecodingError.dataCorrupted(context) {
            throw mismatch(context, object: object, fields: fields)
        }
    }

    /// A request from URL query parameters, read by its fields: a list field takes the
    /// parameter repeated (`tag=a&tag=b`), a number or flag field its text as JSON would.
    public static func decode<R: KBRequest>(_ type: R.Type, query parameters: [(key: String, value: String)],
                                            adding: [String: JSONValue] = [:]) throws -> R {
        let fields = Dictionary(uniqueKeysWithValues: R.fields(Limits()).map { ($0.name, $0) })
        var object: [String: JSONValue] = [:]
        for (key, value) in parameters {
            guard let field = fields[key] else {
                let names = fields.keys.filter { adding[$0] == nil }.sorted()
                throw KBError(.invalidArgument, "Unknown query parameter \"\(key)\". This request takes \(names.joined(separator: ", ")).")
            }
            switch field.kind {
            case .strings, .choices:
                guard case .array(let earlier) = object[key] ?? .array([]) else { continue }
                object[key] = .array(earlier + [.string(value)])
            case .integer:
                guard let number = Int(value) else { throw KBError(.invalidArgument, "\"\(key)\" must be \(field.expected); got \"\(value)\".") }
                object[key] = .integer(number)
            case .number:
                guard let number = Double(value) else { throw KBError(.invalidArgument, "\"\(key)\" must be \(field.expected); got \"\(value)\".") }
                object[key] = .number(number)
            case .boolean:
                guard let flag = Bool(value) else { throw KBError(.invalidArgument, "\"\(key)\" must be true or false; got \"\(value)\".") }
                object[key] = .bool(flag)
            default:
                if object[key] != nil { throw KBError(.invalidArgument, "\"\(key)\" is given more than once.") }
                object[key] = .string(value)
            }
        }
        return try decode(type, from: .object(object), adding: adding)
    }

    static func mismatch(_ context: DecodingError.Context, object: [String: JSONValue], fields: [String: RequestField]) -> KBError {
        guard let name = context.codingPath.first?.stringValue, let field = fields[name] else {
            return KBError(.invalidArgument, "The request does not match its schema (GET /openapi.json describes it).")
        }
        let got = object[name].map { " got \($0)" } ?? ""
        return KBError(.invalidArgument, "\"\(name)\" must be \(field.expected);\(got).")
    }
}

/// What a delete answers: the id or name of what is gone.
public struct Deleted: Sendable, Hashable, Codable {
    public var deleted: String

    public init(_ deleted: String) { self.deleted = deleted }
}

/// `{"error": {"code", "message"}}`: how `kb serve` answers an error and how a command prints
/// one with `--json` — the one shape of an error body.
public struct ErrorBody: Codable, Sendable, Hashable {
    public struct Detail: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
    }
    public var error: Detail

    public init(code: String, message: String) { error = Detail(code: code, message: message) }
}

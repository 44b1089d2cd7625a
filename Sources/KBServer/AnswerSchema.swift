import Foundation
import HTTPTypes
import Hummingbird
import KBCore
import KBKit
import NIOCore

/// The answers the OpenAPI document promises, checked against what kb really sends: a JSON
/// answer (errors included) must match the schema documented for its route and status, where
/// kb's own objects are closed (`additionalProperties: false`), so a field added to an answer
/// without its document is a mismatch. The tests run every service with this check on
/// (`ServiceConfiguration.checksAnswers`), as do `scripts/client-test.sh` and the browser tests
/// (`KB_CHECK_ANSWERS=1`); a mismatch becomes a 500 that names the route and the field.
struct AnswerSchema: Sendable {
    /// Reads a JSON object's field.
    static func field(_ value: JSONValue?, _ name: String) -> JSONValue? {
        if case .object(let fields)? = value { fields[name] } else { nil }
    }

    let document: JSONValue

    init(_ document: JSONValue) { self.document = document }

    /// The problems of `answer` as the answer of `method path` with `status`; nil when the route
    /// documents no JSON answer for that status.
    func problems(method: String, path: String, status: Int, answer: JSONValue) -> [String]? {
        let operation = Self.field(Self.field(Self.field(document, "paths"), path), method.lowercased())
        let response = Self.field(Self.field(operation, "responses"), String(status))
        guard let schema = Self.field(Self.field(Self.field(response, "content"), "application/json"), "schema") else { return nil }
        var problems: [String] = []
        check(answer, against: schema, at: "$", into: &problems)
        return problems
    }

    func check(_ value: JSONValue, against schema: JSONValue, at place: String, into problems: inout [String]) {
        guard case .object(var rules) = schema else { return }
        if case .string(let reference)? = rules["$ref"] {
            let name = String(reference.split(separator: "/").last ?? "")
            guard let target = Self.field(Self.field(Self.field(document, "components"), "schemas"), name) else {
                problems.append("\(place): the schema \(reference) is not in the document")
                return
            }
            check(value, against: target, at: place, into: &problems)
            rules["$ref"] = nil
            if rules.isEmpty { return }
        }
        if case .array(let choices)? = rules["anyOf"] ?? rules["oneOf"] {
            let fits = choices.contains { choice in
                var found: [String] = []
                check(value, against: choice, at: place, into: &found)
                return found.isEmpty
            }
            if !fits { problems.append("\(place): matches none of the schemas of anyOf/oneOf: \(Self.brief(value))") }
        }
        if let types = rules["type"] {
            let allowed: [String] = switch types {
            case .string(let one): [one]
            case .array(let many): many.compactMap { if case .string(let name) = $0 { name } else { nil } }
            default: []
            }
            guard allowed.contains(where: { Self.fits(value, $0) }) else {
                problems.append("\(place): \(Self.brief(value)) is not of type \(allowed.joined(separator: " or "))")
                return
            }
        }
        if case .array(let choices)? = rules["enum"], !choices.contains(value), !(value == .null && choices.contains(.null)) {
            if case .integer(let number) = value, choices.contains(.number(Double(number))) {} else {
                problems.append("\(place): \(Self.brief(value)) is not one of \(choices.map(Self.brief).joined(separator: ", "))")
            }
        }
        if let constant = rules["const"], constant != value { problems.append("\(place): \(Self.brief(value)) is not \(Self.brief(constant))") }
        switch value {
        case .object(let fields):
            let properties: [String: JSONValue] = if case .object(let declared)? = rules["properties"] { declared } else { [:] }
            if case .array(let required)? = rules["required"] {
                for case .string(let name) in required where fields[name] == nil { problems.append("\(place): the required field \"\(name)\" is missing") }
            }
            for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
                if let schema = properties[name] {
                    check(field, against: schema, at: place + "." + name, into: &problems)
                } else if let extra = rules["additionalProperties"] {
                    if extra == .bool(false) {
                        problems.append("\(place): the field \"\(name)\" is not in the document")
                    } else if case .object = extra {
                        check(field, against: extra, at: place + "." + name, into: &problems)
                    }
                }
            }
        case .array(let items):
            if let schema = rules["items"] {
                for (index, item) in items.enumerated() { check(item, against: schema, at: "\(place)[\(index)]", into: &problems) }
            }
        default:
            break
        }
    }

    static func fits(_ value: JSONValue, _ type: String) -> Bool {
        switch (value, type) {
        case (.null, "null"), (.bool, "boolean"), (.integer, "integer"), (.integer, "number"), (.number, "number"),
             (.string, "string"), (.array, "array"), (.object, "object"): true
        case (.number(let number), "integer"): number.rounded() == number
        default: false
        }
    }

    static func brief(_ value: JSONValue) -> String {
        let text = (try? KBJSON.text(value)) ?? "\(value)"
        return text.count > 80 ? String(text.prefix(77)) + "…" : text
    }
}

/// Checks every JSON answer against the OpenAPI document (`AnswerSchema`); outermost but for the
/// metrics, so it sees what the client gets, errors included.
struct AnswerCheckingMiddleware<Context: RequestContext>: RouterMiddleware {
    let schema: AnswerSchema

    /// A JSON answer's bytes, gathered to be checked and sent on.
    final class Collected { var buffer = ByteBuffer() }
    struct Collector: ResponseBodyWriter {
        let into: Collected
        mutating func write(_ buffer: ByteBuffer) async throws { into.buffer.writeImmutableBuffer(buffer) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard response.headers[.contentType]?.hasPrefix("application/json") == true, let path = context.endpointPath else { return response }
        let collected = Collected()
        try await response.body.write(Collector(into: collected))
        let body = collected.buffer
        response.body = .init(byteBuffer: body)
        guard let answer = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)),
              let problems = schema.problems(method: request.method.rawValue, path: path, status: Int(response.status.code), answer: answer),
              !problems.isEmpty else { return response }
        let message = "The answer of \(request.method) \(path) (\(response.status.code)) does not match its OpenAPI schema: "
            + problems.prefix(5).joined(separator: "; ")
        FileHandle.standardError.write(Data(("kb serve: " + message + "\n").utf8))
        return ErrorMiddleware<Context>.response(.internalServerError, code: "internal", message: message)
    }
}

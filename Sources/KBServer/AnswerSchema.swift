import Foundation
import HTTPTypes
import Hummingbird
import KBChat
import KBCore
import KBKit
import KBLanguageModel
import KBRequests
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
        guard let schema = Self.field(media(method: method, path: path, status: status, type: "application/json"), "schema") else { return nil }
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
        checkBounds(value, rules, at: place, into: &problems)
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

    /// A string's pattern and length, a number's bounds, a list's and an object's size.
    func checkBounds(_ value: JSONValue, _ rules: [String: JSONValue], at place: String, into problems: inout [String]) {
        func bound(_ name: String) -> Double? {
            switch rules[name] {
            case .integer(let number)?: Double(number)
            case .number(let number)?: number
            default: nil
            }
        }
        func size(_ count: Int, _ least: String, _ most: String, _ what: String) {
            if let least = bound(least), Double(count) < least { problems.append("\(place): \(count) \(what), fewer than \(Int(least))") }
            if let most = bound(most), Double(count) > most { problems.append("\(place): \(count) \(what), more than \(Int(most))") }
        }
        switch value {
        case .string(let text):
            size(text.unicodeScalars.count, "minLength", "maxLength", "characters")
            if case .string(let pattern)? = rules["pattern"] {
                if let expression = try? NSRegularExpression(pattern: pattern) {
                    let whole = NSRange(text.startIndex..., in: text)
                    if expression.firstMatch(in: text, range: whole) == nil {
                        problems.append("\(place): \(Self.brief(value)) does not match the pattern \(pattern)")
                    }
                } else {
                    problems.append("\(place): the pattern \(pattern) is not a regular expression")
                }
            }
        case .integer, .number:
            let number: Double = if case .integer(let whole) = value { Double(whole) } else if case .number(let real) = value { real } else { 0 }
            if let least = bound("minimum"), number < least { problems.append("\(place): \(Self.brief(value)) is below the minimum \(Self.brief(rules["minimum"]!))") }
            if let most = bound("maximum"), number > most { problems.append("\(place): \(Self.brief(value)) is above the maximum \(Self.brief(rules["maximum"]!))") }
            if let least = bound("exclusiveMinimum"), number <= least { problems.append("\(place): \(Self.brief(value)) is not above \(Self.brief(rules["exclusiveMinimum"]!))") }
            if let most = bound("exclusiveMaximum"), number >= most { problems.append("\(place): \(Self.brief(value)) is not below \(Self.brief(rules["exclusiveMaximum"]!))") }
        case .array(let items):
            size(items.count, "minItems", "maxItems", "items")
        case .object(let fields):
            size(fields.count, "minProperties", "maxProperties", "fields")
        default:
            break
        }
    }

    /// The schema of each event of a route's `text/event-stream` answer (the media type's
    /// `x-kb-event`), nil when the route documents none.
    func eventSchema(method: String, path: String, status: Int) -> JSONValue? {
        Self.field(media(method: method, path: path, status: status, type: "text/event-stream"), "x-kb-event")
    }

    /// What the document says of the `type` answer of `method path` with `status`.
    private func media(method: String, path: String, status: Int, type: String) -> JSONValue? {
        let operation = Self.field(Self.field(Self.field(document, "paths"), path), method.lowercased())
        let response = Self.field(Self.field(operation, "responses"), String(status))
        return Self.field(Self.field(response, "content"), type)
    }

    /// The problems of one event's data (`[DONE]` ends a stream and is not JSON).
    func eventProblems(_ data: String, schema: JSONValue) -> [String] {
        if data == "[DONE]" { return [] }
        guard let event = try? JSONDecoder().decode(JSONValue.self, from: Data(data.utf8)) else { return ["$: the event is not JSON: \(data.prefix(80))"] }
        var problems: [String] = []
        check(event, against: schema, at: "$", into: &problems)
        return problems
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

    /// Passes a stream on an event at a time, each checked against the route's event schema: an
    /// event that does not match is sent as an error event naming the field instead (the status
    /// was sent already), and the mismatch written to standard error.
    struct EventChecker: ResponseBodyWriter {
        var inner: any ResponseBodyWriter
        let schema: AnswerSchema
        let eventSchema: JSONValue
        let route: String
        /// The stream's events as they complete (a character's UTF-8 may be cut across two
        /// writes); comments such as keep-alives pass through unchecked.
        var events = ServerSentEvents(keepingEventsWithoutData: true)

        mutating func write(_ buffer: ByteBuffer) async throws {
            for event in events.append(buffer) {
                try await inner.write(ByteBuffer(string: checked(event) ?? event.raw + "\n\n"))
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
            // An event no blank line closed goes out as it came.
            if let tail = events.finish() { try await inner.write(ByteBuffer(string: checked(tail) ?? tail.raw)) }
            try await inner.finish(trailingHeaders)
        }

        /// nil when the event may go as it came; else an error event in its place.
        func checked(_ event: ServerSentEvents.Event) -> String? {
            let data = event.data
            guard !data.isEmpty else { return nil }
            let problems = schema.eventProblems(data, schema: eventSchema)
            guard !problems.isEmpty else { return nil }
            let message = "An event of \(route) does not match its OpenAPI schema: " + problems.prefix(5).joined(separator: "; ")
            FileHandle.standardError.write(Data(("kb serve: " + message + "\n").utf8))
            let error = (try? KBJSON.text(ChatStreamError(message: message, code: "internal", type: "answer_check"))) ?? "{}"
            return "data: \(error)\n\n"
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if response.headers[.contentType]?.hasPrefix("text/event-stream") == true, let path = context.endpointPath,
           let eventSchema = schema.eventSchema(method: request.method.rawValue, path: path, status: Int(response.status.code)) {
            let body = response.body, schema = schema, route = "\(request.method) \(path)"
            response.body = ResponseBody { writer in
                try await body.write(EventChecker(inner: writer, schema: schema, eventSchema: eventSchema, route: route))
            }
            return response
        }
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

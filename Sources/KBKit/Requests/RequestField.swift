import Foundation
public import KBCore

/// One field of a request: its JSON type, meaning, default and bounds. Validation checks values
/// against it, and the OpenAPI document and the MCP tool schemas are written from it, so what
/// the service says and what it does cannot drift apart.
///
/// ```swift
/// RequestField.integer("k", "How many hits to return.", default: 8, range: 1...limits.maxResults)
/// ```
public struct RequestField: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case string
        /// A string, or null to clear the value.
        case nullableString
        case integer
        case number
        case boolean
        case strings
        /// One of these strings.
        case choice([String])
        /// A list of these strings.
        case choices([String])
    }

    public var name: String
    public var kind: Kind
    /// What the field means, in a sentence.
    public var summary: String
    public var required = false
    public var minimum: Double?
    public var maximum: Double?
    /// What an absent field means.
    public var defaultValue: JSONValue?
    /// Longest string, in characters, or most list entries.
    public var maxLength: Int?

    public static func string(_ name: String, _ summary: String, required: Bool = false, maxLength: Int? = nil) -> RequestField {
        RequestField(name: name, kind: .string, summary: summary, required: required, maxLength: maxLength)
    }

    public static func nullableString(_ name: String, _ summary: String, maxLength: Int? = nil) -> RequestField {
        RequestField(name: name, kind: .nullableString, summary: summary, maxLength: maxLength)
    }

    /// A whole number in `range`; a default must lie in it (callers cap it by the limit).
    public static func integer(_ name: String, _ summary: String, default value: Int? = nil, range: ClosedRange<Int>) -> RequestField {
        precondition(value.map(range.contains) ?? true, "the default of \(name) is outside its range")
        return RequestField(name: name, kind: .integer, summary: summary, minimum: Double(range.lowerBound), maximum: Double(range.upperBound),
                            defaultValue: value.map { .integer($0) })
    }

    public static func number(_ name: String, _ summary: String, default value: Double? = nil, minimum: Double, maximum: Double? = nil) -> RequestField {
        RequestField(name: name, kind: .number, summary: summary, minimum: minimum, maximum: maximum, defaultValue: value.map { .number($0) })
    }

    public static func boolean(_ name: String, _ summary: String, default value: Bool = false) -> RequestField {
        RequestField(name: name, kind: .boolean, summary: summary, defaultValue: .bool(value))
    }

    public static func strings(_ name: String, _ summary: String, maxItems: Int) -> RequestField {
        RequestField(name: name, kind: .strings, summary: summary, maxLength: maxItems)
    }

    public static func choice(_ name: String, _ summary: String, _ values: [String], default value: String? = nil) -> RequestField {
        RequestField(name: name, kind: .choice(values), summary: summary, defaultValue: value.map { .string($0) })
    }

    public static func choices(_ name: String, _ summary: String, _ values: [String], maxItems: Int) -> RequestField {
        RequestField(name: name, kind: .choices(values), summary: summary, maxLength: maxItems)
    }

    /// The field as a JSON Schema (draft 2020-12, as OpenAPI 3.1 and MCP use).
    public var schema: JSONValue {
        var schema: [String: JSONValue] = ["description": .string(summary)]
        switch kind {
        case .string: schema["type"] = "string"
        case .nullableString: schema["type"] = ["string", "null"]
        case .integer: schema["type"] = "integer"
        case .number: schema["type"] = "number"
        case .boolean: schema["type"] = "boolean"
        case .strings: schema["type"] = "array"; schema["items"] = ["type": "string"]
        case .choice(let values): schema["type"] = "string"; schema["enum"] = .array(values.map { .string($0) })
        case .choices(let values):
            schema["type"] = "array"
            schema["items"] = ["type": "string", "enum": .array(values.map { .string($0) })]
        }
        if let minimum { schema["minimum"] = kind == .integer ? .integer(Int(minimum)) : .number(minimum) }
        if let maximum { schema["maximum"] = kind == .integer ? .integer(Int(maximum)) : .number(maximum) }
        if let defaultValue { schema["default"] = defaultValue }
        if let maxLength {
            switch kind {
            case .strings, .choices: schema["maxItems"] = .integer(maxLength)
            default: schema["maxLength"] = .integer(maxLength)
            }
        }
        return .object(schema)
    }

    /// The JSON type the field takes, in words, for messages.
    var expected: String {
        switch kind {
        case .string, .choice: "a string"
        case .nullableString: "a string or null"
        case .integer: "a whole number"
        case .number: "a number"
        case .boolean: "true or false"
        case .strings, .choices: "a list of strings"
        }
    }
}

/// A request kb answers: a Codable value decoded from a CLI's arguments, an HTTP body or an MCP
/// tool call, with its fields declared once.
public protocol KBRequest: Codable, Sendable {
    /// The request's name in the OpenAPI document.
    static var schemaName: String { get }
    /// The fields, with the limits in force.
    static func fields(_ limits: Limits) -> [RequestField]
    /// Checks every value against the fields and `limits` (what answering the request checks
    /// first), without touching an index.
    func check(_ limits: Limits) throws
}

extension KBRequest {
    /// A field's allowed values and default, for command-line help: `(values: hybrid, vector,
    /// keyword; default: hybrid)`, `(default: 8)`, or "" when it has neither.
    public static func valuesAndDefault(_ name: String) -> String {
        guard let field = fields(Limits()).first(where: { $0.name == name }) else { return "" }
        var parts: [String] = []
        switch field.kind {
        case .choice(let values), .choices(let values): parts.append("values: " + values.joined(separator: ", "))
        default: break
        }
        switch field.defaultValue {
        case .integer(let value)?: parts.append("default: \(value)")
        case .number(let value)?: parts.append("default: \(value == value.rounded() ? String(Int(value)) : String(value))")
        case .string(let value)?: parts.append("default: \(value)")
        default: break
        }
        return parts.isEmpty ? "" : "(" + parts.joined(separator: "; ") + ")"
    }

    /// The request as a JSON Schema object: its fields, which are required, and no others.
    public static func schema(_ limits: Limits) -> JSONValue {
        let fields = fields(limits)
        var schema: [String: JSONValue] = [
            "type": "object",
            "properties": .object(Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.schema) })),
            "additionalProperties": false,
        ]
        let required = fields.filter(\.required).map { JSONValue.string($0.name) }
        if !required.isEmpty { schema["required"] = .array(required) }
        return .object(schema)
    }
}

/// Checks a request's values against its declared fields, with messages that name the field.
struct FieldRules {
    private let fields: [String: RequestField]

    init<R: KBRequest>(_ type: R.Type, _ limits: Limits) {
        fields = Dictionary(uniqueKeysWithValues: R.fields(limits).map { ($0.name, $0) })
    }

    private func field(_ name: String) -> RequestField {
        guard let field = fields[name] else { preconditionFailure("no field \(name) declared") }
        return field
    }

    /// A whole number within the field's range; its default when nil.
    func integer(_ value: Int?, _ name: String) throws -> Int {
        let field = field(name)
        guard let value = value ?? field.defaultValue.flatMap({ if case .integer(let v) = $0 { v } else { nil } }) else {
            throw KBError(.invalidArgument, "\"\(name)\" is missing.")
        }
        try bounds(Double(value), field, shown: String(value))
        return value
    }

    /// A number within the field's range; its default (or nil) when nil.
    func number(_ value: Double?, _ name: String) throws -> Double? {
        let field = field(name)
        guard let value = value ?? field.defaultValue.flatMap({ if case .number(let v) = $0 { v } else { nil } }) else { return nil }
        guard value.isFinite else { throw KBError(.invalidArgument, "\"\(name)\" must be a finite number.") }
        try bounds(value, field, shown: value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value))
        return value
    }

    private func bounds(_ value: Double, _ field: RequestField, shown: String) throws {
        func format(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x) }
        switch (field.minimum, field.maximum) {
        case (let low?, let high?) where !(low...high).contains(value):
            throw KBError(.invalidArgument, "\"\(field.name)\" must be between \(format(low)) and \(format(high)); got \(shown).")
        case (let low?, nil) where value < low:
            throw KBError(.invalidArgument, "\"\(field.name)\" must be at least \(format(low)); got \(shown).")
        case (nil, let high?) where value > high:
            throw KBError(.invalidArgument, "\"\(field.name)\" must be at most \(format(high)); got \(shown).")
        default: break
        }
    }

    /// Text with something in it besides whitespace, within the field's length; trimmed.
    func text(_ value: String?, _ name: String) throws -> String {
        let field = field(name)
        let trimmed = (value ?? "").trimmingWhitespace
        guard !trimmed.isEmpty else {
            throw KBError(.invalidArgument, value == nil ? "\"\(name)\" is missing." : "\"\(name)\" is empty; \(field.summary.lowercasedFirst)")
        }
        return try length(trimmed, field)
    }

    /// Optional text within the field's length (not trimmed); nil stays nil.
    func optionalText(_ value: String?, _ name: String) throws -> String? {
        try value.map { try length($0, field(name)) }
    }

    private func length(_ value: String, _ field: RequestField) throws -> String {
        if let limit = field.maxLength, value.count > limit {
            throw KBError(.invalidArgument, "\"\(field.name)\" is \(value.count) characters long; the limit is \(limit).")
        }
        return value
    }

    /// A list within the field's length, empty entries refused; empty when nil.
    func list(_ values: [String]?, _ name: String) throws -> [String] {
        let field = field(name)
        let values = values ?? []
        if let limit = field.maxLength, values.count > limit {
            throw KBError(.invalidArgument, "\"\(name)\" holds \(values.count) entries; the limit is \(limit).")
        }
        if values.contains(where: { $0.trimmingWhitespace.isEmpty }) {
            throw KBError(.invalidArgument, "\"\(name)\" holds an empty entry; every entry needs some text.")
        }
        return values
    }

    /// One of the field's values, or its default (nil when none) when nil.
    func choice<T: RawRepresentable>(_ value: String?, _ name: String, as type: T.Type) throws -> T? where T.RawValue == String {
        let field = field(name)
        guard let value = value ?? field.defaultValue.flatMap({ if case .string(let v) = $0 { v } else { nil } }) else { return nil }
        guard case .choice(let allowed) = field.kind, allowed.contains(value), let parsed = T(rawValue: value) else {
            throw KBError(.invalidArgument, "\"\(name)\" must be \(Self.oneOf(field)); got \"\(value)\".")
        }
        return parsed
    }

    /// Values from the field's list of choices; empty when nil.
    func choices<T: RawRepresentable>(_ values: [String]?, _ name: String, as type: T.Type) throws -> [T] where T.RawValue == String {
        let field = field(name)
        return try list(values, name).map { value in
            guard case .choices(let allowed) = field.kind, allowed.contains(value), let parsed = T(rawValue: value) else {
                throw KBError(.invalidArgument, "\"\(name)\" may hold \(Self.oneOf(field)); got \"\(value)\".")
            }
            return parsed
        }
    }

    static func oneOf(_ field: RequestField) -> String {
        switch field.kind {
        case .choice(let values), .choices(let values):
            values.count == 1 ? values[0] : values.dropLast().joined(separator: ", ") + " or " + values.last!
        default: field.expected
        }
    }
}

extension String {
    var trimmingWhitespace: String { trimmingCharacters(in: .whitespacesAndNewlines) }

    var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}

import Foundation
public import KBCore

/// One field of a request: its JSON type, meaning, default and bounds. Validation checks values
/// against it, and the OpenAPI document and the MCP tool schemas are written from it, so what
/// the service says and what it does cannot drift apart.
///
/// ```swift
/// let field = RequestField.integer("k", "How many hits to return.", default: 8, range: 1...limits.maxResults)
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
        /// A conversation: a list of `{"role": "user"|"assistant", "content"}` objects, each
        /// content at most this many characters.
        case turns(maxCharacters: Int)
        /// A list of objects, each with these fields (and no others).
        case objects([RequestField])
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
    /// Longest string, in characters (Unicode code points, as JSON Schema counts), or most list entries.
    public var maxLength: Int?
    /// A regular expression a string (or every entry of a list) must contain a match of.
    public var pattern: String?

    public static func string(_ name: String, _ summary: String, required: Bool = false, maxLength: Int? = nil,
                              pattern: String? = Pattern.someText) -> RequestField {
        RequestField(name: name, kind: .string, summary: summary, required: required, maxLength: maxLength, pattern: pattern)
    }

    public static func nullableString(_ name: String, _ summary: String, maxLength: Int? = nil, pattern: String? = nil) -> RequestField {
        RequestField(name: name, kind: .nullableString, summary: summary, maxLength: maxLength, pattern: pattern)
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

    public static func strings(_ name: String, _ summary: String, maxItems: Int, pattern: String? = Pattern.someText) -> RequestField {
        RequestField(name: name, kind: .strings, summary: summary, maxLength: maxItems, pattern: pattern)
    }

    public static func choice(_ name: String, _ summary: String, _ values: [String], default value: String? = nil, required: Bool = false) -> RequestField {
        RequestField(name: name, kind: .choice(values), summary: summary, required: required, defaultValue: value.map { .string($0) })
    }

    public static func choices(_ name: String, _ summary: String, _ values: [String], maxItems: Int) -> RequestField {
        RequestField(name: name, kind: .choices(values), summary: summary, maxLength: maxItems)
    }

    public static func turns(_ name: String, _ summary: String, maxItems: Int, maxCharacters: Int) -> RequestField {
        RequestField(name: name, kind: .turns(maxCharacters: maxCharacters), summary: summary, maxLength: maxItems)
    }

    public static func objects(_ name: String, _ summary: String, maxItems: Int, required: Bool = false, fields: [RequestField]) -> RequestField {
        RequestField(name: name, kind: .objects(fields), summary: summary, required: required, maxLength: maxItems)
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
        case .strings:
            schema["type"] = "array"
            schema["items"] = pattern.map { ["type": "string", "pattern": .string($0)] } ?? ["type": "string"]
        case .choice(let values): schema["type"] = "string"; schema["enum"] = .array(values.map { .string($0) })
        case .choices(let values):
            schema["type"] = "array"
            schema["items"] = ["type": "string", "enum": .array(values.map { .string($0) })]
        case .turns(let maxCharacters):
            schema["type"] = "array"
            schema["items"] = [
                "type": "object",
                "properties": [
                    "role": ["type": "string", "enum": .array(ConversationTurn.Role.allCases.map { .string($0.rawValue) })],
                    "content": ["type": "string", "maxLength": .integer(maxCharacters), "pattern": .string(Pattern.someText)],
                    "time": ["type": "string", "pattern": .string(TimeText.pattern), "description": "When it was said (ISO 8601); relative dates in it are read against it."],
                ],
                "required": ["role", "content"],
                "additionalProperties": false,
            ]
        case .objects(let fields):
            schema["type"] = "array"
            var item: [String: JSONValue] = [
                "type": "object",
                "properties": .object(Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.schema) })),
                "additionalProperties": false,
            ]
            let required = fields.filter(\.required).map { JSONValue.string($0.name) }
            if !required.isEmpty { item["required"] = .array(required) }
            schema["items"] = .object(item)
        }
        if let pattern, kind == .string || kind == .nullableString { schema["pattern"] = .string(pattern) }
        if let minimum { schema["minimum"] = kind == .integer ? .integer(Int(minimum)) : .number(minimum) }
        if let maximum { schema["maximum"] = kind == .integer ? .integer(Int(maximum)) : .number(maximum) }
        if let defaultValue { schema["default"] = defaultValue }
        if let maxLength {
            switch kind {
            case .strings, .choices, .turns, .objects: schema["maxItems"] = .integer(maxLength)
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
        case .turns: "a list of turns, {\"role\": \"user\" or \"assistant\", \"content\": text}"
        case .objects(let fields): "a list of objects with " + fields.map(\.name).joined(separator: ", ")
        }
    }
}

/// Regular expressions request fields are checked with (ECMA-262 and ICU alike, so the schemas
/// state exactly what is accepted). A field's value must contain a match.
public enum Pattern {
    /// Some text besides white space.
    public static let someText = "\\S"
    /// `global`, `user:ID` or `bot:NAME` (1–200 characters without white space or control characters).
    public static let scope = MemoryScope.pattern
    /// A memory id: a UUID or a prefix of 4 or more of its characters.
    public static let memoryID = "^[0-9a-fA-F-]{4,36}$"
    /// A user's id, as it goes into `user:ID` scopes: 1–195 characters without white space or
    /// control characters (the same classes as `scope`, so every valid id makes a valid scope).
    public static let userID = "^[^\\s\\x00-\\x1f\\x7f-\\x9f\\uFEFF]{1,195}$"
    /// A bot's name.
    public static let botName = "^[A-Za-z0-9._-]{1,64}$"
    /// A tag: text with something in it besides white space and one colon.
    public static let tag = "[^\\s:]|:[\\s\\S]*:"
    /// A bot's knowledge source: an absolute path, `tag:NAME`, `kind:KIND` or `upload:ID`.
    public static let selector = "^(/[\\s\\S]*|tag:[\\s\\S]*([^\\s:]|:[\\s\\S]*:)[\\s\\S]*|kind:(\(SourceKind.documentList))|upload:[A-Za-z0-9._-]{1,128})$"
    /// A source's id, given by whoever adds it: 1–128 letters, digits, `-`, `_` or `.`.
    public static let sourceID = "^[A-Za-z0-9._-]{1,128}$"
    /// A source's id as listings give it: an uploaded source's own id, or `file:` and 16 hex digits.
    public static let listedSourceID = "^(file:[0-9a-f]{16}|[A-Za-z0-9._-]{1,128})$"
    /// An absolute path.
    public static let absolutePath = "^/"
    /// A collection of sources an app owns: 1–64 letters, digits, `-`, `_` or `.` (as a bot's name).
    public static let collection = botName
    /// A SHA-256 digest: 64 hex digits.
    public static let sha256 = "^[0-9a-fA-F]{64}$"
    /// A page or a range of pages: `12` or `12-14`.
    public static let pageRange = "^[1-9][0-9]{0,6}(-[1-9][0-9]{0,6})?$"
    /// A printed page label or a range of them: `xii` or `xii-3` (labels without `-` or white space).
    /// The characters that one regex engine counts as white space and another does not (U+001C–
    /// U+001F for Python, U+0085 for ICU, U+FEFF for ECMAScript) are named, so that the server's
    /// check and every client's reading of the document agree.
    public static let labelRange = "^[^\\s\\u001c-\\u001f\\u0085\\ufeff-]{1,40}(-[^\\s\\u001c-\\u001f\\u0085\\ufeff-]{1,40})?$"
    /// A positive duration: a number and s, m, h, d or w (days without a unit).
    /// An ISO 8601 date or time (`TimeText`).
    public static let time = TimeText.pattern
    public static let halfLife = "^([0-9]*[1-9][0-9]*(\\.[0-9]+)?|[0-9]+\\.[0-9]*[1-9][0-9]*)[smhdw]?$"
    /// One line (white space around it aside).
    public static let oneLine = "^\\s*[^\\n\\r\\u000b\\u000c\\u0085\\u2028\\u2029]*\\s*$"
}

/// A request kb answers: a Codable value decoded from a CLI's arguments, an HTTP body or an MCP
/// tool call, with its fields declared once.
public protocol KBRequest: Codable, Sendable {
    /// The request's name in the OpenAPI document.
    static var schemaName: String { get }
    /// The fields, with the limits in force.
    static func fields(_ limits: Limits) -> [RequestField]
    /// Rules across fields, as JSON Schema keywords (`anyOf`, `not`, `minProperties`), that the
    /// request's check enforces too. None by default.
    static func constraints(_ limits: Limits) -> [String: JSONValue]
    /// What the request asks for once every value is checked.
    associatedtype Validated: Sendable
    /// Checks every value against the fields and `limits`, without touching an index: the
    /// request's valid form. (`checked(_:)` keeps it with the request.)
    func validated(_ limits: Limits) throws -> Validated
}

/// A request checked once, against the limits in force: the request and its valid form, which
/// KBKit's request methods take. The CLI checks a request before it opens an index (bad usage
/// exits 64 with nothing opened); HTTP routes and MCP tools hand the request in and KBKit checks
/// it. Either way, once.
///
/// ```swift
/// let checked = try SearchRequest(query: "saturn return").checked(kb.limits)
/// let results = try await kb.search(checked, as: .admin)
/// ```
public struct Checked<Request: KBRequest>: Sendable {
    public let request: Request
    public let valid: Request.Validated
    /// What it was checked against.
    public let limits: Limits
}

extension KBRequest {
    public static func constraints(_ limits: Limits) -> [String: JSONValue] { [:] }

    /// Checks the request against `limits`, once (see `Checked`).
    public func checked(_ limits: Limits) throws -> Checked<Self> {
        Checked(request: self, valid: try validated(limits), limits: limits)
    }

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
        schema.merge(constraints(limits)) { _, rule in rule }
        return .object(schema)
    }
}

/// Checks a request's values against its declared fields, with messages that name the field.
package struct FieldRules {
    private let fields: [String: RequestField]

    package init<R: KBRequest>(_ type: R.Type, _ limits: Limits) {
        fields = Dictionary(uniqueKeysWithValues: R.fields(limits).map { ($0.name, $0) })
    }

    /// The rules of a list's entries (`RequestField.Kind.objects`).
    private init(fields: [RequestField]) {
        self.fields = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0) })
    }

    private func field(_ name: String) -> RequestField {
        guard let field = fields[name] else { preconditionFailure("no field \(name) declared") }
        return field
    }

    /// A whole number within the field's range; its default when nil.
    package func integer(_ value: Int?, _ name: String) throws -> Int {
        let field = field(name)
        guard let value = value ?? field.defaultValue.flatMap({ if case .integer(let v) = $0 { v } else { nil } }) else {
            throw KBError(.invalidArgument, "\"\(name)\" is missing.")
        }
        try bounds(Double(value), field, shown: String(value))
        return value
    }

    /// A number within the field's range; its default (or nil) when nil.
    package func number(_ value: Double?, _ name: String) throws -> Double? {
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

    /// Text with something in it besides whitespace, within the field's length and pattern; trimmed.
    package func text(_ value: String?, _ name: String) throws -> String {
        let field = field(name)
        guard let value else { throw KBError(.invalidArgument, "\"\(name)\" is missing.") }
        guard !value.trimmingWhitespace.isEmpty else {
            throw KBError(.invalidArgument, "\"\(name)\" is empty; \(field.summary.lowercasedFirst)")
        }
        return try checked(value, field).trimmingWhitespace
    }

    /// Optional text within the field's length and pattern (not trimmed); nil stays nil.
    package func optionalText(_ value: String?, _ name: String) throws -> String? {
        try value.map { try checked($0, field(name)) }
    }

    private func checked(_ value: String, _ field: RequestField, entry: Bool = false) throws -> String {
        if !entry, let limit = field.maxLength, value.unicodeScalars.count > limit {
            throw KBError(.invalidArgument, "\"\(field.name)\" is \(value.unicodeScalars.count) characters long; the limit is \(limit).")
        }
        if let pattern = field.pattern, !FieldRules.matches(value, pattern) {
            let shown = value.unicodeScalars.count > 60 ? String(String.UnicodeScalarView(value.unicodeScalars.prefix(60))) + "…" : value
            throw KBError(.invalidArgument, "\"\(field.name)\" \(entry ? "holds" : "is") '\(shown)', \(FieldRules.meaning(pattern)).")
        }
        return value
    }

    /// A list within the field's length, every entry matching its pattern; empty when nil.
    package func list(_ values: [String]?, _ name: String) throws -> [String] {
        let field = field(name)
        let values = values ?? []
        if let limit = field.maxLength, values.count > limit {
            throw KBError(.invalidArgument, "\"\(name)\" holds \(values.count) entries; the limit is \(limit).")
        }
        for value in values { _ = try checked(value, field, entry: true) }
        return values
    }

    /// A conversation within the field's length, each turn with text within its length; empty
    /// when nil.
    package func turns(_ values: [ConversationTurn]?, _ name: String) throws -> [ConversationTurn] {
        let field = field(name)
        let values = values ?? []
        if let limit = field.maxLength, values.count > limit {
            throw KBError(.invalidArgument, "\"\(name)\" holds \(values.count) turns; the limit is \(limit) (send the most recent ones).")
        }
        guard case .turns(let maxCharacters) = field.kind else { preconditionFailure("\(name) is not a list of turns") }
        for (index, turn) in values.enumerated() {
            let length = turn.content.unicodeScalars.count
            if length > maxCharacters {
                throw KBError(.invalidArgument, "\"\(name)\" turn \(index + 1) is \(length) characters long; the limit is \(maxCharacters).")
            }
            if turn.content.trimmingWhitespace.isEmpty {
                throw KBError(.invalidArgument, "\"\(name)\" turn \(index + 1) has no text; leave empty turns out.")
            }
        }
        return values
    }

    /// A list of objects within the field's length; `check` reads each entry's values with the
    /// rules of the entry's own fields (a message names the entry: `items[3]: "sha256" is …`).
    /// Empty when nil.
    package func objects<T>(_ values: [T]?, _ name: String, _ check: (_ entry: T, _ rules: FieldRules) throws -> Void) throws -> [T] {
        let field = field(name)
        let values = values ?? []
        if let limit = field.maxLength, values.count > limit {
            throw KBError(.invalidArgument, "\"\(name)\" holds \(values.count) entries; the limit is \(limit).")
        }
        guard case .objects(let fields) = field.kind else { preconditionFailure("\(name) is not a list of objects") }
        let rules = FieldRules(fields: fields)
        for (index, value) in values.enumerated() {
            do {
                try check(value, rules)
            } catch let error as KBError {
                throw KBError(error.code, "\(name)[\(index)]: " + error.message)
            }
        }
        return values
    }

    /// Compiled patterns, shared: a request checks a handful of them.
    private static let compiled = LockedValue([String: NSRegularExpression]())

    package static func matches(_ value: String, _ pattern: String) -> Bool {
        let expression = compiled.withLock { cache -> NSRegularExpression in
            if let known = cache[pattern] { return known }
            let made = try! NSRegularExpression(pattern: pattern)
            cache[pattern] = made
            return made
        }
        let whole = NSRange(value.startIndex..., in: value)
        guard let match = expression.firstMatch(in: value, range: whole) else { return false }
        // ICU's `$` also matches before a final line break; JSON Schema's (ECMA-262) does not.
        return !pattern.hasSuffix("$") || match.range.upperBound == whole.upperBound
    }

    /// What a pattern asks for, in words.
    package static func meaning(_ pattern: String) -> String {
        switch pattern {
        case Pattern.someText: "which has no text"
        case Pattern.scope: "which is not a memory scope: use global, user:ID or bot:NAME (no spaces), e.g. user:ada"
        case Pattern.memoryID: "which is not a memory id: give the id `kb memory add` printed (a UUID), or its first 4 or more characters"
        case Pattern.userID: "which is not a user id: use 1–195 characters without spaces or control characters"
        case Pattern.botName: "which is not a bot name: use 1–64 letters, digits, '-', '_' or '.'"
        case Pattern.tag: "which is not a tag: use a word or key:value, e.g. diet or area:career"
        case Pattern.selector: "which is not a knowledge source: use an absolute path (or folder), tag:NAME, kind:\(SourceKind.documentList) or upload:ID"
        case Pattern.sourceID: "which is not a source id: use 1–128 letters, digits, '-', '_' or '.'"
        case Pattern.listedSourceID: "which is not a source id: use an id that GET /v1/sources (or kb sources) lists"
        case Pattern.absolutePath: "which is not an absolute path: give paths from the root, e.g. /home/ada/notes"
        case Pattern.halfLife: "which is not a half-life: use a positive number and a unit, e.g. 30d, 12h, 90m, 2w"
        case Pattern.oneLine: "which is more than one line"
        case APIToken.scopePattern: "which is not a token scope: use user:ID, user:* (any user), bot:NAME or global"
        default: "which does not match \(pattern)"
        }
    }

    /// One of the field's values, or its default (nil when none) when nil.
    package func choice<T: RawRepresentable>(_ value: String?, _ name: String, as type: T.Type) throws -> T? where T.RawValue == String {
        let field = field(name)
        guard let value = value ?? field.defaultValue.flatMap({ if case .string(let v) = $0 { v } else { nil } }) else { return nil }
        guard case .choice(let allowed) = field.kind, allowed.contains(value), let parsed = T(rawValue: value) else {
            throw KBError(.invalidArgument, "\"\(name)\" must be \(Self.oneOf(field)); got \"\(value)\".")
        }
        return parsed
    }

    /// Values from the field's list of choices; empty when nil.
    package func choices<T: RawRepresentable>(_ values: [String]?, _ name: String, as type: T.Type) throws -> [T] where T.RawValue == String {
        let field = field(name)
        return try list(values, name).map { value in
            guard case .choices(let allowed) = field.kind, allowed.contains(value), let parsed = T(rawValue: value) else {
                throw KBError(.invalidArgument, "\"\(name)\" may hold \(Self.oneOf(field)); got \"\(value)\".")
            }
            return parsed
        }
    }

    package static func oneOf(_ field: RequestField) -> String {
        switch field.kind {
        case .choice(let values), .choices(let values):
            values.count == 1 ? values[0] : values.dropLast().joined(separator: ", ") + " or " + values.last!
        default: field.expected
        }
    }
}

extension String {
    package var trimmingWhitespace: String { trimmingCharacters(in: .whitespacesAndNewlines) }

    package var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}

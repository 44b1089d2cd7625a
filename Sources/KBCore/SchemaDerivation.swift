import Foundation

/// JSON schemas read off `Decodable` types, so that an answer's type is its one description:
/// the OpenAPI document's answer schemas are derived with this, not written beside the types.
///
/// A type is decoded by a decoder that hands out placeholder values and writes down what was
/// asked for; a list's items are read once. What is required is what the type writes: it is
/// decoded again with every optional field absent and every list empty, and encoded — the
/// fields that encoding still has are required (a type that reads an old field leniently but
/// always writes it says so). A type that cannot be encoded has the fields it reads with
/// `decode` (not `decodeIfPresent`) required; `Int` is an integer, `Double` a
/// number, `Date` a string (KBJSON writes ISO 8601). An object is closed
/// (`additionalProperties: false`), so an answer with a field its type lacks fails the check.
/// What decoding cannot show, a type says itself: a closed set of strings
/// (`SchemaEnumeration`), a value of any shape (`SchemaDescribed`), notes on fields
/// (`SchemaFieldNotes`). A type named as a component is referred to (`$ref`), not repeated.
public struct SchemaDerivation {
    /// Component names by type: where one of these is met inside another, it is a `$ref`.
    public let components: [(name: String, type: any Decodable.Type)]
    private let names: [ObjectIdentifier: String]

    public init(components: [(name: String, type: any Decodable.Type)]) {
        self.components = components
        names = Dictionary(components.map { (ObjectIdentifier($0.type), $0.name) }) { first, _ in first }
    }

    /// Every component's schema, by name.
    public func schemas() throws -> [String: JSONValue] {
        var schemas: [String: JSONValue] = [:]
        for component in components { schemas[component.name] = try schema(of: component.type) }
        return schemas
    }

    /// The schema of `type` itself (a component's own, not a reference to it).
    public func schema(of type: any Decodable.Type) throws -> JSONValue {
        try derive(type, asReference: false).schema
    }

    /// The schema of `type` where another type holds it, with a value to hand that type.
    func derive<T: Decodable>(_ type: T.Type, asReference: Bool = true) throws -> (schema: JSONValue, value: T) {
        if let described = T.self as? any SchemaDescribed.Type {
            return (described.jsonSchema, try Self.cast(described.schemaPlaceholder, T.self))
        }
        if let dictionary = T.self as? any StringKeyedDictionary.Type {
            return (["type": "object", "additionalProperties": try dictionary.valueSchema(self)], try Self.cast(dictionary.empty, T.self))
        }
        if T.self == Date.self { return (["type": "string"], try Self.cast(Date(timeIntervalSince1970: 0), T.self)) }
        if T.self == URL.self { return (["type": "string"], try Self.cast(URL(fileURLWithPath: "/"), T.self)) }
        let shape = Shape()
        let value: T
        do {
            value = try T(from: SchemaDecoder(derivation: self, shape: shape, codingPath: [], minimal: false))
            if T.self is any Encodable.Type {
                let least = try T(from: SchemaDecoder(derivation: self, shape: Shape(), codingPath: [], minimal: true))
                if let written = least as? any Encodable, let data = try? JSONEncoder().encode(written), let json = try? JSONDecoder().decode(JSONValue.self, from: data) {
                    shape.requireWritten(json)
                }
            }
        } catch let error as SchemaDerivationError {
            throw error
        } catch {
            throw SchemaDerivationError(message: "\(T.self) cannot be read for its schema (\(error)): if it is a closed set of strings, "
                                        + "conform it to SchemaEnumeration; if it checks its values, to SchemaDescribed")
        }
        if asReference, let name = names[ObjectIdentifier(T.self)] {
            return (["$ref": .string("#/components/schemas/\(name)")], value)
        }
        var schema = shape.schema
        if let notes = T.self as? any SchemaFieldNotes.Type, case .object(var fields) = schema, case .object(var properties)? = fields["properties"] {
            for (field, note) in notes.fieldNotes {
                if note == .null, properties[field] != nil {   // read (from storage), never in an answer
                    properties[field] = nil
                    if case .array(let required)? = fields["required"] { fields["required"] = .array(required.filter { $0 != .string(field) }) }
                    continue
                }
                guard case .object(var property)? = properties[field], case .object(let extra) = note else {
                    throw SchemaDerivationError(message: "\(T.self) has a note on \(field), which it does not decode")
                }
                property.merge(extra) { _, new in new }
                properties[field] = .object(property)
            }
            fields["properties"] = .object(properties)
            schema = .object(fields)
        }
        return (schema, value)
    }

    static func cast<T>(_ value: Any, _ type: T.Type) throws -> T {
        guard let typed = value as? T else { throw SchemaDerivationError(message: "\(T.self)'s placeholder is not a \(T.self)") }
        return typed
    }
}

/// A type whose schema is derived wrongly or not at all.
public struct SchemaDerivationError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// A type that says its own schema, and a value of it to go on deriving with: a value of any
/// JSON shape, or one whose decoding checks what it reads.
public protocol SchemaDescribed {
    static var jsonSchema: JSONValue { get }
    static var schemaPlaceholder: Self { get }
}

/// A closed set of strings: `{"type": "string", "enum": [its raw values]}`.
public protocol SchemaEnumeration: SchemaDescribed, CaseIterable, RawRepresentable where RawValue == String {}

extension SchemaEnumeration {
    public static var jsonSchema: JSONValue { ["type": "string", "enum": .array(allCases.map { .string($0.rawValue) })] }
    public static var schemaPlaceholder: Self { allCases.first! }
}

/// What a type's decoding cannot say about some of its fields (a description, a format, a
/// deprecation, the strings a `String` field takes), merged into each field's derived schema;
/// `null` leaves out a field the type reads (from storage) but no answer has.
public protocol SchemaFieldNotes {
    static var fieldNotes: [String: JSONValue] { get }
}

extension JSONValue: SchemaDescribed {
    /// Any JSON.
    public static var jsonSchema: JSONValue { [:] }
    public static var schemaPlaceholder: JSONValue { .null }
}

/// `[String: Value]`: an object whose every field is a `Value`.
protocol StringKeyedDictionary {
    static var empty: Self { get }
    static func valueSchema(_ derivation: SchemaDerivation) throws -> JSONValue
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    static var empty: Self { [:] }
    static func valueSchema(_ derivation: SchemaDerivation) throws -> JSONValue { try derivation.derive(Value.self).schema }
}

/// What one value was read as: fixed (a scalar, a reference), an object's fields, a list's items.
final class Shape {
    var fixed: JSONValue?
    var fields: [(name: String, shape: Shape)] = []
    var optional: Set<String> = []
    var items: Shape?
    var isObject = false

    /// Makes required exactly the fields `written` (the type's least value, encoded) has, here
    /// and in the objects read inline below.
    func requireWritten(_ written: JSONValue) {
        guard isObject, fixed == nil, case .object(let present) = written else { return }
        optional = Set(fields.map(\.name).filter { present[$0] == nil })
        for field in fields { if let inner = present[field.name] { field.shape.requireWritten(inner) } }
    }

    var schema: JSONValue {
        if let fixed { return fixed }
        if let items { return ["type": "array", "items": items.schema] }
        guard isObject else { return [:] }
        var object: [String: JSONValue] = [
            "type": "object", "properties": .object(Dictionary(fields.map { ($0.name, $0.shape.schema) }) { first, _ in first }),
            "additionalProperties": false,
        ]
        let required = fields.map(\.name).filter { !optional.contains($0) }
        if !required.isEmpty { object["required"] = .array(required.map { .string($0) }) }
        return .object(object)
    }
}

struct SchemaDecoder: Decoder {
    let derivation: SchemaDerivation
    let shape: Shape
    var codingPath: [any CodingKey]
    /// Decoding the least value: every optional field absent, every list empty.
    let minimal: Bool
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        shape.isObject = true
        return KeyedDecodingContainer(KeyedRecorder<Key>(derivation: derivation, shape: shape, codingPath: codingPath, minimal: minimal))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let items = Shape()
        shape.items = items
        return UnkeyedRecorder(derivation: derivation, items: items, codingPath: codingPath, minimal: minimal)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleRecorder(derivation: derivation, shape: shape, codingPath: codingPath, minimal: minimal)
    }
}

/// Reads one value of `type` into `shape`: a scalar's schema, or the type derived (its least
/// value when `minimal`).
private func read<T: Decodable>(_ type: T.Type, into shape: Shape, _ derivation: SchemaDerivation, minimal: Bool) throws -> T {
    switch T.self {
    case is String.Type: shape.fixed = ["type": "string"]; return try SchemaDerivation.cast("", T.self)
    case is Bool.Type: shape.fixed = ["type": "boolean"]; return try SchemaDerivation.cast(false, T.self)
    case is Int.Type: shape.fixed = ["type": "integer"]; return try SchemaDerivation.cast(0, T.self)
    case is Int64.Type: shape.fixed = ["type": "integer"]; return try SchemaDerivation.cast(Int64(0), T.self)
    case is Int32.Type: shape.fixed = ["type": "integer"]; return try SchemaDerivation.cast(Int32(0), T.self)
    case is UInt64.Type: shape.fixed = ["type": "integer"]; return try SchemaDerivation.cast(UInt64(0), T.self)
    case is Double.Type: shape.fixed = ["type": "number"]; return try SchemaDerivation.cast(0.0, T.self)
    case is Float.Type: shape.fixed = ["type": "number"]; return try SchemaDerivation.cast(Float(0), T.self)
    default:
        if let integer = T.self as? any FixedWidthInteger.Type {
            shape.fixed = ["type": "integer"]
            return try SchemaDerivation.cast(integer.init(0), T.self)
        }
        if let number = T.self as? any BinaryFloatingPoint.Type {
            shape.fixed = ["type": "number"]
            return try SchemaDerivation.cast(number.init(0), T.self)
        }
        if minimal {
            if let described = T.self as? any SchemaDescribed.Type { return try SchemaDerivation.cast(described.schemaPlaceholder, T.self) }
            if let dictionary = T.self as? any StringKeyedDictionary.Type { return try SchemaDerivation.cast(dictionary.empty, T.self) }
            if T.self == Date.self || T.self == URL.self { return try derivation.derive(T.self).value }
            return try T(from: SchemaDecoder(derivation: derivation, shape: Shape(), codingPath: [], minimal: true))
        }
        let (schema, value) = try derivation.derive(T.self)
        shape.fixed = schema
        return value
    }
}

struct KeyedRecorder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let derivation: SchemaDerivation
    let shape: Shape
    var codingPath: [any CodingKey]
    let minimal: Bool
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    /// Asked before a value is read only when the value may be absent: the field is optional
    /// (and absent from the least value).
    func decodeNil(forKey key: Key) throws -> Bool {
        shape.optional.insert(key.stringValue)
        return minimal
    }

    func field(_ key: Key) -> Shape {
        if let known = shape.fields.first(where: { $0.name == key.stringValue }) { return known.shape }
        let field = Shape()
        shape.fields.append((key.stringValue, field))
        return field
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(type, into: field(key), derivation, minimal: minimal) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(type, into: field(key), derivation, minimal: minimal) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let nested = field(key)
        nested.isObject = true
        return KeyedDecodingContainer(KeyedRecorder<NestedKey>(derivation: derivation, shape: nested, codingPath: codingPath + [key], minimal: minimal))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let items = Shape()
        field(key).items = items
        return UnkeyedRecorder(derivation: derivation, items: items, codingPath: codingPath + [key], minimal: minimal)
    }

    func superDecoder() throws -> any Decoder { throw SchemaDerivationError(message: "superDecoder has no schema") }
    func superDecoder(forKey key: Key) throws -> any Decoder { SchemaDecoder(derivation: derivation, shape: field(key), codingPath: codingPath + [key], minimal: minimal) }
}

/// A list: its items are read once.
struct UnkeyedRecorder: UnkeyedDecodingContainer {
    let derivation: SchemaDerivation
    let items: Shape
    var codingPath: [any CodingKey]
    let minimal: Bool
    var count: Int? { minimal ? 0 : nil }
    var currentIndex = 0
    var isAtEnd: Bool { minimal || currentIndex > 0 }

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        return try read(type, into: items, derivation, minimal: minimal)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        currentIndex += 1
        items.isObject = true
        return KeyedDecodingContainer(KeyedRecorder<NestedKey>(derivation: derivation, shape: items, codingPath: codingPath, minimal: minimal))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        currentIndex += 1
        let inner = Shape()
        items.items = inner
        return UnkeyedRecorder(derivation: derivation, items: inner, codingPath: codingPath, minimal: minimal)
    }

    mutating func superDecoder() throws -> any Decoder { throw SchemaDerivationError(message: "superDecoder has no schema") }
}

struct SingleRecorder: SingleValueDecodingContainer {
    let derivation: SchemaDerivation
    let shape: Shape
    var codingPath: [any CodingKey]
    let minimal: Bool

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try read(type, into: shape, derivation, minimal: minimal) }
    func decode(_ type: Bool.Type) throws -> Bool { try read(type, into: shape, derivation, minimal: minimal) }
    func decode(_ type: String.Type) throws -> String { try read(type, into: shape, derivation, minimal: minimal) }
    func decode(_ type: Double.Type) throws -> Double { try read(type, into: shape, derivation, minimal: minimal) }
    func decode(_ type: Int.Type) throws -> Int { try read(type, into: shape, derivation, minimal: minimal) }
}

import NIOCore
import PostgresNIO

/// A number PostgreSQL keeps in a fixed width, as an element of `BinaryArray`.
protocol BinaryArrayElement: Sendable {
    associatedtype Bits: FixedWidthInteger & UnsignedInteger
    var bits: Bits { get }
    init(bits: Bits)
    static var elementType: PostgresDataType { get }
    static var arrayType: PostgresDataType { get }
}

extension Float: BinaryArrayElement {
    var bits: UInt32 { bitPattern }
    init(bits: UInt32) { self.init(bitPattern: bits) }
    static var elementType: PostgresDataType { .float4 }
    static var arrayType: PostgresDataType { .float4Array }
}

extension Double: BinaryArrayElement {
    var bits: UInt64 { bitPattern }
    init(bits: UInt64) { self.init(bitPattern: bits) }
    static var elementType: PostgresDataType { .float8 }
    static var arrayType: PostgresDataType { .float8Array }
}

extension Int64: BinaryArrayElement {
    var bits: UInt64 { UInt64(bitPattern: self) }
    init(bits: UInt64) { self.init(bitPattern: bits) }
    static var elementType: PostgresDataType { .int8 }
    static var arrayType: PostgresDataType { .int8Array }
}

extension Int32: BinaryArrayElement {
    var bits: UInt32 { UInt32(bitPattern: self) }
    init(bits: UInt32) { self.init(bitPattern: bits) }
    static var elementType: PostgresDataType { .int4 }
    static var arrayType: PostgresDataType { .int4Array }
}

/// A one-dimensional array of numbers in PostgreSQL's binary wire format, written and read by
/// kb's own code in one pass over one buffer. PostgresNIO's array coding goes element by element
/// through generic code of its own: a million vectors' 384 million floats cost most of
/// `kb export`, and ten times that where the dependencies are built without optimisation (the
/// debug build scripts/setup.sh makes).
///
/// The format (PostgreSQL's `array_send`): dimensions (1, or 0 for an empty array), a flags word
/// (1 when it holds NULLs), the element type; for the one dimension its length and lower bound;
/// then each element as its byte length (−1 for NULL) and its bytes, big-endian.
struct BinaryArray<Element: BinaryArrayElement>: PostgresNonThrowingEncodable, PostgresDecodable, Sendable {
    var values: [Element]

    init(_ values: [Element]) { self.values = values }

    static var psqlType: PostgresDataType { Element.arrayType }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        let width = MemoryLayout<Element.Bits>.size
        let size = values.isEmpty ? 12 : 20 + values.count * (4 + width)
        let values = self.values
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { raw in
            var offset = 0
            func put<T: FixedWidthInteger>(_ value: T) {
                raw.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
                offset += MemoryLayout<T>.size
            }
            put(Int32(values.isEmpty ? 0 : 1))
            put(Int32(0))
            put(Element.elementType.rawValue)
            guard !values.isEmpty else { return offset }
            put(Int32(values.count))
            put(Int32(1))
            for value in values {
                put(Int32(width))
                put(value.bits)
            }
            return offset
        }
    }

    init<JSONDecoder: PostgresJSONDecoder>(from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat,
                                           context: PostgresDecodingContext<JSONDecoder>) throws {
        guard format == .binary, type == Element.arrayType else { throw PostgresDecodingError.Code.typeMismatch }
        let width = MemoryLayout<Element.Bits>.size
        let decoded: [Element]? = buffer.withUnsafeReadableBytes { raw in
            var offset = 0
            func take<T: FixedWidthInteger>(_: T.Type) -> T? {
                guard offset + MemoryLayout<T>.size <= raw.count else { return nil }
                defer { offset += MemoryLayout<T>.size }
                return T(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            guard let dimensions = take(Int32.self), take(Int32.self) != nil, take(UInt32.self) == Element.elementType.rawValue
            else { return nil }
            if dimensions == 0 { return [] }
            guard dimensions == 1, let count = take(Int32.self), count >= 0, take(Int32.self) != nil,
                  raw.count - offset == Int(count) * (4 + width) else { return nil }   // a NULL element makes it shorter
            var values: [Element] = []
            values.reserveCapacity(Int(count))
            for _ in 0..<Int(count) {
                guard take(Int32.self) == Int32(width), let bits = take(Element.Bits.self) else { return nil }
                values.append(Element(bits: bits))
            }
            return values
        }
        guard let decoded else { throw PostgresDecodingError.Code.failure }
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        values = decoded
    }
}

extension PostgresRandomAccessRow {
    /// The number array in column `index`, read by `BinaryArray`.
    func array<Element: BinaryArrayElement>(_ index: Int, of _: Element.Type = Element.self) throws -> [Element] {
        try get(index, BinaryArray<Element>.self).values
    }
}

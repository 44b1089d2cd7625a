import Foundation
@testable import KBPostgres
import NIOCore
import PostgresNIO
import Testing

/// kb's own coding of number arrays for PostgreSQL (`BinaryArray`) against PostgresNIO's: the same
/// bytes written, the same values read, and a malformed array an error (no server needed; the
/// store contract's PostgreSQL runs read and write through it).
@Suite struct BinaryArrayTests {
    static let context = PostgresEncodingContext.default

    func written<T: PostgresNonThrowingEncodable>(_ value: T) -> ByteBuffer {
        var buffer = ByteBuffer()
        value.encode(into: &buffer, context: Self.context)
        return buffer
    }

    func read<Element: BinaryArrayElement>(_ buffer: ByteBuffer, as: Element.Type) throws -> [Element] {
        var buffer = buffer
        return try BinaryArray<Element>(from: &buffer, type: Element.arrayType, format: .binary, context: .default).values
    }

    @Test func writesWhatPostgresNIOWrites() {
        let floats: [Float] = [0, -1.5, .pi, .greatestFiniteMagnitude, -.leastNonzeroMagnitude, 1e-30]
        #expect(written(BinaryArray(floats)) == written(floats))
        let doubles: [Double] = [0, -2.25, .pi, 1e300]
        #expect(written(BinaryArray(doubles)) == written(doubles))
        let longs: [Int64] = [0, 1, -1, .max, .min, 1_234_567_890_123]
        #expect(written(BinaryArray(longs)) == written(longs))
        let ints: [Int32] = [0, 7, -7, .max, .min]
        #expect(written(BinaryArray(ints)) == written(ints))
        #expect(written(BinaryArray([Float]())) == written([Float]()))
    }

    @Test func readsWhatPostgresNIOWrites() throws {
        let floats = (0..<384).map { Float($0) * 0.37 - 50 }
        #expect(try read(written(floats), as: Float.self) == floats)
        let longs: [Int64] = [3, .max, .min, -9]
        #expect(try read(written(longs), as: Int64.self) == longs)
        #expect(try read(written([Double]()), as: Double.self).isEmpty)
        #expect(try read(written([Int32]([5, -5])), as: Int32.self) == [5, -5])
    }

    @Test func aMalformedArrayIsAnError() {
        let bytes = written([Float](repeating: 1, count: 4))
        // Cut short; another element type; a NULL element (length −1, no bytes).
        #expect(throws: (any Error).self) { try read(bytes.getSlice(at: 0, length: bytes.readableBytes - 2)!, as: Float.self) }
        #expect(throws: (any Error).self) { try read(written([Int32](repeating: 1, count: 4)), as: Float.self) }
        var withNull = ByteBuffer()
        for word: Int32 in [1, 1, Int32(Float.elementType.rawValue), 2, 1, 4] { withNull.writeInteger(word) }
        withNull.writeInteger(Float(1).bitPattern)
        withNull.writeInteger(Int32(-1))
        #expect(throws: (any Error).self) { try read(withNull, as: Float.self) }
        // Read as another array type than the column's.
        var buffer = bytes
        #expect(throws: (any Error).self) {
            try BinaryArray<Float>(from: &buffer, type: .int8Array, format: .binary, context: .default)
        }
    }
}

import Foundation
import Testing
@testable import KBEmbed

@Suite struct VectorMathTests {
    @Test func erfMatchesLibmAcrossItsRange() {
        var worst: Float = 0
        for i in stride(from: -6000, through: 6000, by: 8) {
            var v = SIMD8<Float>()
            for j in 0..<8 { v[j] = Float(i + j) / 1000 }
            let e = VectorMath.erf(v)
            for j in 0..<8 { worst = max(worst, abs(e[j] - erff(v[j]))) }
        }
        #expect(worst < 1e-6, "max |erf error| \(worst)")
    }

    @Test func expMatchesLibmRelatively() {
        var worst: Float = 0
        for i in stride(from: -87000, through: 88000, by: 8) {
            var v = SIMD8<Float>()
            for j in 0..<8 { v[j] = Float(i + j) / 1000 }
            let e = VectorMath.exp(v)
            for j in 0..<8 { worst = max(worst, abs(e[j] - expf(v[j])) / expf(v[j])) }
        }
        #expect(worst < 1e-6, "max relative exp error \(worst)")
        #expect(VectorMath.exp(SIMD8(repeating: -.infinity)) == SIMD8(repeating: 0) || VectorMath.exp(SIMD8(repeating: -200)).max() < 1e-37)
    }

    @Test(arguments: [1, 7, 8, 9, 33])
    func softmaxRowsSumToOneAndMatchTheScalarDefinition(width: Int) {
        var values = (0..<(width * 3)).map { Float(($0 * 37) % 23) - 11 }
        let original = values
        values.withUnsafeMutableBufferPointer { VectorMath.softmaxRows($0.baseAddress!, rows: 3, width: width) }
        for r in 0..<3 {
            let row = original[r * width..<(r + 1) * width]
            let m = row.max()!
            let denominator = row.reduce(0) { $0 + expf($1 - m) }
            for j in 0..<width {
                #expect(abs(values[r * width + j] - expf(original[r * width + j] - m) / denominator) < 1e-6)
            }
        }
    }
}

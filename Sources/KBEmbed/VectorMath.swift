import Foundation

/// Elementwise kernels for the encoder on 8-wide SIMD vectors: exact-GELU (through a rational
/// erf approximation accurate to a few float ulps) and the exponential (Cephes-style range
/// reduction and polynomial). libm's scalar `erff`/`expf` made these two the largest costs of
/// a forward pass after sgemm.
enum VectorMath {
    typealias V = SIMD8<Float>

    /// Lane-wise clamp; `replacing(with:where:)` vectorises where `pointwiseMin` does not (6× slower here).
    @inline(__always)
    static func clamp(_ a: V, _ low: Float, _ high: Float) -> V {
        let lo = V(repeating: low), hi = V(repeating: high)
        return a.replacing(with: hi, where: a .> hi).replacing(with: lo, where: a .< lo)
    }

    /// erf(x), |error| < 2e-7 for all x (the rational approximation Eigen uses for floats).
    @inline(__always)
    static func erf(_ a: V) -> V {
        let x = clamp(a, -4, 4)
        let x2 = x * x
        var p = x2 * V(repeating: -2.72614225801306e-10) + V(repeating: 2.77068142495902e-08)
        p = x2 * p + V(repeating: -2.10102402082508e-06)
        p = x2 * p + V(repeating: -5.69250639462346e-05)
        p = x2 * p + V(repeating: -7.34990630326855e-04)
        p = x2 * p + V(repeating: -2.95459980854025e-03)
        p = x2 * p + V(repeating: -1.60960333262415e-02)
        p = x * p
        var q = x2 * V(repeating: -1.45660718464996e-05) + V(repeating: -2.13374055278905e-04)
        q = x2 * q + V(repeating: -1.68282697438203e-03)
        q = x2 * q + V(repeating: -7.37332916720468e-03)
        q = x2 * q + V(repeating: -1.42647390514189e-02)
        return p / q
    }

    /// e^x for x in [-87.3, 88.7] (clamped outside), relative error about 1 ulp.
    @inline(__always)
    static func exp(_ a: V) -> V {
        // Only lane-wise float and integer arithmetic, so it compiles to vector instructions.
        let x = clamp(a, -87.33654, 88.72283)
        // Round x·log2(e) to the nearest integer n with the 1.5·2²³ trick: n sits in t's low bits.
        let magic = V(repeating: 12582912)
        let t = x * V(repeating: 1.44269504088896341) + magic
        let n = t - magic
        var r = x - n * V(repeating: 0.693359375)
        r = r - n * V(repeating: -2.12194440e-4)
        var p = V(repeating: 1.9875691500e-4)
        p = p * r + V(repeating: 1.3981999507e-3)
        p = p * r + V(repeating: 8.3334519073e-3)
        p = p * r + V(repeating: 4.1665795894e-2)
        p = p * r + V(repeating: 1.6666665459e-1)
        p = p * r + V(repeating: 5.0000001201e-1)
        let y = p * r * r + r + V(repeating: 1)
        // 2ⁿ built in the exponent bits; n + 127 stays within 0...255 after clamping.
        let integer = unsafeBitCast(t, to: SIMD8<Int32>.self) &- unsafeBitCast(magic, to: SIMD8<Int32>.self)
        let bits = (integer &+ SIMD8<Int32>(repeating: 127)) &<< SIMD8<Int32>(repeating: 23)
        return y * unsafeBitCast(bits, to: V.self)
    }

    /// x · Φ(x) = ½x(1 + erf(x/√2)), in place.
    static func gelu(_ x: UnsafeMutablePointer<Float>, count: Int) {
        let half = V(repeating: 0.5), one = V(repeating: 1), inverseRoot2 = V(repeating: 0.70710678118654752)
        var i = 0
        while i + 8 <= count {
            let v = UnsafeRawPointer(x + i).loadUnaligned(as: V.self)
            UnsafeMutableRawPointer(x + i).storeBytes(of: half * v * (one + erf(v * inverseRoot2)), as: V.self)
            i += 8
        }
        if i < count {
            var tail = V(repeating: 0)
            for j in 0..<(count - i) { tail[j] = x[i + j] }
            let result = half * tail * (one + erf(tail * inverseRoot2))
            for j in 0..<(count - i) { x[i + j] = result[j] }
        }
    }

    /// Row-wise numerically stable softmax, in place.
    static func softmaxRows(_ m: UnsafeMutablePointer<Float>, rows: Int, width: Int) {
        for r in 0..<rows {
            let row = m + r * width
            var maximum = -Float.infinity
            for j in 0..<width where row[j] > maximum { maximum = row[j] }
            let shift = V(repeating: maximum)
            var sums = V(repeating: 0)
            var j = 0
            while j + 8 <= width {
                let e = exp(UnsafeRawPointer(row + j).loadUnaligned(as: V.self) - shift)
                UnsafeMutableRawPointer(row + j).storeBytes(of: e, as: V.self)
                sums += e
                j += 8
            }
            var sum = sums.sum()
            if j < width {
                var tail = V(repeating: -Float.infinity)
                for t in 0..<(width - j) { tail[t] = row[j + t] }
                let e = exp(tail - shift)
                for t in 0..<(width - j) { row[j + t] = e[t]; sum += e[t] }
            }
            let inverse = 1 / sum
            for j in 0..<width { row[j] *= inverse }
        }
    }
}

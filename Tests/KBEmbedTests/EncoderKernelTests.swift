import CKBEncoder
import Foundation
import Testing

/// CKBEncoder's kernels against plain double-precision definitions, and the property micro-batching
/// rests on: a row's result does not depend on the rows, threads or instruction set around it.
@Suite struct EncoderKernelTests {
    static let variants = [KB_VARIANT_GENERIC, KB_VARIANT_AVX2, KB_VARIANT_AVX512].filter { kb_variant_supported($0) != 0 }

    /// Deterministic values in about -2…2.
    static func values(_ count: Int, seed: UInt64) -> [Float] {
        var state = seed | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Float(Int(state % 4001) - 2000) / 1000
        }
    }

    static func linear(_ variant: kb_variant, x: [Float], m: Int, k: Int, weight: [Float], bias: [Float], n: Int,
                       panels range: Range<Int>? = nil, activation: kb_activation = KB_ACTIVATION_NONE) -> [Float] {
        var packed = [Float](repeating: .nan, count: kb_linear_packed_count(variant, n, k))
        kb_linear_pack(variant, weight, n, k, &packed)
        var out = [Float](repeating: .nan, count: m * n)
        let panels = kb_linear_panels(variant, n)
        let range = range ?? 0..<panels
        kb_linear(variant, x, m, k, packed, bias, n, &out, range.lowerBound, range.upperBound, activation)
        return out
    }

    @Test(arguments: [(1, 384, 384), (3, 5, 7), (14, 40, 384), (23, 1152, 48), (64, 17, 33)])
    func linearMatchesTheDefinition(shape: (m: Int, n: Int, k: Int)) {
        let x = Self.values(shape.m * shape.k, seed: 1), w = Self.values(shape.n * shape.k, seed: 2), b = Self.values(shape.n, seed: 3)
        for variant in Self.variants {
            let out = Self.linear(variant, x: x, m: shape.m, k: shape.k, weight: w, bias: b, n: shape.n)
            // Within float32's forward-error bound for a sum of k + 1 products: (k + 1)·ε·Σ|terms|.
            var worst = 0.0
            for r in 0..<shape.m {
                for c in 0..<shape.n {
                    var sum = Double(b[c]), magnitude = abs(Double(b[c]))
                    for i in 0..<shape.k {
                        let term = Double(x[r * shape.k + i]) * Double(w[c * shape.k + i])
                        sum += term
                        magnitude += abs(term)
                    }
                    let bound = Double(shape.k + 1) * Double(Float.ulpOfOne) * magnitude
                    worst = max(worst, abs(Double(out[r * shape.n + c]) - sum) / bound)
                }
            }
            #expect(worst <= 1, "variant \(variant.rawValue), shape \(shape): error \(worst)× the float32 bound")
        }
    }

    @Test func aRowsResultDoesNotDependOnTheRowsBesideItTheThreadSplitOrTheInstructionSet() {
        let k = 96, n = 200, rows = 40
        let x = Self.values(rows * k, seed: 4), w = Self.values(n * k, seed: 5), b = Self.values(n, seed: 6)
        let reference = Self.variants.map { variant in
            (0..<rows).flatMap { r in Self.linear(variant, x: Array(x[r * k..<(r + 1) * k]), m: 1, k: k, weight: w, bias: b, n: n) }
        }
        for (variant, alone) in zip(Self.variants, reference) {
            #expect(alone == reference[0], "variant \(variant.rawValue) differs from the generic kernel")
            for count in [2, 3, 7, 8, 9, 16, 33, 40] {
                for start in [0, rows - count] {
                    let together = Self.linear(variant, x: Array(x[start * k..<(start + count) * k]), m: count, k: k, weight: w, bias: b, n: n)
                    #expect(together == Array(alone[start * n..<(start + count) * n]), "variant \(variant.rawValue), \(count) rows from \(start)")
                }
            }
            // Panels computed in two calls (as two threads would) give the same matrix.
            let panels = kb_linear_panels(variant, n)
            var split = Self.linear(variant, x: x, m: rows, k: k, weight: w, bias: b, n: n, panels: 0..<panels / 2)
            let rest = Self.linear(variant, x: x, m: rows, k: k, weight: w, bias: b, n: n, panels: panels / 2..<panels)
            let width = kb_linear_panel_width(variant)
            for r in 0..<rows { for c in (panels / 2 * width)..<n { split[r * n + c] = rest[r * n + c] } }
            #expect(split == alone)
        }
    }

    @Test(arguments: [(1, 32), (2, 32), (15, 32), (16, 32), (17, 32), (100, 32), (9, 8), (31, 24)])
    func attentionMatchesTheDefinition(shape: (n: Int, headSize: Int)) {
        for variant in Self.variants {
            let worst = Self.attentionError(n: shape.n, headSize: shape.headSize) { qkv, offsets, hidden, heads, scale, out, scratch, items in
                kb_attention(variant, qkv, offsets, hidden, heads, scale, out, scratch, 0, items)
            }
            #expect(worst < 1e-5, "variant \(variant.rawValue), shape \(shape): error \(worst)")
        }
    }

    @Test(.enabled(if: kb_attention_bf16_supported(32) != 0, "the CPU has no AVX-512 BF16"),
          arguments: [(1, 32), (2, 32), (15, 32), (16, 32), (17, 32), (100, 32), (33, 64), (130, 64)])
    func bf16AttentionMatchesTheDefinitionToBF16Precision(shape: (n: Int, headSize: Int)) {
        let worst = Self.attentionError(n: shape.n, headSize: shape.headSize) { qkv, offsets, hidden, heads, scale, out, scratch, items in
            // In two calls, as two threads would.
            kb_attention_bf16(qkv, nil, offsets, hidden, heads, scale, out, nil, scratch, 0, items / 2)
            kb_attention_bf16(qkv, nil, offsets, hidden, heads, scale, out, nil, scratch, items / 2, items)
        }
        // Values in [-2, 2]: bf16's 8-bit significands leave errors of a few hundredths at most;
        // a wrong pairing or padding gives errors near 1.
        #expect(worst < 0.03, "shape \(shape): error \(worst)")
    }

    /// With a bf16 output, each value is the fp32 output rounded to nearest even, bit for bit.
    @Test(.enabled(if: kb_attention_bf16_supported(32) != 0, "the CPU has no AVX-512 BF16"), arguments: [17, 100])
    func bf16AttentionWritesItsOutputRoundedToBF16WhenAsked(n: Int) {
        let heads = 3, headSize = 32, hidden = heads * headSize
        let qkv = Self.values(n * 3 * hidden, seed: 31)
        let offsets: [Int32] = [0, Int32(n)]
        var scratch = [Float](repeating: 0, count: kb_attention_scratch_count(n, headSize))
        var out = [Float](repeating: .nan, count: n * hidden)
        var half = [UInt16](repeating: 0xffff, count: n * hidden)
        let scale = 1 / Float(headSize).squareRoot()
        kb_attention_bf16(qkv, nil, offsets, hidden, heads, scale, &out, nil, &scratch, 0, heads)
        kb_attention_bf16(qkv, nil, offsets, hidden, heads, scale, &out, &half, &scratch, 0, heads)
        let rounded = out.map { value -> UInt16 in
            let bits = value.bitPattern
            return UInt16((bits + 0x7fff + ((bits >> 16) & 1)) >> 16)
        }
        #expect(half == rounded)
    }

    /// The QKV product's bias added as attention reads q, k and v gives, bit for bit, what
    /// attention gives on q, k and v with the bias already added (in fp32, as the product would).
    @Test(.enabled(if: kb_attention_bf16_supported(32) != 0, "the CPU has no AVX-512 BF16"), arguments: [(5, 32), (17, 32), (100, 32), (33, 64)])
    func bf16AttentionAddsTheProjectionsBiasAsTheProductWould(shape: (n: Int, headSize: Int)) {
        let heads = 3, hidden = heads * shape.headSize, n = shape.n
        let raw = Self.values(n * 3 * hidden, seed: 41), bias = Self.values(3 * hidden, seed: 42)
        let added = raw.indices.map { raw[$0] + bias[$0 % (3 * hidden)] }
        let offsets: [Int32] = [0, Int32(n)]
        var scratch = [Float](repeating: 0, count: kb_attention_scratch_count(n, shape.headSize))
        var deferred = [Float](repeating: .nan, count: n * hidden), applied = deferred
        var deferredHalf = [UInt16](repeating: 0, count: n * hidden), appliedHalf = deferredHalf
        let scale = 1 / Float(shape.headSize).squareRoot()
        kb_attention_bf16(raw, bias, offsets, hidden, heads, scale, &deferred, nil, &scratch, 0, heads)
        kb_attention_bf16(added, nil, offsets, hidden, heads, scale, &applied, nil, &scratch, 0, heads)
        #expect(deferred.map(\.bitPattern) == applied.map(\.bitPattern))
        kb_attention_bf16(raw, bias, offsets, hidden, heads, scale, &deferred, &deferredHalf, &scratch, 0, heads)
        kb_attention_bf16(added, nil, offsets, hidden, heads, scale, &applied, &appliedHalf, &scratch, 0, heads)
        #expect(deferredHalf == appliedHalf)
    }

    typealias AttentionCall = (UnsafePointer<Float>, UnsafePointer<Int32>, Int, Int, Float, UnsafeMutablePointer<Float>,
                               UnsafeMutablePointer<Float>, Int) -> Void

    /// The largest difference between `attention` (over all items of two sequences, three heads)
    /// and attention computed from its definition in Double.
    static func attentionError(n: Int, headSize: Int, _ attention: AttentionCall) -> Double {
        let heads = 3, hidden = heads * headSize
        // Two sequences: a short one first, so the second starts at an offset.
        let lengths = [min(3, n), n]
        let offsets: [Int32] = [0, Int32(lengths[0]), Int32(lengths[0] + lengths[1])]
        let tokens = lengths.reduce(0, +)
        let qkv = values(tokens * 3 * hidden, seed: 7)
        let scale = 1 / Float(headSize).squareRoot()
        var out = [Float](repeating: .nan, count: tokens * hidden)
        var scratch = [Float](repeating: .nan, count: kb_attention_scratch_count(n, headSize))
        attention(qkv, offsets, hidden, heads, scale, &out, &scratch, 2 * heads)
        var worst = 0.0
        for s in 0..<2 {
            let base = Int(offsets[s]), n = lengths[s]
            for head in 0..<heads {
                for i in 0..<n {
                    let q = (base + i) * 3 * hidden + head * headSize
                    let scores = (0..<n).map { j -> Double in
                        let key = (base + j) * 3 * hidden + hidden + head * headSize
                        return (0..<headSize).reduce(0.0) { $0 + Double(qkv[q + $1]) * Double(qkv[key + $1]) } * Double(scale)
                    }
                    let top = scores.max()!
                    let weights = scores.map { Foundation.exp($0 - top) }
                    let total = weights.reduce(0, +)
                    for t in 0..<headSize {
                        let expected = (0..<n).reduce(0.0) { sum, j in
                            sum + weights[j] / total * Double(qkv[(base + j) * 3 * hidden + 2 * hidden + head * headSize + t])
                        }
                        worst = max(worst, abs(Double(out[(base + i) * hidden + head * headSize + t]) - expected))
                    }
                }
            }
        }
        return worst
    }
}

extension EncoderKernelTests {
    @Test func theGELUActivationIsXTimesTheNormalCDF() {
        // k = 1, weight 1, bias 0: the product is the input, so the output is gelu(x).
        let xs = (-6000...6000).map { Float($0) / 1000 }
        for variant in Self.variants {
            let out = Self.linear(variant, x: xs, m: xs.count, k: 1, weight: [1], bias: [0], n: 1, activation: KB_ACTIVATION_GELU)
            var worst = 0.0
            for (x, y) in zip(xs, out) {
                let exact = 0.5 * Double(x) * (1 + Foundation.erf(Double(x) / 2.0.squareRoot()))
                worst = max(worst, abs(Double(y) - exact))
            }
            #expect(worst < 2e-6, "variant \(variant.rawValue): max |gelu error| \(worst)")
        }
    }

    @Test(arguments: [16, 48, 384])
    func layerNormWithAResidualMatchesTheDefinition(width: Int) {
        let rows = 5
        let x = Self.values(rows * width, seed: 8), residual = Self.values(rows * width, seed: 9)
        let weight = Self.values(width, seed: 10), bias = Self.values(width, seed: 11)
        for variant in Self.variants {
            var out = x
            kb_add_layer_norm(variant, &out, residual, nil, rows, width, weight, bias, 1e-12)
            var worst = 0.0
            for r in 0..<rows {
                let row = (0..<width).map { Double(x[r * width + $0]) + Double(residual[r * width + $0]) }
                let mean = row.reduce(0, +) / Double(width)
                let variance = row.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(width)
                for j in 0..<width {
                    let expected = (row[j] - mean) / (variance + 1e-12).squareRoot() * Double(weight[j]) + Double(bias[j])
                    worst = max(worst, abs(Double(out[r * width + j]) - expected))
                }
            }
            #expect(worst < 1e-5, "variant \(variant.rawValue), width \(width): error \(worst)")
        }
    }
}

extension EncoderKernelTests {
    /// LayerNorm(x + (residual + bias)) with the bias given to it is LayerNorm over a residual
    /// that already had it, bit for bit, in every variant and with the bf16 copy.
    @Test(arguments: [16, 384])
    func layerNormAddsTheResidualsBiasAsTheProductWould(width: Int) {
        let rows = 7
        let x = Self.values(rows * width, seed: 12), raw = Self.values(rows * width, seed: 13), productBias = Self.values(width, seed: 14)
        let weight = Self.values(width, seed: 15), bias = Self.values(width, seed: 16)
        let residual = raw.indices.map { raw[$0] + productBias[$0 % width] }
        for variant in Self.variants {
            var deferred = x, applied = x
            kb_add_layer_norm(variant, &deferred, raw, productBias, rows, width, weight, bias, 1e-12)
            kb_add_layer_norm(variant, &applied, residual, nil, rows, width, weight, bias, 1e-12)
            #expect(deferred.map(\.bitPattern) == applied.map(\.bitPattern), "variant \(variant.rawValue)")
        }
        guard kb_precision_supported(KB_PRECISION_BF16) != 0 else { return }
        var deferred = x, applied = x
        var deferredCopy = [UInt16](repeating: 0, count: rows * width), appliedCopy = deferredCopy
        kb_add_layer_norm_bf16(&deferred, raw, productBias, rows, width, weight, bias, 1e-12, &deferredCopy)
        kb_add_layer_norm_bf16(&applied, residual, nil, rows, width, weight, bias, 1e-12, &appliedCopy)
        #expect(deferred.map(\.bitPattern) == applied.map(\.bitPattern) && deferredCopy == appliedCopy)
    }
}

extension EncoderKernelTests {
    /// int8 product of x[rows × k] and w[n × k], with optional input column scales.
    static func int8Product(x: [Float], rows: Int, k: Int, weight: [Float], n: Int, inputScales: [Float]?) throws -> [Float] {
        var message = [CChar](repeating: 0, count: 256)
        let matmul = try #require(kb_matmul_create(KB_PRECISION_INT8, weight, n, k, inputScales, KB_ACTIVATION_NONE, 0, &message, message.count))
        defer { kb_matmul_free(matmul) }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: kb_matmul_scratch_bytes(matmul, rows), alignment: 64)
        defer { scratch.deallocate() }
        var out = [Float](repeating: .nan, count: rows * n)
        let bias = [Float](repeating: 0, count: n)
        #expect(kb_matmul_run(matmul, x, 0, rows, bias, &out, scratch, 1, &message, message.count) != 0)
        return out
    }

    /// Input column scales with the weights' columns divided by them leave the product as it was,
    /// and bring an outlier column into range: the error of a row with one input 100× the others
    /// falls when that column is scaled down.
    @Test(.enabled(if: kb_precision_supported(KB_PRECISION_INT8) != 0, "the CPU has no AVX-512 VNNI"))
    func int8InputScalesKeepTheProductAndTameAnOutlierColumn() throws {
        let rows = 8, k = 64, n = 32
        var x = Self.values(rows * k, seed: 11)
        for r in 0..<rows { x[r * k + 5] *= 100 }   // column 5 is an outlier in every row
        let weight = Self.values(n * k, seed: 13)
        var exact = [Double](repeating: 0, count: rows * n)
        for r in 0..<rows { for c in 0..<n { for i in 0..<k { exact[r * n + c] += Double(x[r * k + i]) * Double(weight[c * k + i]) } } }
        func error(_ out: [Float]) -> Double {
            zip(out, exact).map { abs(Double($0) - $1) }.max()! / exact.map(abs).max()!
        }
        let plain = try Self.int8Product(x: x, rows: rows, k: k, weight: weight, n: n, inputScales: nil)
        var scales = [Float](repeating: 1, count: k)
        scales[5] = 0.1   // half the outlier moved into the weights (α = ½)
        var divided = weight
        for c in 0..<n { divided[c * k + 5] /= scales[5] }
        let smoothed = try Self.int8Product(x: x, rows: rows, k: k, weight: divided, n: n, inputScales: scales)
        #expect(error(smoothed) < 0.01, "relative error \(error(smoothed))")
        #expect(error(smoothed) < error(plain) / 2, "smoothed \(error(smoothed)), plain \(error(plain))")
    }

    /// A feed-forward pair as the bf16 encoder runs it: the expansion with its bias and GELU,
    /// written as bf16 and read as bf16 by the contraction, with its bias — against the same
    /// arithmetic in double precision (bf16 inputs: about 1% of the largest value at most), and a
    /// row's result the same whatever rows are beside it. The model's shape runs on oneDNN's brgemm
    /// kernels, the small one on its gemm fallback.
    @Test(.enabled(if: kb_precision_supported(KB_PRECISION_BF16) != 0, "the CPU has no AVX-512 BF16"),
          arguments: [(48, 160), (384, 1536)])
    func bf16ProductsHandOverInBF16WithTheirBiasAndGELU(shape: (k: Int, wide: Int)) throws {
        let rows = 13, k = shape.k, wide = shape.wide
        let x = Self.values(rows * k, seed: 21)
        let up = Self.values(wide * k, seed: 23).map { $0 / 4 }, upBias = Self.values(wide, seed: 25)
        let down = Self.values(k * wide, seed: 27).map { $0 / 8 }, downBias = Self.values(k, seed: 29)
        var message = [CChar](repeating: 0, count: 256)
        let expand = try #require(kb_matmul_create(KB_PRECISION_BF16, up, wide, k, nil, KB_ACTIVATION_GELU, 1, &message, message.count))
        defer { kb_matmul_free(expand) }
        let contract = try #require(kb_matmul_create(KB_PRECISION_BF16, down, k, wide, nil, KB_ACTIVATION_NONE, 0, &message, message.count))
        defer { kb_matmul_free(contract) }
        func run(_ x: [Float], rows: Int, withDownBias: Bool = true) -> [Float] {
            let scratch = UnsafeMutableRawPointer.allocate(
                byteCount: max(kb_matmul_scratch_bytes(expand, rows), kb_matmul_scratch_bytes(contract, rows)), alignment: 64)
            defer { scratch.deallocate() }
            // Room for fp32 sums: the bf16 result is written over them.
            var middle = [Float](repeating: .nan, count: rows * wide)
            var out = [Float](repeating: .nan, count: rows * k)
            #expect(kb_matmul_run(expand, x, 0, rows, upBias, &middle, scratch, 1, &message, message.count) != 0)
            #expect(kb_matmul_run(contract, middle, 1, rows, withDownBias ? downBias : nil, &out, scratch, 1, &message, message.count) != 0)
            return out
        }
        let out = run(x, rows: rows)
        var exact = [Double](repeating: 0, count: rows * k)
        for r in 0..<rows {
            let hidden = (0..<wide).map { c -> Double in
                var u = Double(upBias[c])
                for i in 0..<k { u += Double(x[r * k + i]) * Double(up[c * k + i]) }
                return 0.5 * u * (1 + erf(u / 2.0.squareRoot()))
            }
            for c in 0..<k {
                exact[r * k + c] = Double(downBias[c]) + (0..<wide).reduce(0) { $0 + hidden[$1] * Double(down[c * wide + $1]) }
            }
        }
        let largest = exact.map(abs).max()!
        let worst = zip(out, exact).map { abs(Double($0) - $1) }.max()!
        #expect(worst < 0.01 * largest, "error \(worst) of \(largest)")
        // Rows 4–6 alone give what they gave among the others, bit for bit (three rows: the
        // fewest a text has, with its two special tokens).
        let alone = run(Array(x[(4 * k)..<(7 * k)]), rows: 3)
        #expect(alone == Array(out[(4 * k)..<(7 * k)]))
        // Without its bias, the contraction leaves its sums as they are: adding the bias after
        // (as LayerNorm does) gives its result bit for bit.
        let sums = run(x, rows: rows, withDownBias: false)
        #expect(sums.indices.map { (sums[$0] + downBias[$0 % k]).bitPattern } == out.map(\.bitPattern))
    }
}

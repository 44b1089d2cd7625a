import COpenBLAS
import Foundation
import KBCore

/// The BERT transformer on OpenBLAS: embeddings and LayerNorm, then per layer a fused QKV
/// projection, scaled dot-product attention, output projection with residual and LayerNorm,
/// and a GELU feed-forward with residual and LayerNorm; then pooling and L2 normalisation.
///
/// Sequences are packed without padding: token-wise steps run on one `[tokens × hidden]`
/// matrix, and attention runs per sequence over its real length, so no work is spent on padding.
///
/// @unchecked Sendable: weights are immutable after `init`; `encode` allocates its own scratch.
final class BERTEncoder: @unchecked Sendable {
    struct Layer {
        var qkvWeight: [Float]      // [3H × H]: query, key, value rows stacked
        var qkvBias: [Float]        // [3H]
        var outputWeight: UnsafeBufferPointer<Float>
        var outputBias: UnsafeBufferPointer<Float>
        var attentionNormWeight: UnsafeBufferPointer<Float>
        var attentionNormBias: UnsafeBufferPointer<Float>
        var intermediateWeight: UnsafeBufferPointer<Float>
        var intermediateBias: UnsafeBufferPointer<Float>
        var feedForwardWeight: UnsafeBufferPointer<Float>
        var feedForwardBias: UnsafeBufferPointer<Float>
        var outputNormWeight: UnsafeBufferPointer<Float>
        var outputNormBias: UnsafeBufferPointer<Float>
    }

    let config: ModelFolder.Config
    let pooling: ModelFolder.Pooling
    let normalize: Bool
    private let tensors: SafeTensors
    private let wordEmbeddings: UnsafeBufferPointer<Float>
    private let positionEmbeddings: UnsafeBufferPointer<Float>
    private let typeEmbeddings: UnsafeBufferPointer<Float>
    private let embeddingNormWeight: UnsafeBufferPointer<Float>
    private let embeddingNormBias: UnsafeBufferPointer<Float>
    private let layers: [Layer]

    init(folder: ModelFolder) throws {
        let file = folder.path + "/model.safetensors"
        guard FileManager.default.fileExists(atPath: file) else {
            throw KBError(.invalidModel, "The model folder \(folder.path) has no model.safetensors. Reinstall the model.")
        }
        tensors = try SafeTensors(path: file)
        config = folder.config
        pooling = folder.pooling
        normalize = folder.normalize
        let h = config.hiddenSize, i = config.intermediateSize
        let prefix = tensors.tensors["embeddings.word_embeddings.weight"] == nil && tensors.tensors["bert.embeddings.word_embeddings.weight"] != nil ? "bert." : ""
        let t = tensors
        func w(_ name: String, _ shape: [Int]) throws -> UnsafeBufferPointer<Float> { try t.floats(prefix + name, shape: shape) }
        wordEmbeddings = try w("embeddings.word_embeddings.weight", [config.vocabularySize, h])
        positionEmbeddings = try w("embeddings.position_embeddings.weight", [config.maxPositions, h])
        typeEmbeddings = try w("embeddings.token_type_embeddings.weight", [config.typeVocabularySize, h])
        embeddingNormWeight = try w("embeddings.LayerNorm.weight", [h])
        embeddingNormBias = try w("embeddings.LayerNorm.bias", [h])
        layers = try (0..<config.layers).map { n in
            let p = "encoder.layer.\(n)."
            let q = try w(p + "attention.self.query.weight", [h, h]), k = try w(p + "attention.self.key.weight", [h, h])
            let v = try w(p + "attention.self.value.weight", [h, h])
            let qb = try w(p + "attention.self.query.bias", [h]), kb = try w(p + "attention.self.key.bias", [h])
            let vb = try w(p + "attention.self.value.bias", [h])
            return Layer(
                qkvWeight: Array(q) + Array(k) + Array(v), qkvBias: Array(qb) + Array(kb) + Array(vb),
                outputWeight: try w(p + "attention.output.dense.weight", [h, h]),
                outputBias: try w(p + "attention.output.dense.bias", [h]),
                attentionNormWeight: try w(p + "attention.output.LayerNorm.weight", [h]),
                attentionNormBias: try w(p + "attention.output.LayerNorm.bias", [h]),
                intermediateWeight: try w(p + "intermediate.dense.weight", [i, h]),
                intermediateBias: try w(p + "intermediate.dense.bias", [i]),
                feedForwardWeight: try w(p + "output.dense.weight", [h, i]),
                feedForwardBias: try w(p + "output.dense.bias", [h]),
                outputNormWeight: try w(p + "output.LayerNorm.weight", [h]),
                outputNormBias: try w(p + "output.LayerNorm.bias", [h]))
        }
    }

    /// Pooled (and, if the model says so, normalised) vectors for token-id sequences, in order.
    func encode(_ sequences: [[Int32]]) -> [[Float]] {
        let h = config.hiddenSize, inter = config.intermediateSize
        let heads = config.heads, headSize = h / heads
        let offsets = sequences.reduce(into: [0]) { $0.append($0.last! + $1.count) }
        let tokens = offsets.last!
        guard tokens > 0 else { return sequences.map { _ in Array(repeating: 0, count: h) } }
        let longest = sequences.map(\.count).max() ?? 0

        var x = [Float](repeating: 0, count: tokens * h)
        var qkv = [Float](repeating: 0, count: tokens * 3 * h)
        var context = [Float](repeating: 0, count: tokens * h)
        var projected = [Float](repeating: 0, count: tokens * h)
        var intermediate = [Float](repeating: 0, count: tokens * inter)
        var scores = [Float](repeating: 0, count: longest * longest)
        let eps = config.layerNormEpsilon

        // Embeddings: word + position + token type 0, then LayerNorm.
        x.withUnsafeMutableBufferPointer { x in
            for (s, ids) in sequences.enumerated() {
                for (position, id) in ids.enumerated() {
                    let row = x.baseAddress! + (offsets[s] + position) * h
                    let word = wordEmbeddings.baseAddress! + Int(id) * h
                    let pos = positionEmbeddings.baseAddress! + position * h
                    let type = typeEmbeddings.baseAddress!
                    for j in 0..<h { row[j] = word[j] + pos[j] + type[j] }
                }
            }
            Self.layerNorm(x.baseAddress!, rows: tokens, width: h, weight: embeddingNormWeight.baseAddress!,
                           bias: embeddingNormBias.baseAddress!, eps: eps)
        }

        let scale = 1 / Float(headSize).squareRoot()
        for layer in layers {
            x.withUnsafeMutableBufferPointer { x in
            qkv.withUnsafeMutableBufferPointer { qkv in
            context.withUnsafeMutableBufferPointer { context in
            projected.withUnsafeMutableBufferPointer { projected in
            intermediate.withUnsafeMutableBufferPointer { intermediate in
            scores.withUnsafeMutableBufferPointer { scores in
                let X = x.baseAddress!, QKV = qkv.baseAddress!, C = context.baseAddress!
                let P = projected.baseAddress!, I = intermediate.baseAddress!, S = scores.baseAddress!
                layer.qkvWeight.withUnsafeBufferPointer { w in
                    layer.qkvBias.withUnsafeBufferPointer { b in
                        Self.linear(X, rows: tokens, inWidth: h, weight: w.baseAddress!, bias: b.baseAddress!, outWidth: 3 * h, into: QKV)
                    }
                }
                // Attention, per sequence and head, over the sequence's real length.
                for s in 0..<sequences.count {
                    let n = sequences[s].count
                    guard n > 0 else { continue }
                    let base = offsets[s]
                    for head in 0..<heads {
                        let q = QKV + base * 3 * h + head * headSize
                        let k = q + h
                        let v = q + 2 * h
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(n), Int32(n), Int32(headSize),
                                    scale, q, Int32(3 * h), k, Int32(3 * h), 0, S, Int32(n))
                        VectorMath.softmaxRows(S, rows: n, width: n)
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(n), Int32(headSize), Int32(n),
                                    1, S, Int32(n), v, Int32(3 * h), 0, C + base * h + head * headSize, Int32(h))
                    }
                }
                Self.linear(C, rows: tokens, inWidth: h, weight: layer.outputWeight.baseAddress!, bias: layer.outputBias.baseAddress!,
                            outWidth: h, into: P)
                Self.addLayerNorm(X, P, rows: tokens, width: h, weight: layer.attentionNormWeight.baseAddress!,
                                  bias: layer.attentionNormBias.baseAddress!, eps: eps)
                Self.linear(X, rows: tokens, inWidth: h, weight: layer.intermediateWeight.baseAddress!,
                            bias: layer.intermediateBias.baseAddress!, outWidth: inter, into: I)
                VectorMath.gelu(I, count: tokens * inter)
                Self.linear(I, rows: tokens, inWidth: inter, weight: layer.feedForwardWeight.baseAddress!,
                            bias: layer.feedForwardBias.baseAddress!, outWidth: h, into: P)
                Self.addLayerNorm(X, P, rows: tokens, width: h, weight: layer.outputNormWeight.baseAddress!,
                                  bias: layer.outputNormBias.baseAddress!, eps: eps)
            }}}}}}
        }

        return sequences.indices.map { s in
            let n = sequences[s].count
            var pooled = [Float](repeating: 0, count: h)
            x.withUnsafeBufferPointer { x in
                let rows = pooling == .cls ? 0..<min(1, n) : 0..<n
                for r in rows {
                    let row = x.baseAddress! + (offsets[s] + r) * h
                    for j in 0..<h { pooled[j] += row[j] }
                }
                let count = Float(max(rows.count, 1))
                for j in 0..<h { pooled[j] /= count }
            }
            if normalize {
                let norm = pooled.reduce(0) { $0 + $1 * $1 }.squareRoot()
                if norm > 0 { for j in 0..<h { pooled[j] /= norm } }
            }
            return pooled
        }
    }

    /// out[rows × outWidth] = input[rows × inWidth] · weightᵀ + bias, with weight stored [outWidth × inWidth].
    static func linear(_ input: UnsafePointer<Float>, rows: Int, inWidth: Int, weight: UnsafePointer<Float>,
                       bias: UnsafePointer<Float>, outWidth: Int, into out: UnsafeMutablePointer<Float>) {
        for r in 0..<rows { (out + r * outWidth).update(from: bias, count: outWidth) }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(rows), Int32(outWidth), Int32(inWidth),
                    1, input, Int32(inWidth), weight, Int32(inWidth), 1, out, Int32(outWidth))
    }

    /// x = LayerNorm(x + residual), row by row.
    static func addLayerNorm(_ x: UnsafeMutablePointer<Float>, _ residual: UnsafePointer<Float>, rows: Int, width: Int,
                             weight: UnsafePointer<Float>, bias: UnsafePointer<Float>, eps: Float) {
        for i in 0..<rows * width { x[i] += residual[i] }
        layerNorm(x, rows: rows, width: width, weight: weight, bias: bias, eps: eps)
    }

    static func layerNorm(_ x: UnsafeMutablePointer<Float>, rows: Int, width: Int,
                          weight: UnsafePointer<Float>, bias: UnsafePointer<Float>, eps: Float) {
        for r in 0..<rows {
            let row = x + r * width
            var mean: Float = 0
            for j in 0..<width { mean += row[j] }
            mean /= Float(width)
            var variance: Float = 0
            for j in 0..<width {
                let d = row[j] - mean
                variance += d * d
            }
            variance /= Float(width)
            let inverse = 1 / (variance + eps).squareRoot()
            for j in 0..<width { row[j] = (row[j] - mean) * inverse * weight[j] + bias[j] }
        }
    }
}

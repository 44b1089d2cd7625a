import CKBEncoder
import Dispatch
import Foundation
public import KBCore

/// The BERT transformer: embeddings and LayerNorm, then per layer a fused QKV projection,
/// scaled dot-product attention, output projection with residual and LayerNorm, and a GELU
/// feed-forward with residual and LayerNorm; then pooling and L2 normalisation.
///
/// Sequences are packed without padding: token-wise steps run on one `[tokens × hidden]`
/// matrix, and attention runs per sequence over its real length, so no work is spent on padding.
/// The matrix products use CKBEncoder's packed-weight kernel, whose every output element is the
/// same fused multiply-add chain whatever else is in the pass: a text's vector does not depend on
/// the batch it was embedded in, bit for bit.
///
/// @unchecked Sendable: weights are immutable after `init` (and freed in `deinit`); `encode`
/// writes only into the scratch it is given.
final class BERTEncoder: @unchecked Sendable {
    /// A weight matrix packed for `kb_linear`, or converted for a reduced-precision product on
    /// oneDNN, with its bias.
    /// @unchecked Sendable: the memory it points to is written once, in `init`, and only read after
    /// (oneDNN's primitives may run from several threads at once).
    struct Linear: @unchecked Sendable {
        let packed: UnsafeMutablePointer<Float>?
        let reduced: OpaquePointer?
        let bias: UnsafeMutablePointer<Float>
        let inputs: Int
        let outputs: Int
        let panels: Int
        /// What follows the product and its bias.
        let activation: kb_activation
        /// Whether the result is bf16 (for a bf16 product that reads it), not fp32.
        let writesBF16: Bool
        /// Whether the product is bf16 on oneDNN, so that it can read bf16 input.
        let readsBF16: Bool
        /// Whether the bias may be left to whoever reads the result (attention, LayerNorm): a bf16
        /// product with no activation and an fp32 result, whose sums need no pass of their own.
        var defersBias: Bool { readsBF16 && activation == KB_ACTIVATION_NONE && !writesBF16 }

        /// - Parameters:
        ///   - activation: what follows the product and its bias.
        ///   - bf16Output: bf16 only: the result is written as bf16, for the next bf16 product.
        ///   - inputScales: int8 only: what each input column is multiplied by before
        ///     quantising (the weights' columns are divided by the same), from ``Smoothing``.
        init(weights: [UnsafeBufferPointer<Float>], biases: [UnsafeBufferPointer<Float>], inputs: Int, variant: kb_variant,
             precision: kb_precision, activation: kb_activation = KB_ACTIVATION_NONE, bf16Output: Bool = false,
             inputScales: [Float]? = nil) throws {
            let outputs = biases.reduce(0) { $0 + $1.count }
            var weight = [Float]()
            weight.reserveCapacity(outputs * inputs)
            for w in weights { weight.append(contentsOf: w) }
            if let inputScales {
                for row in 0..<outputs { for column in 0..<inputs { weight[row * inputs + column] /= inputScales[column] } }
            }
            if precision == KB_PRECISION_FP32 {
                let packed = UnsafeMutablePointer<Float>.allocate(capacity: kb_linear_packed_count(variant, outputs, inputs))
                kb_linear_pack(variant, weight, outputs, inputs, packed)
                self.packed = packed
                reduced = nil
            } else {
                var message = [CChar](repeating: 0, count: 256)
                guard let matmul = kb_matmul_create(precision, weight, outputs, inputs, inputScales, activation, bf16Output ? 1 : 0,
                                                    &message, message.count) else {
                    throw KBError(.invalidModel, "The encoder's \(EncoderPrecision(precision).rawValue) products could not be set up: "
                                  + "\(cText(message)). Use --precision fp32.")
                }
                packed = nil
                reduced = matmul
            }
            bias = .allocate(capacity: outputs)
            var offset = 0
            for b in biases {
                (bias + offset).initialize(from: b.baseAddress!, count: b.count)
                offset += b.count
            }
            self.inputs = inputs
            self.outputs = outputs
            self.panels = kb_linear_panels(variant, outputs)
            self.activation = activation
            writesBF16 = precision == KB_PRECISION_BF16 && bf16Output
            readsBF16 = precision == KB_PRECISION_BF16
        }

        /// Bytes of scratch a reduced-precision product needs for `rows` rows (0 in fp32).
        func scratchBytes(rows: Int) -> Int { reduced.map { kb_matmul_scratch_bytes($0, rows) } ?? 0 }

        func free() {
            packed?.deallocate()
            if let reduced { kb_matmul_free(reduced) }
            bias.deallocate()
        }
    }

    struct Layer {
        var qkv: Linear             // query, key and value outputs side by side
        var output: Linear
        var attentionNormWeight: UnsafeBufferPointer<Float>
        var attentionNormBias: UnsafeBufferPointer<Float>
        var intermediate: Linear
        var feedForward: Linear
        var outputNormWeight: UnsafeBufferPointer<Float>
        var outputNormBias: UnsafeBufferPointer<Float>
    }

    let config: ModelFolder.Config
    let pooling: ModelFolder.Pooling
    let normalize: Bool
    /// The instruction set the kernels run with.
    let variant: kb_variant
    /// The linear layers' arithmetic.
    let precision: kb_precision
    /// Whether attention's products run on bf16 (with reduced-precision linear layers, on CPUs
    /// with AVX-512 BF16); fp32 otherwise.
    let bf16Attention: Bool
    private let tensors: SafeTensors
    private let wordEmbeddings: UnsafeBufferPointer<Float>
    private let positionEmbeddings: UnsafeBufferPointer<Float>
    private let typeEmbeddings: UnsafeBufferPointer<Float>
    private let embeddingNormWeight: UnsafeBufferPointer<Float>
    private let embeddingNormBias: UnsafeBufferPointer<Float>
    /// Each layer's weights in the mapped model file, checked against the model's shapes.
    private let weights: [LayerWeights]
    /// The layers' products, set up by `buildLayers()` — once, before any pass.
    private var layers: [Layer] = []

    /// A layer's float32 tensors as the model file holds them.
    private struct LayerWeights: @unchecked Sendable {
        let query, key, value, queryBias, keyBias, valueBias, output, outputBias: UnsafeBufferPointer<Float>
        let attentionNormWeight, attentionNormBias, up, upBias, down, downBias, outputNormWeight, outputNormBias: UnsafeBufferPointer<Float>
    }

    /// - Parameters:
    ///   - variant: the kernels' instruction set; the CPU's best by default (tests compare variants).
    ///   - precision: the linear layers' arithmetic (bf16 and int8 need the CPU's instructions).
    ///   - buildingLayers: false leaves the layers' products to `buildLayers()` (the model file is
    ///     read and checked here either way).
    init(folder: ModelFolder, variant: kb_variant = kb_best_variant(), precision: kb_precision = KB_PRECISION_FP32,
         buildingLayers: Bool = true) throws {
        let file = folder.path + "/model.safetensors"
        guard FileManager.default.fileExists(atPath: file) else {
            throw KBError(.invalidModel, "The model folder \(folder.path) has no model.safetensors. Reinstall the model.")
        }
        guard kb_variant_supported(variant) != 0 else {
            throw KBError(.invalidArgument, "This CPU cannot run the encoder's \(variant) kernels.")
        }
        tensors = try SafeTensors(path: file)
        self.precision = precision
        config = folder.config
        pooling = folder.pooling
        normalize = folder.normalize
        self.variant = variant
        let h = config.hiddenSize, i = config.intermediateSize
        guard config.heads > 0, h % config.heads == 0 else {
            throw KBError(.invalidModel, "The model in \(folder.path) has \(config.heads) attention heads, which do not divide its hidden size \(h).")
        }
        bf16Attention = precision != KB_PRECISION_FP32 && variant == KB_VARIANT_AVX512
            && kb_attention_bf16_supported(h / config.heads) != 0
        // Checkpoints saved from a task model name their encoder's tensors `bert.…` or `roberta.…`.
        let t = tensors
        let prefix = t.tensors["embeddings.word_embeddings.weight"] != nil ? ""
            : ["bert.", "roberta."].first { t.tensors[$0 + "embeddings.word_embeddings.weight"] != nil } ?? ""
        func w(_ name: String, _ shape: [Int]) throws -> UnsafeBufferPointer<Float> { try t.floats(prefix + name, shape: shape) }
        wordEmbeddings = try w("embeddings.word_embeddings.weight", [config.vocabularySize, h])
        positionEmbeddings = try w("embeddings.position_embeddings.weight", [config.maxPositions, h])
        typeEmbeddings = try w("embeddings.token_type_embeddings.weight", [config.typeVocabularySize, h])
        embeddingNormWeight = try w("embeddings.LayerNorm.weight", [h])
        embeddingNormBias = try w("embeddings.LayerNorm.bias", [h])
        weights = try (0..<config.layers).map { n in
            let p = "encoder.layer.\(n)."
            return LayerWeights(
                query: try w(p + "attention.self.query.weight", [h, h]), key: try w(p + "attention.self.key.weight", [h, h]),
                value: try w(p + "attention.self.value.weight", [h, h]),
                queryBias: try w(p + "attention.self.query.bias", [h]), keyBias: try w(p + "attention.self.key.bias", [h]),
                valueBias: try w(p + "attention.self.value.bias", [h]),
                output: try w(p + "attention.output.dense.weight", [h, h]), outputBias: try w(p + "attention.output.dense.bias", [h]),
                attentionNormWeight: try w(p + "attention.output.LayerNorm.weight", [h]),
                attentionNormBias: try w(p + "attention.output.LayerNorm.bias", [h]),
                up: try w(p + "intermediate.dense.weight", [i, h]), upBias: try w(p + "intermediate.dense.bias", [i]),
                down: try w(p + "output.dense.weight", [h, i]), downBias: try w(p + "output.dense.bias", [h]),
                outputNormWeight: try w(p + "output.LayerNorm.weight", [h]), outputNormBias: try w(p + "output.LayerNorm.bias", [h]))
        }
        if buildingLayers { try buildLayers() }
    }

    /// Packs or converts every layer's linear weights for the products (on all cores, a layer
    /// at a time each): the part of loading a model that takes time (~0.4 s for
    /// multilingual-e5-small in bf16 on one core), done once, before the first pass. The only
    /// error left to it is a reduced-precision product oneDNN cannot set up.
    func buildLayers() throws {
        guard layers.isEmpty else { return }
        let h = config.hiddenSize
        let built = ConcurrentSlots<Result<Layer, any Error>>(count: weights.count)
        DispatchQueue.concurrentPerform(iterations: weights.count) { n in
            built.set(n, Result { try self.layer(weights[n], hidden: h) })
        }
        let results = built.values.map { $0! }
        if let failure = results.first(where: { if case .failure = $0 { true } else { false } }) {
            for case .success(let layer) in results {
                for linear in [layer.qkv, layer.output, layer.intermediate, layer.feedForward] { linear.free() }
            }
            _ = try failure.get()
        }
        layers = results.map { try! $0.get() }
        tensors.releasePages()
    }

    /// One layer's products set up from its weights.
    private func layer(_ l: LayerWeights, hidden h: Int) throws -> Layer {
        // int8 where it keeps every reference vector within cosine 0.995 of fp32's: the attention
        // output and the feed-forward expansion, and the feed-forward contraction with its inputs'
        // outliers moved into its weights (`Smoothing`; without it the worst reference text fell
        // to 0.9952). The fused QKV projection stays bf16 (in int8, smoothed or not, the worst
        // reference text fell to 0.993 with the rest).
        let int8Here: (qkv: Bool, output: Bool, up: Bool, down: Bool) = (false, true, true, true)
        func layerPrecision(_ int8Allowed: Bool) -> kb_precision {
            precision == KB_PRECISION_INT8 && !int8Allowed ? KB_PRECISION_BF16 : precision
        }
        let downPrecision = layerPrecision(int8Here.down), upPrecision = layerPrecision(int8Here.up)
        return Layer(
            qkv: try Linear(weights: [l.query, l.key, l.value], biases: [l.queryBias, l.keyBias, l.valueBias], inputs: h, variant: variant,
                            precision: layerPrecision(int8Here.qkv)),
            output: try Linear(weights: [l.output], biases: [l.outputBias], inputs: h, variant: variant, precision: layerPrecision(int8Here.output)),
            attentionNormWeight: l.attentionNormWeight,
            attentionNormBias: l.attentionNormBias,
            // Between two bf16 products, the expansion (with GELU) is handed over in bf16.
            intermediate: try Linear(weights: [l.up], biases: [l.upBias], inputs: h, variant: variant, precision: upPrecision,
                                     activation: KB_ACTIVATION_GELU,
                                     bf16Output: upPrecision == KB_PRECISION_BF16 && downPrecision == KB_PRECISION_BF16),
            feedForward: try Linear(weights: [l.down], biases: [l.downBias], inputs: config.intermediateSize, variant: variant,
                                    precision: downPrecision,
                                    inputScales: downPrecision == KB_PRECISION_INT8
                                        ? Smoothing.afterExpansion(normWeight: l.attentionNormWeight, normBias: l.attentionNormBias,
                                                                   up: l.up, upBias: l.upBias, inputs: h, down: l.down) : nil),
            outputNormWeight: l.outputNormWeight,
            outputNormBias: l.outputNormBias)
    }

    deinit {
        for layer in layers {
            for linear in [layer.qkv, layer.output, layer.intermediate, layer.feedForward] { linear.free() }
        }
    }

    /// Working memory for forward passes, grown as needed and reused: one per thread that runs passes.
    /// Not Sendable: it belongs to one thread at a time.
    final class Scratch {
        private(set) var capacity = 0
        private(set) var x = UnsafeMutablePointer<Float>.allocate(capacity: 0)
        private(set) var qkv = UnsafeMutablePointer<Float>.allocate(capacity: 0)
        private(set) var context = UnsafeMutablePointer<Float>.allocate(capacity: 0)
        private(set) var projected = UnsafeMutablePointer<Float>.allocate(capacity: 0)
        private(set) var intermediate = UnsafeMutablePointer<Float>.allocate(capacity: 0)
        /// The hidden states rounded to bf16 as LayerNorm writes them, for the bf16 product that reads them next.
        private(set) var hiddenBF16 = UnsafeMutablePointer<UInt16>.allocate(capacity: 0)
        private(set) var attention: [UnsafeMutablePointer<Float>] = []
        private var attentionCapacity = 0
        /// Working memory of the reduced-precision products (converted inputs, oneDNN's own).
        private(set) var products = UnsafeMutableRawPointer.allocate(byteCount: 0, alignment: 64)
        private var productsCapacity = 0

        /// Makes room for `bytes` of product scratch.
        func reserve(productBytes bytes: Int) {
            guard bytes > productsCapacity else { return }
            products.deallocate()
            productsCapacity = max(bytes, productsCapacity + productsCapacity / 2)
            products = .allocate(byteCount: productsCapacity, alignment: 64)
        }

        /// Makes room for `tokens` tokens, attention over `longest` tokens on `threads` threads.
        func reserve(tokens: Int, hidden: Int, intermediateSize: Int, attention floats: Int, threads: Int) {
            if tokens > capacity {
                for buffer in [x, qkv, context, projected, intermediate] { buffer.deallocate() }
                hiddenBF16.deallocate()
                // Grow by at least half again, so that a stream of slightly longer passes does not reallocate each time.
                let grown = max(tokens, capacity + capacity / 2)
                hiddenBF16 = .allocate(capacity: grown * hidden)
                x = .allocate(capacity: grown * hidden)
                qkv = .allocate(capacity: grown * 3 * hidden)
                context = .allocate(capacity: grown * hidden)
                projected = .allocate(capacity: grown * hidden)
                intermediate = .allocate(capacity: grown * intermediateSize)
                capacity = grown
            }
            if floats > attentionCapacity || attention.count < threads {
                for buffer in attention { buffer.deallocate() }
                attentionCapacity = max(floats, attentionCapacity)
                attention = (0..<threads).map { _ in .allocate(capacity: attentionCapacity) }
            }
        }

        /// Gives back what a large pass grew (over `tokens` tokens' worth, or attention or product
        /// memory over `bytes` each): a worker that goes idle after an upload's 2,048-token passes
        /// keeps ~40 MB otherwise (~100 MB with 8,192-token passes). The next larger pass grows it again.
        func shrink(keepingTokens tokens: Int, bytes: Int) {
            let before = capacity + attentionCapacity + productsCapacity
            defer {
                // Freed blocks of a few MB stay in the allocator's arenas: handed back to the kernel.
                if capacity + attentionCapacity + productsCapacity < before { kb_release_free_memory() }
            }
            if capacity > tokens {
                for buffer in [x, qkv, context, projected, intermediate] {
                    buffer.deallocate()
                }
                x = .allocate(capacity: 0)
                qkv = .allocate(capacity: 0)
                context = .allocate(capacity: 0)
                projected = .allocate(capacity: 0)
                intermediate = .allocate(capacity: 0)
                hiddenBF16.deallocate()
                hiddenBF16 = .allocate(capacity: 0)
                capacity = 0
            }
            if attentionCapacity * 4 > bytes {
                for buffer in attention { buffer.deallocate() }
                attention = []
                attentionCapacity = 0
            }
            if productsCapacity > bytes {
                products.deallocate()
                products = .allocate(byteCount: 0, alignment: 64)
                productsCapacity = 0
            }
        }

        deinit {
            for buffer in [x, qkv, context, projected, intermediate] + attention { buffer.deallocate() }
            hiddenBF16.deallocate()
            products.deallocate()
        }
    }

    /// Pooled (and, if the model says so, normalised) vectors for token-id sequences, in order,
    /// with scratch of its own.
    func encode(_ sequences: [[Int32]]) -> [[Float]] {
        var profile = EncoderProfile.disabled
        return encode(sequences, scratch: Scratch(), threads: 1, profile: &profile)
    }

    /// One forward pass over `sequences` in `scratch`, each matrix product and the attention
    /// split across `threads` threads (the calling one included), timing each stage into `profile`
    /// when it is enabled. The result is the same, bit for bit, for any `threads` and any batch.
    func encode(_ sequences: [[Int32]], scratch: Scratch, threads: Int, profile: inout EncoderProfile) -> [[Float]] {
        precondition(layers.count == weights.count, "a forward pass before the encoder's layers were built")
        let h = config.hiddenSize, inter = config.intermediateSize
        let heads = config.heads, headSize = h / heads
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(sequences.count + 1)
        for sequence in sequences { offsets.append(offsets.last! + Int32(sequence.count)) }
        let tokens = Int(offsets.last!)
        guard tokens > 0 else { return sequences.map { _ in Array(repeating: 0, count: h) } }
        let longest = sequences.map(\.count).max() ?? 0
        let threads = max(1, threads)
        scratch.reserve(tokens: tokens, hidden: h, intermediateSize: inter,
                        attention: kb_attention_scratch_count(longest, headSize), threads: threads)
        if precision != KB_PRECISION_FP32, let layer = layers.first {
            scratch.reserve(productBytes: [layer.qkv, layer.output, layer.intermediate, layer.feedForward]
                .map { $0.scratchBytes(rows: tokens) }.max() ?? 0)
        }
        let X = scratch.x, QKV = scratch.qkv, C = scratch.context, P = scratch.projected, I = scratch.intermediate
        // LayerNorm writes the hidden states in bf16 too for a bf16 product that reads them next
        // (query/key/value; the feed-forward expansion unless it is int8): no conversion pass.
        let XB = scratch.hiddenBF16
        func copyFor(_ linear: Linear) -> UnsafeMutablePointer<UInt16>? {
            linear.readsBF16 && variant == KB_VARIANT_AVX512 && h % 16 == 0 ? XB : nil
        }
        func half(_ pointer: UnsafeMutablePointer<UInt16>?) -> UnsafeRawPointer? { pointer.map { UnsafeRawPointer($0) } }
        let eps = config.layerNormEpsilon

        // Embeddings: word + position (from the model's offset) + token type 0, then LayerNorm.
        profile.time(.embeddings) {
            for (s, ids) in sequences.enumerated() {
                for (position, id) in ids.enumerated() {
                    let row = X + (Int(offsets[s]) + position) * h
                    let word = wordEmbeddings.baseAddress! + Int(id) * h
                    let pos = positionEmbeddings.baseAddress! + (position + config.positionOffset) * h
                    let type = typeEmbeddings.baseAddress!
                    for j in 0..<h { row[j] = word[j] + pos[j] + type[j] }
                }
            }
            addLayerNorm(X, nil, rows: tokens, width: h, weight: embeddingNormWeight.baseAddress!, bias: embeddingNormBias.baseAddress!, eps: eps,
                         copy: layers.first.flatMap { copyFor($0.qkv) })
        }

        let scale = 1 / Float(headSize).squareRoot()
        let items = sequences.count * heads
        for (number, layer) in layers.enumerated() {
            // The query/key/value bias is added by bf16 attention as it reads them.
            let qkvBias = bf16Attention && layer.qkv.defersBias ? UnsafePointer(layer.qkv.bias) : nil
            profile.time(.qkv) {
                apply(layer.qkv, X, bf16: half(copyFor(layer.qkv)), addingBias: qkvBias == nil, rows: tokens, into: QKV, scratch: scratch,
                      threads: threads)
            }
            profile.time(.attention) {
                offsets.withUnsafeBufferPointer { offsets in
                    let parts = min(threads, items)
                    // A bf16 output projection reads the context in bf16, written so by attention.
                    let (variant, bf16, halfOut) = (variant, bf16Attention, bf16Attention && layer.output.readsBF16)
                    let bias = SharedBias(pointer: qkvBias)
                    @Sendable func attend(_ qkv: UnsafePointer<Float>, _ offsets: UnsafePointer<Int32>, _ out: UnsafeMutablePointer<Float>,
                                _ scratch: UnsafeMutablePointer<Float>, _ items: Range<Int>) {
                        if bf16 {
                            let half = halfOut ? UnsafeMutableRawPointer(out).assumingMemoryBound(to: UInt16.self) : nil
                            kb_attention_bf16(qkv, bias.pointer, offsets, h, heads, scale, out, half, scratch, items.lowerBound, items.upperBound)
                        } else {
                            kb_attention(variant, qkv, offsets, h, heads, scale, out, scratch, items.lowerBound, items.upperBound)
                        }
                    }
                    if parts <= 1 {
                        attend(QKV, offsets.baseAddress!, C, scratch.attention[0], 0..<items)
                        return
                    }
                    let shared = SharedPointers(input: QKV, output: C, offsets: offsets.baseAddress!, attention: scratch.attention)
                    DispatchQueue.concurrentPerform(iterations: parts) { part in
                        attend(shared.input, shared.offsets!, shared.output, shared.attention[part],
                               items * part / parts..<items * (part + 1) / parts)
                    }
                }
            }
            // A bf16 output projection's and contraction's bias is added by the LayerNorm that reads them.
            let outputBias = layer.output.defersBias ? UnsafePointer(layer.output.bias) : nil
            let downBias = layer.feedForward.defersBias ? UnsafePointer(layer.feedForward.bias) : nil
            profile.time(.attentionOutput) {
                apply(layer.output, C, bf16: bf16Attention && layer.output.readsBF16 ? UnsafeRawPointer(C) : nil, addingBias: outputBias == nil,
                      rows: tokens, into: P, scratch: scratch, threads: threads)
                addLayerNorm(X, P, residualBias: outputBias, rows: tokens, width: h, weight: layer.attentionNormWeight.baseAddress!,
                             bias: layer.attentionNormBias.baseAddress!, eps: eps, copy: copyFor(layer.intermediate))
            }
            profile.time(.feedForwardUp) {
                apply(layer.intermediate, X, bf16: half(copyFor(layer.intermediate)), rows: tokens, into: I, scratch: scratch, threads: threads)
            }
            profile.time(.feedForwardDown) {
                apply(layer.feedForward, I, bf16: layer.intermediate.writesBF16 ? UnsafeRawPointer(I) : nil, addingBias: downBias == nil,
                      rows: tokens, into: P, scratch: scratch, threads: threads)
                addLayerNorm(X, P, residualBias: downBias, rows: tokens, width: h, weight: layer.outputNormWeight.baseAddress!,
                             bias: layer.outputNormBias.baseAddress!, eps: eps,
                             copy: number + 1 < layers.count ? copyFor(layers[number + 1].qkv) : nil)
            }
        }

        return profile.time(.pooling) {
            sequences.indices.map { s in
                let n = sequences[s].count
                var pooled = [Float](repeating: 0, count: h)
                let rows = pooling == .cls ? 0..<min(1, n) : 0..<n
                for r in rows {
                    let row = X + (Int(offsets[s]) + r) * h
                    for j in 0..<h { pooled[j] += row[j] }
                }
                let count = Float(max(rows.count, 1))
                for j in 0..<h { pooled[j] /= count }
                if normalize {
                    let norm = pooled.reduce(0) { $0 + $1 * $1 }.squareRoot()
                    if norm > 0 { for j in 0..<h { pooled[j] /= norm } }
                }
                return pooled
            }
        }
    }

    /// out[rows × outputs] = activation(input[rows × inputs] · weightᵀ + bias): kb's fp32 kernel
    /// with its output panels split across `threads`, or oneDNN's reduced-precision product on
    /// `threads` threads of its own. `bf16`: the same input already in bf16 (a product that
    /// `readsBF16` reads it instead), from LayerNorm or a product that `writesBF16` — as `out` is
    /// for such a product.
    /// `addingBias` false leaves a `defersBias` product's bias to its reader.
    private func apply(_ linear: Linear, _ input: UnsafeMutablePointer<Float>, bf16: UnsafeRawPointer? = nil, addingBias: Bool = true,
                       rows: Int, into out: UnsafeMutablePointer<Float>, scratch: Scratch, threads: Int) {
        let activation = linear.activation
        if let reduced = linear.reduced {
            var message = [CChar](repeating: 0, count: 256)
            let half = linear.readsBF16 ? bf16 : nil
            precondition(addingBias || linear.defersBias, "only a product that defers its bias may leave it out")
            guard kb_matmul_run(reduced, half ?? UnsafeRawPointer(input), half == nil ? 0 : 1, rows, addingBias ? linear.bias : nil, out,
                                scratch.products,
                                Int32(threads), &message, message.count) != 0 else {
                // Only an invalid argument or exhausted memory makes an already-built product fail.
                fatalError("oneDNN product failed: \(cText(message))")
            }
            return
        }
        guard let packed = linear.packed else { return }
        let parts = min(threads, linear.panels)
        guard parts > 1 else {
            kb_linear(variant, input, rows, linear.inputs, packed, linear.bias, linear.outputs, out, 0, linear.panels, activation)
            return
        }
        let shared = SharedPointers(input: input, output: out, weights: packed)
        let variant = variant
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            kb_linear(variant, shared.input, rows, linear.inputs, shared.weights, linear.bias, linear.outputs, shared.output,
                      linear.panels * part / parts, linear.panels * (part + 1) / parts, activation)
        }
    }

    /// x = LayerNorm(x + (residual + residualBias)) row by row (no residual when nil, no bias
    /// when nil): CKBEncoder's vectorised kernel when the width is a multiple of 16, else the same
    /// arithmetic here. `copy`: the result rounded to bf16 there too (AVX-512 BF16, width a multiple of 16).
    private func addLayerNorm(_ x: UnsafeMutablePointer<Float>, _ residual: UnsafePointer<Float>?, residualBias: UnsafePointer<Float>? = nil,
                              rows: Int, width: Int, weight: UnsafePointer<Float>, bias: UnsafePointer<Float>, eps: Float,
                              copy: UnsafeMutablePointer<UInt16>? = nil) {
        if let copy {
            kb_add_layer_norm_bf16(x, residual, residualBias, rows, width, weight, bias, eps, copy)
            return
        }
        if width % 16 == 0 {
            kb_add_layer_norm(variant, x, residual, residualBias, rows, width, weight, bias, eps)
            return
        }
        for r in 0..<rows {
            let row = x + r * width
            if let residual {
                if let residualBias { for j in 0..<width { row[j] += residual[r * width + j] + residualBias[j] } }
                else { for j in 0..<width { row[j] += residual[r * width + j] } }
            }
            var mean: Float = 0
            for j in 0..<width { mean += row[j] }
            mean /= Float(width)
            var variance: Float = 0
            for j in 0..<width { variance += (row[j] - mean) * (row[j] - mean) }
            let inverse = 1 / (variance / Float(width) + eps).squareRoot()
            for j in 0..<width { row[j] = (row[j] - mean) * inverse * weight[j] + bias[j] }
        }
    }
}

/// The text of a NUL-terminated C message buffer.
private func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A bias the threads of one step of a pass read (nil for none).
/// @unchecked Sendable: the weights it points to are only read after `buildLayers`.
private struct SharedBias: @unchecked Sendable {
    let pointer: UnsafePointer<Float>?
}

/// Pointers handed to the threads of one step of a pass.
/// @unchecked Sendable: during `DispatchQueue.concurrentPerform`, every thread reads `input`,
/// `weights` and `offsets`, writes only its own part of `output` and only its own `attention` buffer.
private struct SharedPointers: @unchecked Sendable {
    let input: UnsafeMutablePointer<Float>
    let output: UnsafeMutablePointer<Float>
    var offsets: UnsafePointer<Int32>? = nil
    var weights: UnsafeMutablePointer<Float>? = nil
    var attention: [UnsafeMutablePointer<Float>] = []
}

extension EncoderPrecision {
    /// The concrete precision named by a kernel setting.
    init(_ precision: kb_precision) {
        switch precision {
        case KB_PRECISION_BF16: self = .bf16
        case KB_PRECISION_INT8: self = .int8
        default: self = .fp32
        }
    }

    /// What `auto` embeds a new index in on this CPU: int8 where it has AVX-512 VNNI (its
    /// passages take ×0.55–0.86 of bf16's time and rank within 0.005 nDCG@10 of them on every
    /// set `scripts/eval/eval-int8-passages.sh` runs), else bf16 where it has AVX-512 BF16, else fp32.
    public static var newIndexDefault: EncoderPrecision {
        EncoderPrecision.int8.runnable
    }

    /// This precision where the CPU runs it, else the nearest one it does (int8, then bf16, then
    /// fp32): an index made on a CPU with VNNI is still searched on one without.
    public var runnable: EncoderPrecision {
        switch self {
        case .int8 where kb_precision_supported(KB_PRECISION_INT8) == 0: return EncoderPrecision.bf16.runnable
        case .bf16 where kb_precision_supported(KB_PRECISION_BF16) == 0: return .fp32
        default: return self
        }
    }

    /// What runs on this CPU: `auto` is bf16 where the CPU has AVX-512 BF16, else fp32 (for a
    /// model outside any index; `BERTEmbedder.installed` resolves `auto` by the index); bf16 or
    /// int8 asked of a CPU without their instructions is an error that says so.
    func resolved() throws -> kb_precision {
        switch self {
        case .auto: return kb_precision_supported(KB_PRECISION_BF16) != 0 ? KB_PRECISION_BF16 : KB_PRECISION_FP32
        case .fp32: return KB_PRECISION_FP32
        case .bf16, .int8:
            let precision = self == .bf16 ? KB_PRECISION_BF16 : KB_PRECISION_INT8
            guard kb_precision_supported(precision) != 0 else {
                let needs = self == .bf16 ? "AVX-512 BF16" : "AVX-512 VNNI"
                throw KBError(.invalidArgument, "This CPU has no \(needs) instructions for --precision \(rawValue). Use --precision auto or fp32.")
            }
            return precision
        }
    }
}

/// Per-column scales that move an int8 product's activation outliers into its weights
/// (SmoothQuant's migration): input column j is multiplied by uⱼ = wⱼ^(1−α) / aⱼ^α before each row
/// is quantised and the weights' column j divided by it, where wⱼ is the column's largest weight
/// and aⱼ an estimate, from the weights alone, of how large input j gets. Only the ratios between
/// columns matter (each row is quantised with its own scale).
enum Smoothing {
    /// For the feed-forward contraction, reading GELU(u) with u = W·(γ·x̂ + β) + b: uⱼ's mean
    /// bⱼ + Σᵢ Wⱼᵢβᵢ and spread √(Σᵢ (Wⱼᵢγᵢ)²), aⱼ = |mean| + 3·spread.
    static func afterExpansion(normWeight: UnsafeBufferPointer<Float>, normBias: UnsafeBufferPointer<Float>,
                               up: UnsafeBufferPointer<Float>, upBias: UnsafeBufferPointer<Float>, inputs: Int,
                               down: UnsafeBufferPointer<Float>) -> [Float] {
        let expanded = upBias.count
        let reach = (0..<expanded).map { j -> Float in
            var mean = upBias[j], spread: Float = 0
            for i in 0..<inputs {
                let weight = up[j * inputs + i]
                mean += weight * normBias[i]
                spread += (weight * normWeight[i]) * (weight * normWeight[i])
            }
            return abs(mean) + 3 * spread.squareRoot()
        }
        return scales(reach: reach, weights: [down], inputs: expanded, alpha: 0.75)
    }

    private static func scales(reach: [Float], weights: [UnsafeBufferPointer<Float>], inputs: Int, alpha: Float) -> [Float] {
        var largest = [Float](repeating: 0, count: inputs)
        for matrix in weights {
            for row in 0..<(matrix.count / inputs) {
                for column in 0..<inputs { largest[column] = max(largest[column], abs(matrix[row * inputs + column])) }
            }
        }
        let typical = reach.reduce(0, +) / Float(max(reach.count, 1))
        return (0..<inputs).map { j in
            let a = max(reach[j], typical * 1e-3), w = max(largest[j], 1e-12)
            return Float(pow(Double(w), Double(1 - alpha)) / pow(Double(a), Double(alpha)))
        }
    }
}

import Foundation

/// Where a forward pass spends its time, stage by stage, summed over layers.
///
/// ```swift
/// var profile = EncoderProfile()
/// _ = embedder.encodeProfiled(ids, profile: &profile)
/// print(profile.milliseconds(.attention))
/// ```
public struct EncoderProfile: Sendable {
    public enum Stage: String, CaseIterable, Sendable {
        /// Word, position and type embeddings, then LayerNorm.
        case embeddings
        /// The fused query/key/value projection.
        case qkv
        /// Scores, softmax and the weighted sum of values, every head.
        case attention
        /// Attention output projection, residual and LayerNorm.
        case attentionOutput
        /// Feed-forward expansion (the first linear layer) with its GELU.
        case feedForwardUp
        /// Feed-forward contraction, residual and LayerNorm.
        case feedForwardDown
        /// Mean or CLS pooling and L2 normalisation.
        case pooling
    }

    /// Nanoseconds per stage.
    public private(set) var nanoseconds: [Stage: UInt64] = [:]
    /// Whether stages are timed at all (false costs nothing).
    public let enabled: Bool

    public init(enabled: Bool = true) { self.enabled = enabled }

    static let disabled = EncoderProfile(enabled: false)

    public func milliseconds(_ stage: Stage) -> Double { Double(nanoseconds[stage] ?? 0) / 1e6 }

    public var totalMilliseconds: Double { Double(nanoseconds.values.reduce(0, +)) / 1e6 }

    /// Times `body` as `stage` when enabled.
    @inline(__always)
    mutating func time<T>(_ stage: Stage, _ body: () -> T) -> T {
        guard enabled else { return body() }
        let start = DispatchTime.now().uptimeNanoseconds
        let result = body()
        nanoseconds[stage, default: 0] += DispatchTime.now().uptimeNanoseconds - start
        return result
    }
}

import Foundation
public import KBCore
public import KBEval
import KBStore
public import KBIngest

/// How `kb eval` runs.
public struct EvaluationOptions: Sendable {
    /// The rankings to evaluate. The default is hybrid.
    public var modes: [SearchMode] = [.hybrid]
    /// Documents retrieved per query (-k). The default is 100.
    public var depth = 100
    /// Chunk documents (hits collapse to documents by best snippet) instead of one snippet per
    /// document. The default is false.
    public var chunk = false
    public var chunker: Chunker = try! Chunker()
    /// How queries with a `history` are searched: each mode is reported once per way (the turn
    /// alone as `MODE`, the turns concatenated as `MODE+concat`, kb's way as `MODE+history`).
    /// Nil means all three for a conversational dataset and the turn alone otherwise.
    public var histories: [HistoryUse]?

    public init() {}

    /// A mode's name in the report, with how the history was used.
    public static func label(_ mode: SearchMode, _ use: HistoryUse) -> String {
        switch use {
        case .turn: mode.rawValue
        case .concatenated: mode.rawValue + "+concat"
        case .fused: mode.rawValue + "+history"
        }
    }
}

/// A finished evaluation: the report and every ranking (for run files).
public struct EvaluationRun: Sendable {
    public var report: EvaluationReport
    /// mode's label (`EvaluationOptions.label`) → query id → ranked documents with scores.
    public var rankings: [String: [String: [Metrics.Scored]]]
}


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
    /// Candidates each ranking contributes before fusion (`SearchQuery.candidates`); nil means the
    /// retrieval profile's, what a user's search fuses over. A deeper ranking for `depth`
    /// continues below the fused candidates and does not change them.
    public var candidates: Int?
    /// Chunk documents (hits collapse to documents by best snippet) instead of one snippet per
    /// document. The default is false.
    public var chunk = false
    public var chunker: Chunker = try! Chunker()
    /// How queries with a `history` are searched: each mode is reported once per way (the turn
    /// alone as `MODE`, the turns concatenated as `MODE+concat`, kb's way as `MODE+history`).
    /// Nil means all three for a conversational dataset and the turn alone otherwise.
    public var histories: [HistoryUse]?
    /// How hybrid rankings are fused: each is reported once per method (adaptive as `hybrid`,
    /// reciprocal rank as `hybrid-rrf`). The default is adaptive alone.
    public var fusions: [FusionMethod] = [.adaptive]
    /// Report each ranking twice, without and with the retriever's second stage (a re-ranker;
    /// `+rerank` in the label). The default is false: as the retriever runs.
    public var bothStages = false

    public init() {}

    /// A mode's name in the report, with how the history was used and, for hybrid search fused
    /// other than adaptively, the fusion.
    public static func label(_ mode: SearchMode, _ use: HistoryUse, fusion: FusionMethod = .adaptive, secondStage: Bool = false) -> String {
        let name = mode == .hybrid && fusion != .adaptive ? mode.rawValue + "-" + fusion.rawValue : mode.rawValue
        let history = switch use {
        case .turn: ""
        case .concatenated: "+concat"
        case .fused: "+history"
        }
        return name + history + (secondStage ? "+rerank" : "")
    }
}

/// A finished evaluation: the report and every ranking (for run files).
public struct EvaluationRun: Sendable {
    public var report: EvaluationReport
    /// mode's label (`EvaluationOptions.label`) → query id → ranked documents with scores.
    public var rankings: [String: [String: [Metrics.Scored]]]
}


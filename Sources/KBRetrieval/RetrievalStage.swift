import KBCore

/// A candidate as the asynchronous stage sees it: the snippet, its score so far, where it comes
/// from, its text and, from a hybrid search, what each ranking said of it.
public struct RetrievalCandidate: Sendable, Hashable {
    public var snippetID: Int64
    /// The score the ranking gave it (higher is better); a stage may replace it.
    public var score: Double
    public var sourcePath: String
    public var text: String
    /// Each ranking's view of it, when a hybrid search fused adaptively.
    public var signals: FusionSignals?

    public init(snippetID: Int64, score: Double, sourcePath: String, text: String, signals: FusionSignals? = nil) {
        self.snippetID = snippetID
        self.score = score
        self.sourcePath = sourcePath
        self.text = text
        self.signals = signals
    }
}

/// What the two rankings of a hybrid search said of one candidate, as adaptive fusion saw it.
public struct FusionSignals: Sendable, Hashable {
    /// The keyword ranking's score scaled to 0…1 (0 when it did not find it), and its rank.
    public var keyword: Double
    public var keywordRank: Int?
    /// The vector ranking's score scaled to 0…1 (0 when it did not find it), and its rank.
    public var vector: Double
    public var vectorRank: Int?
    /// The query's keyword share (`Ranking.adaptiveFusion`).
    public var keywordShare: Double

    public init(keyword: Double, keywordRank: Int?, vector: Double, vectorRank: Int?, keywordShare: Double) {
        self.keyword = keyword
        self.keywordRank = keywordRank
        self.vector = vector
        self.vectorRank = vectorRank
        self.keywordShare = keywordShare
    }
}

/// The one step of retrieval that may wait: it runs after the ranking's snapshot has closed and
/// before the hits are read, on each ranked list (a search's, a recall's, a bot's knowledge and
/// its memories), and may reorder, rescore or drop candidates — never add one. A re-ranker that
/// calls a model, or a rewriter, sits here. When it fails, the answer keeps the ranking before it
/// and says so (`degraded`).
///
/// ```swift
/// struct Reversed: RetrievalStage {
///     let name = "reversed"
///     func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] {
///         candidates.reversed()
///     }
/// }
/// kb.useRetrievalStage(Reversed())
/// ```
public protocol RetrievalStage: Sendable {
    /// How answers and errors name the stage.
    var name: String { get }
    /// True for a stage that leaves every list as it is: the hits are then read in the ranking's
    /// own snapshot. The default is false.
    var isPassThrough: Bool { get }
    /// How many candidates of each list the stage wants to see (at least the list's hits); nil
    /// takes `RetrievalProfile.stageCandidates`. The default is nil.
    var candidateDepth: Int? { get }
    /// The list in its new order (best first), for the turn or query `query`.
    func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate]
}

extension RetrievalStage {
    public var isPassThrough: Bool { false }
    public var candidateDepth: Int? { nil }
}

/// The stage kb runs by default: none. Answers are exactly the ranking's.
public struct PassThroughStage: RetrievalStage {
    public let name = "none"
    public var isPassThrough: Bool { true }

    public init() {}

    public func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] { candidates }
}

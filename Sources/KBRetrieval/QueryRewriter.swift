public import KBCore

/// A step that may rewrite a conversation's turn before retrieval plans it: a follow-up ("And
/// when does it come back?") as a standalone question, and a few expansions. Its queries are
/// fused with kb's own plan (`ConversationPlan`), never weighing more than the plan's heaviest
/// query; when it fails, the search runs without it and says why (`degraded`).
///
/// ```swift
/// struct Standalone: QueryRewriter {
///     let name = "standalone"
///     func rewrite(_ turn: String, history: [ConversationTurn]) async throws -> [String] { ["When does Saturn return?"] }
/// }
/// kb.useQueryRewriter(Standalone())
/// ```
public protocol QueryRewriter: Sendable {
    /// How answers and errors name it.
    var name: String { get }
    /// Queries for `turn` after `history` (oldest first): the standalone question first, then
    /// expansions. kb keeps at most `QueryRewrites.most`, each cut to `QueryRewrites.characters`.
    func rewrite(_ turn: String, history: [ConversationTurn]) async throws -> [String]
}

/// How rewritten queries join a plan.
public enum QueryRewrites {
    /// Rewritten queries kept.
    public static let most = 3
    /// Characters kept of each.
    public static let characters = 1000
    /// Each rewritten query's weight, as a share of the plan's heaviest query: the standalone
    /// question 0.75, expansions 0.5.
    public static let shares = [0.75, 0.5, 0.5]

    /// `plan` with `rewrites` added (empty, repeated or the turn's own text dropped).
    public static func plan(_ plan: [PlannedQuery], adding rewrites: [String]) -> [PlannedQuery] {
        let heaviest = plan.map(\.weight).max() ?? 1
        var seen = Set(plan.map { $0.text.lowercased() })
        var added: [PlannedQuery] = []
        for rewrite in rewrites {
            let text = String(rewrite.trimmingCharacters(in: .whitespacesAndNewlines).prefix(characters))
            guard !text.isEmpty, added.count < most, seen.insert(text.lowercased()).inserted else { continue }
            added.append(PlannedQuery(text, weight: heaviest * shares[added.count]))
        }
        return plan + added
    }
}

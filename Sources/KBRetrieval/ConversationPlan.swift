import Foundation
public import KBCore

/// The queries a conversational search runs for a turn, with their weights for reciprocal rank
/// fusion. No language model: a follow-up ("And when does it come back?") usually names its
/// subject in an earlier user turn, so kb ranks the turn alone and the turn together with each
/// of the last `depth` user turns (each with the start of the answer it got), and fuses the
/// rankings (reciprocal rank fusion with k = `fusionK`). The turn alone always weighs 1; a pairing with an earlier turn weighs `pointing` (4)
/// when the turn points back (a pronoun or an opening such as "and", "what about", or three words
/// or fewer) and `standing` (0.25) when it reads as a question of its own, halved for each turn
/// further back. A question that changes the subject keeps its own ranking first: the pairings
/// carry its words too, and weigh a quarter of it.
///
/// ```swift
/// let plan = ConversationPlan.queries(turn: "And when does it come back?",
///                                     history: [ConversationTurn(.user, "What does Saturn stand for?")], use: .fused)
/// // [("And when does it come back?", 1), ("What does Saturn stand for?\nAnd when does it come back?", 4)]
/// ```
public enum ConversationPlan {
    /// How many earlier user turns are paired with the turn.
    public static let depth = 2
    /// The weight of a pairing when the turn points back, and when it stands alone.
    /// Chosen on the project's conversational set (evaluation/conversations; the README has the
    /// sweep): a follow-up's own words are a weak query, so the pairing leads.
    public static let pointing = 4.0
    public static let standing = 0.25
    /// The k of the reciprocal rank fusion of the planned queries' rankings: small, so that the
    /// top of the weighted rankings decides (k = 60, as within one hybrid search, lets a document
    /// ranked fifth by the turn and second by the pairing beat the pairing's first).
    public static let fusionK = 10.0
    /// How much of an assistant's answer goes into a pairing, in characters.
    public static let answerCharacters = 200

    public static func queries(turn: String, history: [ConversationTurn], use: HistoryUse) -> [PlannedQuery] {
        let asked = history.filter { $0.role == .user && !$0.content.allSatisfy(\.isWhitespace) }
        switch use {
        case .turn:
            return [PlannedQuery(turn, weight: 1)]
        case .concatenated:
            return [PlannedQuery((asked.map(\.content) + [turn]).joined(separator: "\n"), weight: 1)]
        case .fused:
            var plan = [PlannedQuery(turn, weight: 1)]
            let base = pointsBack(turn) ? pointing : standing
            var age = 0
            for (index, earlier) in history.enumerated().reversed() where earlier.role == .user && !earlier.content.allSatisfy(\.isWhitespace) {
                guard age < depth else { break }
                var text = earlier.content
                if index + 1 < history.count, history[index + 1].role == .assistant {
                    text += "\n" + String(history[index + 1].content.prefix(answerCharacters))
                }
                plan.append(PlannedQuery(text + "\n" + turn, weight: base * pow(0.5, Double(age))))
                age += 1
            }
            return plan
        }
    }

    /// Whether a turn reads as depending on what came before: it has a pronoun or a
    /// demonstrative, opens the way follow-ups do, or is three words or fewer. English and
    /// Ukrainian word lists; other languages fall back to the length test.
    public static func pointsBack(_ turn: String) -> Bool {
        let words = turn.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "'" && $0 != "’" }.map(String.init)
        if words.count <= 3 { return true }
        if let first = words.first, openers.contains(first) { return true }
        if words.count >= 2, openerPairs.contains(words[0] + " " + words[1]) { return true }
        return words.contains { referring.contains($0) }
    }

    static let openers: Set<String> = ["and", "also", "so", "then", "but", "or", "а", "і", "й", "та", "то", "ну"]
    static let openerPairs: Set<String> = ["what about", "how about", "and what", "what else", "а як", "а що", "і як", "і що"]
    static let referring: Set<String> = [
        "it", "its", "it's", "itself", "this", "these", "those", "they", "them", "their", "theirs", "there", "he", "him", "his",
        "she", "her", "one", "ones", "same", "too", "else", "again", "that's", "such",
        "він", "вона", "воно", "вони", "його", "її", "їх", "їхній", "нього", "неї", "ним", "нею", "ними", "це", "цей", "ця", "ці",
        "цього", "цієї", "цим", "той", "те", "ті", "там", "тоді", "теж", "також", "такий", "така", "таке",
    ]
}

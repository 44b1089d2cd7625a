/// One earlier turn of a conversation, as a chat service keeps it.
public struct ConversationTurn: Sendable, Hashable, Codable {
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        case user, assistant
    }

    public var role: Role
    public var content: String

    public init(_ role: Role, _ content: String) {
        self.role = role
        self.content = content
    }
}

/// How a search uses the conversation before the turn it answers.
public enum HistoryUse: String, Sendable, Hashable, Codable, CaseIterable {
    /// The turn alone; the history is not read.
    case turn
    /// The user's turns, oldest first, and the turn joined into one query.
    case concatenated
    /// kb's way (`ConversationPlan`): the turn ranked alone and with each recent user turn,
    /// the rankings fused with weights that fall with age and rise when the turn points back.
    case fused
}

/// One query a conversational search ran, with its weight in the fusion.
public struct PlannedQuery: Sendable, Hashable, Codable {
    public var text: String
    public var weight: Double

    public init(_ text: String, weight: Double) {
        self.text = text
        self.weight = weight
    }
}

public import Foundation
/// One earlier turn of a conversation, as a chat service keeps it.
public struct ConversationTurn: Sendable, Hashable, Codable {
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        case user, assistant
    }

    public var role: Role
    public var content: String
    /// When it was said (ISO 8601 in JSON): relative dates in it ("yesterday", "next Thursday")
    /// are read against this time. The default is nil (now).
    public var time: Date?

    public init(_ role: Role, _ content: String, time: Date? = nil) {
        self.role = role
        self.content = content
        self.time = time
    }

    enum CodingKeys: String, CodingKey { case role, content, time }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        role = try container.decode(Role.self, forKey: .role)
        content = try container.decode(String.self, forKey: .content)
        time = try container.decodeIfPresent(String.self, forKey: .time).map { try TimeText.parse($0, name: "time") }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(role, forKey: .role)
        try container.encode(content, forKey: .content)
        try container.encodeIfPresent(time.map { $0.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }, forKey: .time)
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

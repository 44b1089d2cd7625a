public import KBCore
import KBMemory

/// Feedback on a memory: `kb memory feedback`, `POST /v1/memories/{id}/feedback` and the MCP tool
/// `memory_feedback`. `wrong` hides it from recall and context until reviewed (`confirmed`
/// shows it again; correcting it is an update); `outdated` closes it now (a new version, kept);
/// `useful` is a small ranking signal (`MemoryTime.usefulWeight`). Every feedback is logged with
/// the caller.
///
/// ```swift
/// let result = try await kb.memoryFeedback(MemoryFeedbackRequest(id: stored.id, feedback: "outdated"), as: .admin)
/// ```
public struct MemoryFeedbackRequest: KBRequest, Hashable {
    public var id: String
    public var feedback: String
    public var note: String?

    public init(id: String, feedback: String) {
        self.id = id
        self.feedback = feedback
    }

    public static let schemaName = "MemoryFeedbackRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("id", "The memory's id, or a unique prefix of 4 or more characters.", required: true, pattern: Pattern.memoryID),
            .choice("feedback", "wrong (hidden until reviewed), outdated (closed now), useful (ranked a little higher) or confirmed (reviewed: shown again).",
                    MemoryFeedback.allCases.map(\.rawValue), required: true),
            .string("note", "Why, in a sentence (logged with the feedback).", maxLength: 500, pattern: Pattern.oneLine),
        ]
    }

    public func validated(_ limits: Limits) throws -> (id: String, feedback: MemoryFeedback, note: String?) {
        let rules = FieldRules(Self.self, limits)
        let id = try MemoryRules.idOrPrefix(try rules.text(id, "id"))
        guard let kind = try rules.choice(feedback, "feedback", as: MemoryFeedback.self) else {
            throw KBError(.invalidArgument, "\"feedback\" is missing; give wrong, outdated, useful or confirmed.")
        }
        return (id, kind, try rules.optionalText(note, "note"))
    }
}

/// What feedback says of a memory.
public enum MemoryFeedback: String, Sendable, Hashable, Codable, CaseIterable, SchemaEnumeration {
    case wrong, outdated, useful, confirmed
}

/// A consolidation of one scope's memories: `kb memory consolidate`, `POST /v1/memories/consolidate`
/// and the MCP tool `consolidate_memories`. Proposes (and with `apply` makes) the changes:
/// near-duplicates merged into the newer one, contradicted single-valued facts closed, expired
/// memories retired — each a new version of the memory it changes, never a delete.
///
/// ```swift
/// var request = MemoryConsolidateRequest(scope: "user:ada")
/// request.apply = true
/// let report = try await kb.consolidateMemories(request, as: .admin)
/// ```
public struct MemoryConsolidateRequest: KBRequest, Hashable {
    public var scope: String
    public var apply: Bool?
    public var nearDuplicate: Double?

    public init(scope: String) { self.scope = scope }

    public static let schemaName = "MemoryConsolidateRequest"

    public static func fields(_ limits: Limits) -> [RequestField] {
        [
            .string("scope", "The scope to consolidate: global, user:ID or bot:NAME.", required: true, pattern: Pattern.scope),
            .boolean("apply", "Make the changes (each a new version) instead of only proposing them."),
            .number("nearDuplicate", "Cosine similarity from which two memories count as the same and are merged.",
                    default: Double(MemoryOptions().nearDuplicateThreshold), minimum: 0.5, maximum: 1),
        ]
    }

    public func validated(_ limits: Limits) throws -> (scope: MemoryScope, apply: Bool, nearDuplicate: Float) {
        let rules = FieldRules(Self.self, limits)
        return (try MemoryScope(try rules.text(scope, "scope")), apply ?? false,
                Float(try rules.number(nearDuplicate, "nearDuplicate") ?? Double(MemoryOptions().nearDuplicateThreshold)))
    }
}

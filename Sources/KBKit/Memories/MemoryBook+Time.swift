public import Foundation
public import KBCore
import KBMemory
import KBRequests
import KBStore

extension MemoryBook {
    /// Feedback on a memory of a scope the caller may write (see `MemoryFeedbackRequest`),
    /// logged with the caller.
    func feedback(_ checked: Checked<MemoryFeedbackRequest>, as caller: Caller, at now: Date = Date()) async throws -> MemoryFeedbackResult {
        let (id, kind, note) = checked.valid
        let at = MemoryArchive.roundedToMilliseconds(now)
        let resolved = try await stored(id).id
        let entry = MemoryFeedbackEntry(memoryID: resolved, feedback: kind.rawValue, caller: caller.logName, note: note, at: at)
        let (memory, _) = try await store.changeMemoryState(
            resolved, expectedVersion: nil, versionAt: kind == .outdated ? at : nil, feedback: entry,
            authorize: { try caller.requireScopes([$0.scope], writing: true) }
        ) { memory in
            switch kind {
            case .wrong: memory.flaggedWrong = true
            case .confirmed: memory.flaggedWrong = false
            case .useful: memory.useful += 1
            case .outdated:
                guard memory.isCurrent else {
                    throw KBError(.conflict, memory.supersededBy.map { "The memory \(memory.id) was already superseded by \($0); nothing to close." }
                        ?? "The memory \(memory.id) was already closed at \(MemoryArchive.format(memory.validTo!)); nothing to close.")
                }
                memory.validTo = max(at, memory.validFrom)
            }
        }
        return MemoryFeedbackResult(memory: memory, feedback: entry)
    }

    /// Proposes (and with `apply` makes) the changes that keep a scope's memories clean: expired
    /// ones retired, contradicted single-valued facts closed, near-duplicates merged into the
    /// newer one. Every change is a new version of the memory it closes; nothing is deleted.
    func consolidate(_ checked: Checked<MemoryConsolidateRequest>, as caller: Caller, at now: Date = Date()) async throws -> MemoryConsolidation {
        let (scope, apply, threshold) = checked.valid
        try caller.requireScopes([scope], writing: apply)
        let at = MemoryArchive.roundedToMilliseconds(now)
        let current = try await memories(scopes: [scope])
        var changes: [MemoryConsolidation.Change] = []
        var closed = Set<String>()
        // Newest first: what a later statement says wins.
        func newer(_ a: Memory, _ b: Memory) -> Bool { (a.validFrom, a.createdAt, a.id) > (b.validFrom, b.createdAt, b.id) }
        for memory in current {
            guard let expiry = memory.expiresAt, expiry <= at else { continue }
            changes.append(.init(action: .retire, memory: memory.id, content: memory.content, into: nil, closedAt: expiry,
                                 reason: "Expired at \(MemoryArchive.format(expiry))."))
            closed.insert(memory.id)
        }
        let facts = Dictionary(grouping: current.filter { !closed.contains($0.id) }.flatMap { memory in
            memory.tags.filter { $0.name.hasPrefix("fact:") }.map { ($0, memory) }
        }, by: \.0)
        for (fact, entries) in facts.sorted(by: { $0.key.name < $1.key.name }) where entries.count > 1 {
            let ordered = entries.map(\.1).sorted(by: newer)
            let latest = ordered[0]
            for older in ordered.dropFirst() where !closed.contains(older.id) {
                changes.append(.init(action: .close, memory: older.id, content: older.content, into: latest.id, closedAt: max(latest.validFrom, older.validFrom),
                                     reason: "\(fact.name) holds one value; \(latest.id) says \"\(latest.content)\" and is newer."))
                closed.insert(older.id)
            }
        }
        for memory in current.sorted(by: newer) where !closed.contains(memory.id) {
            let others = current.filter { $0.id != memory.id && !closed.contains($0.id) }
            guard let near = try await closest(memory.content, existing: others, scope: scope, atLeast: threshold, excluding: memory.id),
                  !closed.contains(near.memory.id), newer(memory, near.memory) else { continue }
            changes.append(.init(action: .merge, memory: near.memory.id, content: near.memory.content, into: memory.id,
                                 closedAt: max(memory.validFrom, near.memory.validFrom),
                                 reason: String(format: "Says the same as the newer %@ (cosine %.2f, at least %.2f counts as the same).",
                                                memory.id, near.similarity, threshold)))
            closed.insert(near.memory.id)
        }
        if apply {
            for index in changes.indices {
                let change = changes[index]
                guard let version = current.first(where: { $0.id == change.memory })?.version else {
                    throw KBError(.conflict, "Memory \(change.memory) changed while the scope was consolidated; run it again.")
                }
                _ = try await store.changeMemoryState(change.memory, expectedVersion: version, versionAt: at, feedback: nil,
                                                      authorize: { _ in }) { memory in
                    memory.supersededBy = change.into
                    memory.validTo = max(change.closedAt, memory.validFrom)
                }
                changes[index].applied = true
            }
        }
        return MemoryConsolidation(scope: scope.name, applied: apply, examined: current.count, changes: changes)
    }
}

/// What feedback did.
public struct MemoryFeedbackResult: Sendable, Hashable, Codable {
    /// The memory after the feedback.
    public var memory: Memory
    /// The feedback as logged.
    public var feedback: MemoryFeedbackEntry
}

/// What a consolidation proposes or did.
public struct MemoryConsolidation: Sendable, Hashable, Codable {
    public struct Change: Sendable, Hashable, Codable {
        public enum Action: String, Sendable, Hashable, Codable, CaseIterable, SchemaEnumeration {
            /// An expired memory, closed at its expiry.
            case retire
            /// A single-valued fact that a newer one contradicts, closed and superseded by it.
            case close
            /// A near-duplicate of a newer memory, closed and superseded by it.
            case merge
        }
        public var action: Action
        /// The memory closed.
        public var memory: String
        public var content: String
        /// The memory that supersedes it (close, merge).
        public var into: String?
        /// When it stops holding.
        public var closedAt: Date
        public var reason: String
        /// Made (with `apply`): the memory's new version holds the change.
        public var applied = false
    }

    public var scope: String
    public var applied: Bool
    /// Current memories looked at.
    public var examined: Int
    public var changes: [Change]
}

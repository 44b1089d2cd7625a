import Foundation
import KBCore
import KBStore

/// A change in whether queries can be embedded, for a service's log.
public enum EmbedderHealthEvent: Sendable, Equatable {
    case unavailable(reason: String)
    case recovered(afterSeconds: Double)
}

/// A circuit breaker for the query embedder. The first failure to embed a query is recorded;
/// from then on searches do not wait for the embedder but answer from keywords (degraded) until
/// it works again — found by a background probe with exponential backoff when the knowledge base
/// recovers in the background (servers), else by letting one search try again once the backoff
/// has passed.
///
/// @unchecked Sendable: every field is guarded by `lock`.
final class EmbedderHealth: @unchecked Sendable {
    private let lock = NSLock()
    private var problem: (error: KBError, since: Date, retryAt: Date)?
    private var backoff: TimeInterval = 0
    private var degradedAnswers = 0
    private var recoveries = 0
    private var probing = false
    private var observers: [@Sendable (EmbedderHealthEvent) -> Void] = []
    /// Set when a long-running process asks to recover in the background.
    private var recovery: (first: TimeInterval, longest: TimeInterval)?

    /// Whether an error means the embedder cannot embed right now (rather than a bad request).
    static func isUnavailability(_ error: KBError) -> Bool {
        switch error.code {
        case .modelMissing, .invalidModel, .embedding, .embedderMismatch: true
        default: false
        }
    }

    /// The recorded failure when searches should not try the embedder now; nil when they should.
    func skip() -> KBError? {
        lock.withLock {
            guard let problem else { return nil }
            if recovery == nil && Date() >= problem.retryAt { return nil }   // no probe: let this search try
            return problem.error
        }
    }

    /// Records a failure; returns true when the embedder just became unavailable.
    func failed(_ error: KBError) -> (isNew: Bool, startProbe: Bool) {
        let (isNew, startProbe, handlers) = lock.withLock { () -> (Bool, Bool, [@Sendable (EmbedderHealthEvent) -> Void]) in
            let isNew = problem == nil
            backoff = isNew ? (recovery?.first ?? 1) : min(max(backoff * 2, 1), recovery?.longest ?? 60)
            problem = (error, problem?.since ?? Date(), Date().addingTimeInterval(backoff))
            let startProbe = recovery != nil && !probing
            if startProbe { probing = true }
            return (isNew, startProbe, isNew ? observers : [])
        }
        for handler in handlers { handler(.unavailable(reason: error.message)) }
        return (isNew, startProbe)
    }

    /// Records that the embedder works.
    func succeeded() {
        let (handlers, event) = lock.withLock { () -> ([@Sendable (EmbedderHealthEvent) -> Void], EmbedderHealthEvent?) in
            guard let problem else { return ([], nil) }
            self.problem = nil
            backoff = 0
            recoveries += 1
            return (observers, .recovered(afterSeconds: Date().timeIntervalSince(problem.since)))
        }
        if let event { for handler in handlers { handler(event) } }
    }

    func countDegradedAnswer() { lock.withLock { degradedAnswers += 1 } }

    func observe(_ handler: @escaping @Sendable (EmbedderHealthEvent) -> Void) { lock.withLock { observers.append(handler) } }

    func recoverInBackground(first: TimeInterval, longest: TimeInterval) {
        lock.withLock { recovery = (max(0.01, first), max(first, longest)) }
    }

    /// How long the probe waits before its next try, and whether it should go on at all.
    func nextProbe() -> TimeInterval? {
        lock.withLock {
            guard problem != nil else {
                probing = false
                return nil
            }
            return backoff
        }
    }

    var status: QueryEmbedderStatus {
        lock.withLock {
            QueryEmbedderStatus(available: problem == nil, problem: problem?.error.message, since: problem?.since,
                                degradedAnswers: degradedAnswers, recoveries: recoveries)
        }
    }
}

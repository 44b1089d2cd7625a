import Foundation

/// Work that callers on their own threads share: a caller whose request finds no batch running
/// runs one with every request waiting (its own included) and hands out the results; one that
/// finds a batch running waits for the next. Alone, a request runs at once; under load, batches
/// grow with the number of callers waiting. Callers block: never call it from Swift's
/// cooperative pool.
///
/// @unchecked Sendable: `waiting`, `results` and `running` are guarded by `condition`.
final class Gathering<Request: Sendable, Result: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [(ticket: Int, request: Request)] = []
    private var results: [Int: Result] = [:]
    private var running = false
    private var nextTicket = 0
    /// The most requests one batch takes; the rest wait for the next.
    let limit: Int

    init(limit: Int = .max) { self.limit = limit }

    /// `request`'s result, from a batch that `run` computes (one result per request, in order).
    func join(_ request: Request, run: ([Request]) -> [Result]) -> Result {
        condition.lock()
        defer { condition.unlock() }
        let ticket = nextTicket
        nextTicket += 1
        waiting.append((ticket, request))
        while true {
            if let result = results.removeValue(forKey: ticket) { return result }
            if running {
                condition.wait()
                continue
            }
            running = true
            let batch = Array(waiting.prefix(limit))
            waiting.removeFirst(batch.count)
            condition.unlock()
            let computed = run(batch.map(\.request))
            condition.lock()
            for (entry, result) in zip(batch, computed) { results[entry.ticket] = result }
            running = false
            condition.broadcast()
        }
    }
}

/// How a process spends its cores on the model and on vector scans. Chosen once per process,
/// before the first embedding or search (`KnowledgeBase.configure(_:)`).
///
/// ```swift
/// KnowledgeBase.configure(.throughput)   // kb serve: many requests at once
/// ```
public enum ComputeMode: String, Sendable, Hashable, CaseIterable {
    /// One forward pass at a time, split across every core; vector scans on every core: the
    /// quickest answer for a single caller (`kb search`, `kb context`).
    case latency
    /// One forward pass per core side by side, one thread per scan: the most work per second
    /// for many callers (`kb serve`, `kb mcp`, `kb ingest`, `kb eval`). The default.
    case throughput
}

/// The process's `ComputeMode`: set once, before the first model loads or vector scan runs,
/// then fixed. Reading it fixes it too (at `.throughput` unless set).
public enum ProcessCompute {
    /// The mode in force; reading it fixes it.
    public static var mode: ComputeMode { state.withLock { $0.fixed = true; return $0.mode } }

    /// Chooses the mode. Returns false, changing nothing, when the mode was already fixed at
    /// another value (a model or a scan already runs with it).
    @discardableResult
    public static func set(_ mode: ComputeMode) -> Bool {
        state.withLock {
            if $0.fixed { return $0.mode == mode }
            $0.mode = mode
            $0.fixed = true
            return true
        }
    }

    private static let state = LockedValue((mode: ComputeMode.throughput, fixed: false))
}

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

/// The arithmetic of the local model's linear layers (`--precision`, `KB_PRECISION`).
///
/// Vectors of every precision stay within the quality gates of fp32's (cosine ≥ 0.999 for bf16,
/// ≥ 0.995 for int8), so one index may mix them: passages embedded with one, queries with another.
public enum EncoderPrecision: String, Sendable, Hashable, CaseIterable, Codable {
    /// The default: the precision the index records, or for a new index int8 on CPUs with
    /// AVX-512 VNNI, else bf16 on CPUs with AVX-512 BF16, else fp32 (`BERTEmbedder.installed`).
    case auto
    /// Full precision, on every CPU.
    case fp32
    /// bfloat16 inputs and weights with fp32 sums (AVX-512 BF16).
    case bf16
    /// int8 weights and inputs with exact int32 sums (AVX-512 VNNI).
    case int8

    /// Parses a name, with an error that lists the choices.
    public init(parsing name: String) throws {
        guard let precision = EncoderPrecision(rawValue: name.lowercased()) else {
            throw KBError(.invalidArgument, "Unknown precision '\(name)'. Use auto, fp32, bf16 or int8.")
        }
        self = precision
    }
}

/// The precision the process's local model loads with: `$KB_PRECISION` wins, else what the
/// command line chose (`--precision`), else `.auto`.
public enum ProcessPrecision {
    public static var chosen: EncoderPrecision { state.withLock { $0 } }

    /// Chooses the precision for models loaded from now on.
    public static func set(_ precision: EncoderPrecision) { state.withLock { $0 = precision } }

    /// The precision in force for `environment`.
    public static func current(_ environment: [String: String]) throws -> EncoderPrecision {
        if let name = environment["KB_PRECISION"], !name.isEmpty { return try EncoderPrecision(parsing: name) }
        return chosen
    }

    private static let state = LockedValue(EncoderPrecision.auto)
}

/// What an ingest run did, file by file summarised.
public struct IngestReport: Sendable, Hashable, Codable {
    public struct Failure: Sendable, Hashable, Codable {
        /// The file or argument as the user named it.
        public var path: String
        public var message: String
    }

    public var added = 0
    public var updated = 0
    public var unchanged = 0
    public var removed = 0
    /// Files the index holds under the given folders that are gone from disk (kept unless `--prune`).
    public var missing: [String] = []
    public var failed: [Failure] = []
    public var warnings: [String] = []
    /// Snippets written by this run.
    public var snippets = 0
    /// Page images Tesseract recognised in this run, and pages whose text came from the index's
    /// OCR page cache (recognised by an earlier, perhaps interrupted, run).
    public var ocrPages = 0
    public var ocrCachedPages = 0
    public var seconds = 0.0

    public init() {}
}

/// Where an ingest run is, for a progress bar.
public struct IngestProgress: Sendable {
    public enum Phase: String, Sendable {
        /// Counting files read and parsed.
        case reading
        /// Counting snippets embedded and written.
        case embedding
        /// Counting page images recognised by OCR (while files are read).
        case recognising
    }
    public var phase: Phase
    public var done: Int
    public var total: Int
    /// The file being worked on, as the user named it.
    public var current: String
}

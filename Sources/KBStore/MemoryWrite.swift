public import KBCore

/// What the store needs to write one memory: the memory, its normal-form key, the source
/// document that makes it searchable, and its vector (nil for a keyword-only index).
public struct MemoryWrite: Sendable {
    public var memory: Memory
    public var contentKey: String
    public var document: SourceDocument
    public var vector: [Float]?
    public var embedder: EmbedderRecord

    public init(memory: Memory, contentKey: String, document: SourceDocument, vector: [Float]?, embedder: EmbedderRecord) {
        self.memory = memory
        self.contentKey = contentKey
        self.document = document
        self.vector = vector
        self.embedder = embedder
    }
}

/// What adding a memory did.
public enum MemoryAddOutcome: Sendable {
    /// A current memory in the scope already holds the same content; nothing was written.
    case existing(Memory)
    /// The memory was stored. `neighbours` are the vectors of the other current memories of
    /// its scope as they were when it was written (for near-duplicate reports).
    case added(WriteEffect, neighbours: [(id: String, vector: [Float])])
}

/// What importing one memory did.
public enum MemoryImportOutcome: String, Sendable, Codable {
    case added, unchanged, replaced
}

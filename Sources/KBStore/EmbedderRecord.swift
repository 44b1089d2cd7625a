public import KBCore

/// The embedder an index uses for its vectors, as `kb_meta` records it.
public struct EmbedderRecord: Sendable, Hashable, Codable {
    /// The embedder's id (`all-MiniLM-L6-v2`), or `none` for a keyword-only index.
    public var name: String
    /// Vector length; 0 for `none`.
    public var dimension: Int
    /// How to make the embedder again (`local`, `none`, `hashing`).
    public var spec: String
    /// The arithmetic the local model embedded the index's passages in (`int8`, `bf16`, `fp32`);
    /// nil for another embedder, and for a local index made before kb recorded it (embedded in
    /// bf16 where the CPU had AVX-512 BF16, else fp32: `passagePrecision` says `.bf16`).
    public var precision: String?
    /// What the vectors were embedded with besides each snippet's text (`EmbeddingInput.Context`:
    /// `title`); nil for an index made before kb recorded it (bare text).
    public var context: String?

    public init(name: String, dimension: Int, spec: String, precision: String? = nil, context: String? = nil) {
        self.name = name
        self.dimension = dimension
        self.spec = spec
        self.precision = precision
        self.context = context
    }

    /// What a snippet's vector reads besides its text in this index.
    public var inputContext: EmbeddingInput.Context { context.flatMap(EmbeddingInput.Context.init(rawValue:)) ?? .bare }

    /// The precision the local model runs in for this index when the process chose `auto`:
    /// what its passages were embedded in (bf16 for an index that recorded none), so that its
    /// queries are embedded alike. nil for an index without vectors or not of the local model.
    public var passagePrecision: EncoderPrecision? {
        guard hasVectors, spec == "local" || spec.hasPrefix("local:") || spec.hasPrefix("local|") else { return nil }
        return precision.flatMap(EncoderPrecision.init(rawValue:)) ?? .bf16
    }

    public static let none = EmbedderRecord(name: "none", dimension: 0, spec: "none")

    /// Whether this record's vectors read as `other`'s do: the same embedder, in the same
    /// precision (an index that recorded none counts as bf16) and with the same context. When
    /// only precision or context differ, `kb reindex` embeds again in place (`staging`).
    public func embedsLike(_ other: EmbedderRecord) -> Bool {
        name == other.name && dimension == other.dimension && passagePrecision == other.passagePrecision && inputContext == other.inputContext
    }

    /// The vector set `kb reindex` fills when the index already searches an embedder of this
    /// name in another precision or context: kept beside the searched vectors until every snippet
    /// has one, then moved onto this name in one transaction (`StoreTransaction.switchEmbedder`).
    /// One per target, so an interrupted run resumes only into the same precision and context.
    public var staging: EmbedderRecord {
        EmbedderRecord(name: "\(name)#reindex:\(passagePrecision?.rawValue ?? "-"):\(inputContext.rawValue)", dimension: dimension,
                       spec: spec, precision: precision, context: context)
    }

    /// Whether the index this record describes holds vectors (it was not built with `--embedder none`).
    /// Every "can this index rank by vectors" decision is this one.
    public var hasVectors: Bool { dimension > 0 }

    /// The `kb_meta` keys the record is kept under.
    public enum MetaKey {
        public static let name = "embedder"
        public static let dimension = "dimension"
        public static let spec = "embedder_spec"
        public static let precision = "passage_precision"
        public static let context = "embedding_context"
    }

    /// The record as `kb_meta` rows (an empty precision or context for a record without one, so
    /// that a switch to it clears the one before).
    public var metaValues: [(key: String, value: String)] {
        [(MetaKey.name, name), (MetaKey.dimension, String(dimension)), (MetaKey.spec, spec), (MetaKey.precision, precision ?? ""),
         (MetaKey.context, context ?? "")]
    }

    /// Whether vectors from `other` may be written into an index that records this embedder.
    public func accepts(_ other: EmbedderRecord) -> Bool { name == other.name && dimension == other.dimension }

    /// Checks that `vectors` holds one vector of this embedder's dimension per snippet of
    /// `document` (nil, for a keyword-only index, passes).
    public func check(_ vectors: [[Float]]?, for document: SourceDocument) throws {
        guard let vectors else { return }
        guard vectors.count == document.snippets.count else {
            throw KBError(.embedding, "\(document.source.path): \(vectors.count) vectors for \(document.snippets.count) snippets.")
        }
        if let bad = vectors.first(where: { $0.count != dimension }) { throw wrongDimension(bad.count) }
    }

    /// The error for a vector of `count` values from this embedder.
    public func wrongDimension(_ count: Int) -> KBError {
        KBError(.embedding, "\(name) returned a \(count)-dim vector; the index holds \(dimension)-dim vectors.")
    }

    /// Why an index holding `index`'s vectors cannot take `requested`'s, and what to do.
    public static func mismatchMessage(index: EmbedderRecord, requested: EmbedderRecord) -> String {
        if !index.hasVectors {
            return "The index was built without embeddings (--embedder none), so '\(requested.name)' cannot add vectors to it. "
                + "Ingest with --embedder none, or start a new index with --db."
        }
        if !requested.hasVectors {
            return "The index holds \(index.dimension)-dim vectors from '\(index.name)'; ingesting with --embedder none would leave new snippets without vectors. "
                + "Ingest with --embedder \(index.spec), or start a new index with --db."
        }
        return "The index holds \(index.dimension)-dim vectors from '\(index.name)', but '\(requested.name)' returns \(requested.dimension). "
            + "Use --embedder \(index.spec) with this index, run `kb reindex --embedder \(requested.spec.hasPrefix("openai:") ? "openai:…" : requested.spec)` to switch it, or build a new index with --db."
    }
}

extension Optional where Wrapped == EmbedderRecord {
    /// Whether an index with this record (nil: nothing ingested yet) holds vectors.
    public var hasVectors: Bool { self?.hasVectors ?? false }
}

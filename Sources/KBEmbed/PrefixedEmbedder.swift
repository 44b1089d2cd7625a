public import KBCore

/// An embedder with texts put before every query and every passage (`--query-prefix`,
/// `--passage-prefix`): e5-style models (`query: `, `passage: `) and nomic-style ones
/// (`search_query: `, `search_document: `) behind Ollama or TEI need them, and local models
/// without prompts in `config_sentence_transformers.json` may too. The prefixes replace a local
/// model's own prompts. Its id names the prefixes, so an index never mixes vectors made with
/// and without them.
public struct PrefixedEmbedder: Embedder {
    public let inner: any Embedder
    public let queryPrefix: String
    public let passagePrefix: String

    public init(_ inner: any Embedder, queryPrefix: String, passagePrefix: String) {
        self.inner = inner
        self.queryPrefix = queryPrefix
        self.passagePrefix = passagePrefix
    }

    public var id: String { Self.id(inner.id, queryPrefix: queryPrefix, passagePrefix: passagePrefix) }
    public var dimension: Int { inner.dimension }
    public var isRemote: Bool { inner.isRemote }
    public var tokensUsed: Int { inner.tokensUsed }

    /// `multilingual-e5-small [query: "query: ", passage: "passage: "]`.
    public static func id(_ base: String, queryPrefix: String, passagePrefix: String) -> String {
        "\(base) [query: \"\(queryPrefix)\", passage: \"\(passagePrefix)\"]"
    }

    public func embed(_ texts: [String], role: EmbeddingRole) async throws -> [[Float]] {
        let prefix = role == .query ? queryPrefix : passagePrefix
        if let local = inner as? BERTEmbedder { return try await local.embed(texts, prefix: prefix) }
        return try await inner.embed(texts.map { prefix + $0 }, role: role)
    }
}

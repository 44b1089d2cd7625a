import Foundation
import KBCore
import KBEmbed
import KBStore

/// What searches of one knowledge base keep between calls: the embedder record last read, the
/// query embedder, and the filter results of the index generation they reflect. (The vectors in
/// memory are the SQLite store's own.)
///
/// @unchecked Sendable: every field is guarded by `lock`.
final class SearchState: @unchecked Sendable {
    let lock = NSLock()
    var embedder: (any Embedder)?
    var embedderName: String?
    /// The embedder record last read, to embed a query before the snapshot that confirms it.
    var knownRecord: EmbedderRecord??
    /// Snippet ids that pass a filter, and the ids of memories, at `filtersGeneration`.
    var filters: [FilterKey: Set<Int64>] = [:]
    var memorySnippets: Set<Int64>?
    var filtersGeneration: Int64 = -1
}

/// The parts of a query that decide which snippets pass its filters.
struct FilterKey: Hashable {
    var tags: [Tag]
    var kinds: Set<SourceKind>
    var scopes: [MemoryScope]
    var selectors: [SourceSelector]
    var includeSuperseded: Bool
    var sourcePrefixes: [String]

    init(_ query: SearchQuery) {
        tags = query.tags
        kinds = query.kinds
        scopes = query.scopes
        selectors = query.selectors
        includeSuperseded = query.includeSuperseded
        sourcePrefixes = query.sourcePrefixes
    }
}

import Foundation
import KBCore
import KBPostgres
import KBSQLite
import KBStore
import Testing

/// An engine the store contract is checked on, and how to make a fresh, empty index with it.
/// SQLite always; PostgreSQL wherever `KB_TEST_POSTGRES_URL` names a server (scripts/test.sh
/// starts one and sets it for every phase), so one `swift test` checks both.
struct ContractEngine: Sendable, CustomTestStringConvertible {
    let name: String
    let engine: any StoreEngine
    let freshLocation: @Sendable () -> String

    var testDescription: String { name }

    static let sqlite = ContractEngine(name: "SQLite", engine: SQLiteEngine()) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-contract-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("kb.sqlite").path
    }

    /// The server's URL with a database of its own for each index.
    static let postgres: ContractEngine? = {
        guard let server = ProcessInfo.processInfo.environment["KB_TEST_POSTGRES_URL"], !server.isEmpty else { return nil }
        return ContractEngine(name: "PostgreSQL", engine: PostgresEngine()) {
            var parts = URLComponents(string: server)!
            parts.path = "/kb_contract_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
            return parts.string!
        }
    }()

    /// Every engine this run can check.
    static let all: [ContractEngine] = [sqlite] + (postgres.map { [$0] } ?? [])

    /// Opens a location with this engine as KBKit does.
    func open(_ location: String, create: Bool) throws -> any IndexStore {
        try engine.open(location, StoreOpening(create: create, options: try StoreOptions(environment: [:]),
                                               analyzer: try FoldingAnalyzer(language: .auto), environment: [:]))
    }

    /// A new, empty index.
    func fresh() throws -> any IndexStore { try open(freshLocation(), create: true) }
}

/// A source with `texts` as its snippets (each headed "H › Sub N").
func contractDocument(_ path: String, title: String = "T", kind: SourceKind = .note, tags: [KBCore.Tag] = [],
                      snippets texts: [String], snippetTags: [[KBCore.Tag]]? = nil, hash: String = "h") -> SourceDocument {
    let source = Source(path: path, kind: kind, title: title, contentHash: hash, size: 1, tags: tags)
    let snippets = texts.enumerated().map { i, text in
        Snippet(ordinal: i, text: text, start: 0, end: text.unicodeScalars.count, headingPath: ["H", "Sub \(i)"],
                tags: tags + (snippetTags?[i] ?? []))
    }
    return SourceDocument(source: source, snippets: snippets)
}

/// A memory as KBKit writes one: its text as the one snippet of a `memory:` source.
func contractMemory(_ id: String, scope: String, content: String, vector: [Float]? = nil,
                    embedder: EmbedderRecord = .none, at time: Date = Date(timeIntervalSince1970: 1_700_000_000)) throws -> MemoryWrite {
    let memory = Memory(id: id, scope: try MemoryScope(scope), title: nil, content: content, tags: [], createdAt: time, updatedAt: time)
    let snippet = Snippet(ordinal: 0, text: content, start: 0, end: content.unicodeScalars.count, tags: [])
    let source = Source(path: memory.sourcePath, kind: .memory, title: "", contentHash: "m-\(id)-\(content.count)",
                        size: content.utf8.count, modifiedAt: time, tags: [])
    return MemoryWrite(memory: memory, contentKey: content.split(whereSeparator: \.isWhitespace).joined(separator: " "),
                       document: SourceDocument(source: source, snippets: [snippet]), vector: vector, embedder: embedder)
}

extension IndexStore {
    /// Stores a document without vectors (a keyword-only index).
    @discardableResult
    func replace(_ document: SourceDocument) async throws -> WriteEffect { try await replace(document, vectors: nil, embedder: .none) }
    func keywordSearch(_ query: SearchQuery) async throws -> [SearchHit] { try await snapshot { try $0.keywordSearch(query) } }
    func status() async throws -> IndexStatus { try await snapshot { try $0.status() } }
    func paths() async throws -> [String] { try await snapshot { try $0.sources().map(\.path) }.sorted() }
}

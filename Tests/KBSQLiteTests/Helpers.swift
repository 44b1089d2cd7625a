import Foundation
import KBCore
import KBSQLite
import KBStore

/// A fresh index in its own temporary folder (tests run in parallel).
func temporaryStore() throws -> SQLiteStore {
    try SQLiteStore.open(at: temporaryPath("kb.sqlite"), create: true)
}

func temporaryPath(_ name: String) -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kb-tests-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent(name).path
}

func document(_ path: String, title: String = "T", kind: SourceKind = .note, tags: [Tag] = [],
              snippets texts: [String], snippetTags: [[Tag]]? = nil, hash: String = "h") -> SourceDocument {
    let source = Source(path: path, kind: kind, title: title, contentHash: hash, size: 1, tags: tags)
    let snippets = texts.enumerated().map { i, text in
        Snippet(ordinal: i, text: text, start: 0, end: text.unicodeScalars.count, headingPath: ["H", "Sub \(i)"],
                tags: tags + (snippetTags?[i] ?? []))
    }
    return SourceDocument(source: source, snippets: snippets)
}

/// One-query reads for tests, each in a snapshot of its own.
extension SQLiteStore {
    /// Stores a document without vectors (a keyword-only index).
    @discardableResult
    func replace(_ document: SourceDocument) async throws -> WriteEffect { try await replace(document, vectors: nil, embedder: .none) }
    func keywordSearch(_ query: SearchQuery) async throws -> [SearchHit] { try await snapshot { try $0.keywordSearch(query) } }
    func meta(_ key: String) async throws -> String? { try await snapshot { try $0.meta(key) } }
    func status() async throws -> IndexStatus { try await snapshot { try $0.status() } }
    func contentHashes() async throws -> [String: String] { try await snapshot { try $0.contentHashes() } }
}

import Foundation
import GRDB
public import KBCore
import KBStore

extension SQLiteStore.Snapshot {
    /// Vectors the index already holds for a source, keyed by what was embedded
    /// (`EmbeddingInput`: a snippet's text, a conversation's turn after the turn before it): what
    /// a changed file can reuse for the paragraphs that did not change.
    public func vectorsByText(path: String, embedder: String, context: EmbeddingInput.Context) throws -> [String: [Float]] {
        guard let dimension = try Int.fetchOne(db, sql: "SELECT dimension FROM embedders WHERE name = ?", arguments: [embedder]) else { return [:] }
        let rows = try Row.fetchAll(db, sql: """
            SELECT v.data, sn.id, sn.text, \(Self.previousTurnColumn), \(SnippetText.titleColumns) FROM snippets sn
            JOIN sources so ON so.id = sn.source_id
            JOIN vectors v ON v.snippet_id = sn.id
            JOIN embedders e ON e.id = v.embedder_id
            WHERE so.path = ? AND e.name = ?
            """, arguments: [path, embedder])
        var result: [String: [Float]] = [:]
        for row in rows {
            if let vector = VectorCoding.decode(row[0], dimension: dimension) { result[Self.snippetText(row, from: 1).embeddingInput(context)] = vector }
        }
        return result
    }

    /// How many vectors each embedder has in the index.
    public func vectorCounts() throws -> [String: Int] {
        try Row.fetchAll(db, sql: """
            SELECT e.name, count(v.snippet_id) FROM embedders e LEFT JOIN vectors v ON v.embedder_id = e.id GROUP BY e.id
            """).reduce(into: [String: Int]()) { $0[$1[0]] = $1[1] }
    }
}

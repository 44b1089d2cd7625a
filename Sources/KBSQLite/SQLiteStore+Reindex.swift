import Foundation
import GRDB
import KBCore
public import KBStore

extension SQLiteStore.Snapshot {
    /// Up to `limit` snippets (id, text, and a conversation turn's previous turn) that have no
    /// vector from `embedder` yet.
    public func snippetsWithoutVectors(embedder: EmbedderRecord, limit: Int) throws -> [SnippetText] {
        let embedderID = try embedderID(named: embedder.name) ?? -1
        return try Row.fetchAll(db, sql: """
            SELECT sn.id, sn.text, \(Self.previousTurnColumn), \(SnippetText.titleColumns) FROM snippets sn
            JOIN sources so ON so.id = sn.source_id
            WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.snippet_id = sn.id AND v.embedder_id = ?)
            ORDER BY sn.id LIMIT ?
            """, arguments: [embedderID, limit]).map { Self.snippetText($0, from: 0) }
    }

    /// A `SnippetText` from id, text, `previousTurnColumn` and `SnippetText.titleColumns` at `start`.
    static func snippetText(_ row: Row, from start: Int) -> SnippetText {
        SnippetText(id: row[start], text: row[start + 1], previousTurn: row[start + 2], title: row[start + 3], path: row[start + 4])
    }

    /// The text of the turn before `sn` when `sn` is a conversation's turn, else NULL
    /// (`EmbeddingInput`).
    static let previousTurnColumn = """
        (SELECT prev.text FROM snippets prev JOIN sources so ON so.id = prev.source_id AND so.kind = 'conversation'
         WHERE prev.source_id = sn.source_id AND prev.ordinal = sn.ordinal - 1)
        """
}

import Foundation
import GRDB
import KBCore
public import KBStore

extension SQLiteStore.Snapshot {
    /// Up to `limit` snippets (id and text) that have no vector from `embedder` yet.
    public func snippetsWithoutVectors(embedder: EmbedderRecord, limit: Int) throws -> [SnippetText] {
        let embedderID = try embedderID(named: embedder.name) ?? -1
        return try Row.fetchAll(db, sql: """
            SELECT sn.id, sn.text FROM snippets sn
            WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.snippet_id = sn.id AND v.embedder_id = ?)
            ORDER BY sn.id LIMIT ?
            """, arguments: [embedderID, limit]).map { SnippetText(id: $0[0], text: $0[1]) }
    }
}

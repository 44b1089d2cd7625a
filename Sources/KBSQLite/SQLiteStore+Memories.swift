import Foundation
import GRDB
public import KBCore
import KBStore

extension SQLiteStore {
    static let memoryColumns = StoredForms.memoryColumns

    static func memory(_ row: Row) throws -> Memory {
        try StoredForms.memory(id: row["id"], scope: row["scope"], title: row["title"], content: row["content"], tags: row["tags"],
                               createdAt: row["created_at"], updatedAt: row["updated_at"], version: row["version"],
                               supersededBy: row["superseded_by"], validFrom: row["valid_from"], validTo: row["valid_to"],
                               expiresAt: row["expires_at"], flaggedWrong: row["flagged_wrong"], useful: row["useful"])
    }
}

extension SQLiteStore.Snapshot {
    /// Memories, oldest first; `scopes` empty means all; every tag must be present.
    public func memories(scopes: [MemoryScope] = [], tags: [Tag] = [], includeSuperseded: Bool = false) throws -> [Memory] {
        var sql = "SELECT \(SQLiteStore.memoryColumns) FROM memories m WHERE 1"
        var arguments = StatementArguments()
        if !includeSuperseded { sql += " AND superseded_by IS NULL AND valid_to IS NULL" }
        if !scopes.isEmpty {
            sql += " AND scope IN (\(scopes.map { _ in "?" }.joined(separator: ", ")))"
            arguments += StatementArguments(scopes.map(\.name))
        }
        for tag in tags {
            sql += " AND m.source_id IN (SELECT st.source_id FROM source_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = ?)"
            arguments += [tag.name]
        }
        sql += " ORDER BY created_at, id"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map(SQLiteStore.memory)
    }

    /// Memories by the index path of their source (`memory:ID`).
    public func memories(sourcePaths paths: [String]) throws -> [String: Memory] {
        let ids = paths.compactMap { $0.hasPrefix("memory:") ? String($0.dropFirst(7)) : nil }
        var result: [String: Memory] = [:]
        for chunk in stride(from: 0, to: ids.count, by: 500) {
            let list = SQLiteStore.inList(Array(ids[chunk..<min(chunk + 500, ids.count)]))
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(SQLiteStore.memoryColumns) FROM memories WHERE id IN (\(list.sql))
                """), arguments: list.arguments) {
                let memory = try SQLiteStore.memory(row)
                result[memory.sourcePath] = memory
            }
        }
        return result
    }
}

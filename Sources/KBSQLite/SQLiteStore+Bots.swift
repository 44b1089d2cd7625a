import GRDB
public import KBCore
import KBStore

extension SQLiteStore {
    static func bot(_ row: Row) throws -> Bot {
        try StoredForms.bot(name: row["name"], systemPrompt: row["system_prompt"], sources: row["sources"],
                            memoryScopes: row["memory_scopes"], createdAt: row["created_at"], updatedAt: row["updated_at"])
    }
}

extension SQLiteStore.Snapshot {
    /// Every bot, by name.
    public func bots() throws -> [Bot] {
        try Row.fetchAll(db, sql: "SELECT * FROM bots ORDER BY name").map(SQLiteStore.bot)
    }
}

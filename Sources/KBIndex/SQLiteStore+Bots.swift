public import Foundation
import GRDB
public import KBCore

extension SQLiteStore {
    static func bot(_ row: Row) throws -> Bot {
        let sources: String = row["sources"], scopes: String = row["memory_scopes"]
        return Bot(
            name: row["name"], systemPrompt: row["system_prompt"],
            sources: try JSONDecoder().decode([String].self, from: Data(sources.utf8)).map(SourceSelector.init),
            memoryScopes: scopes.split(separator: "\n").map(String.init),
            createdAt: Date(timeIntervalSince1970: row["created_at"]), updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    /// A bot's selectors as stored: a JSON array of strings (a path may hold a line break).
    static func storedText(_ selectors: [SourceSelector]) throws -> String {
        String(decoding: try JSONEncoder().encode(selectors.map(\.description)), as: UTF8.self)
    }

    /// Stores a new bot; fails when the name is taken.
    public func createBot(_ bot: Bot) async throws {
        try await write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM bots WHERE name = ?", arguments: [bot.name]) == true {
                throw KBError(.conflict, "A bot named \(bot.name) exists already. Change it with `kb bot update`, or pick another name.")
            }
            try Self.saveBot(bot, db)
        }
    }

    /// Changes a stored bot with `change`, in one transaction; returns it as saved.
    public func updateBot(named name: String, _ change: @Sendable (inout Bot) throws -> Void) async throws -> Bot {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM bots WHERE name = ?", arguments: [name]) else {
                throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots.")
            }
            var bot = try Self.bot(row)
            try change(&bot)
            bot.updatedAt = Date()
            try Self.saveBot(bot, db)
            // As stored (times round-trip through seconds since 1970), so a later read is equal.
            return try Self.bot(try Row.fetchOne(db, sql: "SELECT * FROM bots WHERE name = ?", arguments: [name])!)
        }
    }

    static func saveBot(_ bot: Bot, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO bots (name, system_prompt, sources, memory_scopes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET system_prompt = excluded.system_prompt, sources = excluded.sources,
                memory_scopes = excluded.memory_scopes, updated_at = excluded.updated_at
            """, arguments: [bot.name, bot.systemPrompt, try storedText(bot.sources),
                             bot.memoryScopes.joined(separator: "\n"), bot.createdAt.timeIntervalSince1970, bot.updatedAt.timeIntervalSince1970])
    }

    /// Deletes a bot (its memories stay: they belong to their scopes).
    public func deleteBot(named name: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM bots WHERE name = ?", arguments: [name])
            guard db.changesCount > 0 else { throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots.") }
        }
    }
}

extension SQLiteStore.Snapshot {
    /// Every bot, by name.
    public func bots() throws -> [Bot] {
        try Row.fetchAll(db, sql: "SELECT * FROM bots ORDER BY name").map(SQLiteStore.bot)
    }

    /// The bot with this name.
    public func bot(named name: String) throws -> Bot {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM bots WHERE name = ?"), arguments: [name]) else {
            throw KBError(.notFound, "No bot is named \(name). `kb bot list` shows the bots; `kb bot create NAME` makes one.")
        }
        return try SQLiteStore.bot(row)
    }
}

import Foundation
public import KBCore

/// How both stores keep the values that are not plain columns: tags one per line, a bot's
/// selectors as a JSON array of strings (a path may hold a line break), its memory scopes one per
/// line, times as seconds since 1970.
public enum StoredForms {
    /// Tags, one per line.
    public static func text(_ tags: [Tag]) -> String { tags.map(\.name).joined(separator: "\n") }

    public static func tags(_ text: String) -> [Tag] {
        text.isEmpty ? [] : text.components(separatedBy: "\n").map { Tag($0) }
    }

    /// A bot's selectors as stored.
    public static func text(_ selectors: [SourceSelector]) throws -> String {
        String(decoding: try JSONEncoder().encode(selectors.map(\.description)), as: UTF8.self)
    }

    public static func selectors(_ text: String) throws -> [SourceSelector] {
        try JSONDecoder().decode([String].self, from: Data(text.utf8)).map(SourceSelector.init)
    }

    /// A bot from its stored columns.
    public static func bot(name: String, systemPrompt: String, sources: String, memoryScopes: String,
                           createdAt: Double, updatedAt: Double) throws -> Bot {
        Bot(name: name, systemPrompt: systemPrompt, sources: try selectors(sources),
            memoryScopes: memoryScopes.split(separator: "\n").map(String.init),
            createdAt: Date(timeIntervalSince1970: createdAt), updatedAt: Date(timeIntervalSince1970: updatedAt))
    }

    /// The columns of a memory row, in the order `memory(…)` takes them.
    public static let memoryColumns =
        "id, scope, title, content, tags, created_at, updated_at, version, superseded_by, valid_from, valid_to, expires_at, flagged_wrong, useful"

    /// A memory from its stored columns.
    public static func memory(id: String, scope: String, title: String?, content: String, tags: String, createdAt: Double,
                              updatedAt: Double, version: Int, supersededBy: String?, validFrom: Double, validTo: Double?,
                              expiresAt: Double?, flaggedWrong: Int, useful: Int) throws -> Memory {
        Memory(id: id, scope: try MemoryScope(scope), title: title, content: content, tags: self.tags(tags),
               createdAt: Date(timeIntervalSince1970: createdAt), updatedAt: Date(timeIntervalSince1970: updatedAt),
               version: version, supersededBy: supersededBy, validFrom: Date(timeIntervalSince1970: validFrom),
               validTo: validTo.map(Date.init(timeIntervalSince1970:)), expiresAt: expiresAt.map(Date.init(timeIntervalSince1970:)),
               flaggedWrong: flaggedWrong != 0, useful: useful)
    }
}

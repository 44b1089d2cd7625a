public import Foundation
public import KBContext
public import KBCore
import KBIndex
import KBMemory

/// What to assemble context for.
public struct ContextRequest: Sendable {
    public enum Target: Sendable {
        case bot(String)
        case report(ReportTemplate)
    }

    public var target: Target
    /// The user's turn (bots), or words added to every section's query (reports; may be empty).
    public var query: String
    /// Whose memories a bot may read (`user:{user}` scopes); nil for none.
    public var user: String?
    /// Tokens the context block may use. The default is 1500.
    public var budget = 1500

    public init(_ target: Target, query: String, user: String? = nil, budget: Int = 1500) {
        self.target = target
        self.query = query
        self.user = user
        self.budget = budget
    }

    /// The largest budget accepted.
    public static let maximumBudget = 100_000
}

/// A prompt block with its citations, for a bot or a report.
public struct ContextResponse: Sendable, Codable {
    public var bot: String?
    public var report: String?
    /// The bot's system prompt (bots only).
    public var system: String?
    public var query: String
    public var context: String
    public var citations: [Citation]
    public var items: [AssembledItem]
    public var tokens: Int
    public var budget: Int
    /// How tokens were counted.
    public var counter: String
    /// Memory scopes read (bots only).
    public var scopes: [String]
}

extension KnowledgeBase {
    // MARK: - Bots

    /// Makes a bot. `sources` are selectors (`/abs/path`, `tag:…`, `kind:…`).
    public func createBot(name: String, systemPrompt: String, sources: [SourceSelector] = [],
                          memoryScopes: [String] = Bot.defaultMemoryScopes) throws -> Bot {
        let bot = Bot(name: try Bot.validName(name), systemPrompt: systemPrompt, sources: sources,
                      memoryScopes: try memoryScopes.map(Bot.validScopeTemplate))
        try store.createBot(bot)
        return try store.bot(named: bot.name)
    }

    public func bots() throws -> [Bot] { try store.bots() }

    public func bot(_ name: String) throws -> Bot { try store.bot(named: name) }

    /// Changes a bot's system prompt or memory scopes (nil leaves them).
    public func updateBot(_ name: String, systemPrompt: String? = nil, memoryScopes: [String]? = nil) throws -> Bot {
        let scopes = try memoryScopes?.map(Bot.validScopeTemplate)
        return try store.updateBot(named: name) { bot in
            if let systemPrompt { bot.systemPrompt = systemPrompt }
            if let scopes { bot.memoryScopes = scopes }
        }
    }

    /// Adds a knowledge source to a bot (adding one it has changes nothing).
    public func addBotSource(_ name: String, _ selector: SourceSelector) throws -> Bot {
        try store.updateBot(named: name) { bot in
            if !bot.sources.contains(selector) { bot.sources.append(selector) }
        }
    }

    /// Removes a knowledge source from a bot; fails when the bot does not have it.
    public func removeBotSource(_ name: String, _ selector: SourceSelector) throws -> Bot {
        try store.updateBot(named: name) { bot in
            guard bot.sources.contains(selector) else {
                throw KBError(.notFound, "Bot \(name) has no source \(selector). `kb bot show \(name)` lists its sources.")
            }
            bot.sources.removeAll { $0 == selector }
        }
    }

    public func deleteBot(_ name: String) throws { try store.deleteBot(named: name) }

    /// Parses a selector given by a user: `tag:…`, `kind:…`, or a path (made absolute; a folder
    /// selects what is inside it).
    public static func selector(_ text: String) throws -> SourceSelector {
        if text.hasPrefix("tag:") || text.hasPrefix("kind:") { return try SourceSelector(text) }
        return try SourceSelector(sourcePrefix(text))
    }

    // MARK: - Context

    /// Prompt context for a bot's turn or a report: knowledge snippets (only from the bot's own
    /// sources) and, for bots, memories of the scopes the bot may read, assembled within the budget.
    public func context(_ request: ContextRequest, counter: any TokenCounter = ConservativeTokenCounter(),
                        options: ContextOptions = ContextOptions()) async throws -> ContextResponse {
        guard (1...ContextRequest.maximumBudget).contains(request.budget) else {
            throw KBError(.invalidArgument, "The budget must be between 1 and \(ContextRequest.maximumBudget) tokens; got \(request.budget).")
        }
        let assembler = ContextAssembler(counter: counter, options: options)
        let query = request.query.trimmingCharacters(in: .whitespacesAndNewlines)
        switch request.target {
        case .bot(let name):
            let bot = try bot(name)
            guard !query.isEmpty else { throw KBError(.invalidArgument, "Give the text to find context for (the user's turn).") }
            var items: [ContextItem] = []
            if let user = request.user { _ = try MemoryScope.user(user) }   // a user id must make a valid scope
            let scopes = bot.scopes(user: request.user)
            // One query embedding serves both searches.
            let vector = bot.sources.isEmpty && scopes.isEmpty ? nil : try await queryVector(query)
            if !bot.sources.isEmpty {
                var search = SearchQuery(query)
                search.selectors = bot.sources
                search.limit = 24
                search.excerpts = false
                items += try await self.search(search, queryVector: vector).hits.map(Self.item)
            }
            if !scopes.isEmpty {
                var recall = MemoryQuery(query)
                recall.scopes = scopes
                recall.limit = 8
                items += try await self.recall(recall, queryVector: vector).hits.map(Self.item)
            }
            let assembled = try assembler.assemble([ContextSection(items: items, budget: request.budget, maxItems: 10)], budget: request.budget)
            return ContextResponse(
                bot: bot.name, report: nil, system: bot.systemPrompt, query: query, context: assembled.context,
                citations: assembled.citations, items: assembled.items, tokens: assembled.tokens, budget: assembled.budget,
                counter: assembled.counter, scopes: scopes.map(\.name))
        case .report(let template):
            let frame = assembler.minimumBudget
            let room = max(0, request.budget - frame)
            var sections: [ContextSection] = []
            for section in template.sections {
                var search = SearchQuery(query.isEmpty ? section.query : section.query + " " + query)
                search.tags = section.tags
                search.limit = max(section.snippets * 3, 8)
                search.excerpts = false
                let hits = try await self.search(search).hits
                sections.append(ContextSection(name: section.name, items: hits.map(Self.item),
                                               budget: Int(Double(room) * section.share), maxItems: section.snippets))
            }
            let assembled = try assembler.assemble(sections, budget: request.budget)
            return ContextResponse(
                bot: nil, report: template.name, system: nil, query: query, context: assembled.context,
                citations: assembled.citations, items: assembled.items, tokens: assembled.tokens, budget: assembled.budget,
                counter: assembled.counter, scopes: [])
        }
    }

    static func item(_ hit: SearchHit) -> ContextItem {
        ContextItem(
            kind: hit.kind, text: hit.snippet.text, score: hit.score, sourcePath: hit.sourcePath, sourceTitle: hit.sourceTitle,
            ordinal: hit.snippet.ordinal, snippetIDs: [hit.snippetID], pages: hit.snippet.pages,
            headingPath: hit.snippet.headingPath, tags: hit.snippet.tags)
    }

    static func item(_ hit: MemoryHit) -> ContextItem {
        ContextItem(
            kind: .memory, text: hit.memory.content, score: hit.score, sourcePath: hit.memory.sourcePath,
            sourceTitle: hit.memory.title ?? "", tags: hit.memory.tags, memoryID: hit.memory.id, scope: hit.memory.scope.name)
    }
}

import Foundation
public import KBContext
public import KBCore
import KBStore
import KBMemory

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
    /// Set when the snippets and memories came from keywords alone because the query could not
    /// be embedded.
    public var degraded: Degraded?
    /// What a bot's knowledge was searched with when the request had a history (the turn
    /// first, then the turn with earlier turns, and each query's weight in the fusion).
    public var retrieval: Retrieval?
}

/// The queries a conversational context request searched.
public struct Retrieval: Sendable, Hashable, Codable {
    public var queries: [PlannedQuery]
}

extension KnowledgeBase {
    /// Prompt context for a bot's turn or a report: knowledge snippets (only from the bot's own
    /// sources) and, for bots, memories of the scopes the bot may read, assembled within the
    /// budget. `reports` are the templates a request may name.
    public func context(_ request: ContextRequest, reports: [String: ReportTemplate] = [:], counter: any TokenCounter = ConservativeTokenCounter(),
                        options: ContextOptions = ContextOptions()) async throws -> ContextResponse {
        let valid = try request.validated(limits)
        let (query, budget) = (valid.query, valid.budget)
        let assembler = ContextAssembler(counter: counter, options: options)
        switch valid.target {
        case .bot(let name, let user):
            return try await botContext(name, query: query, history: valid.history, filters: valid.filters, user: user, budget: budget,
                                        assembler: assembler)
        case .report(let name):
            guard let template = reports[name] else {
                let known = reports.keys.sorted()
                throw KBError(.notFound, "No report is named \(name). "
                    + (known.isEmpty ? "Start kb serve (or kb mcp) with --reports FOLDER to offer report templates." : "Known reports: \(known.joined(separator: ", ")).")
                )
            }
            return try await reportContext(template, query: query, filters: valid.filters, budget: budget, assembler: assembler)
        }
    }

    /// The bot's knowledge and memories: the turn (and, with a history, the queries
    /// `ConversationPlan` makes of it) is embedded first, then one snapshot finds the bot and runs
    /// both searches. Their candidates go to the assembler as ranked: it is the one place context
    /// items are deduplicated and diversified.
    func botContext(_ name: String, query: String, history: [ConversationTurn], filters: ContextFilters, user: String?, budget: Int,
                    assembler: ContextAssembler) async throws -> ContextResponse {
        let plan = ConversationPlan.queries(turn: query, history: history, use: .fused)
        let (bot, scopes, knowledge, recalled) = try await withQueryVectors(plan.map(\.text), needed: true, mayDegrade: true) { snapshot, vectors, record, degraded in
            let bot = try snapshot.bot(named: name)
            var knowledge = SearchQuery(query)
            knowledge.selectors = bot.sources
            knowledge.user = user
            knowledge.limit = 24
            knowledge.excerpts = false
            filters.apply(to: &knowledge)
            var recall = MemoryQuery(query)
            recall.scopes = bot.scopes(user: user)
            recall.limit = 8
            let found = bot.sources.isEmpty ? nil
                : try self.rank(knowledge, plan: plan, vectors: vectors, record: record, degraded: degraded, collapsing: false,
                                approximatingLargeScans: true, in: snapshot)
            let recalled = try recall.scopes.isEmpty ? nil
                : self.rank(Self.recallSearch(recall), plan: plan, vectors: vectors, record: record, degraded: degraded, collapsing: false, in: snapshot)
            let memories = try recalled.map { try snapshot.memories(sourcePaths: $0.hits.map(\.sourcePath)) } ?? [:]
            return (bot, recall.scopes, found, recalled.map { Self.recalled(recall, $0, memories: memories) })
        }
        var items: [ContextItem] = knowledge?.hits.map(Self.item) ?? []
        items += recalled?.hits.map(Self.item) ?? []
        let assembled = try assembler.assemble([ContextSection(items: items, budget: budget, maxItems: 10)], budget: budget)
        var response = ContextResponse(
            bot: bot.name, report: nil, system: bot.systemPrompt, query: query, context: assembled.context,
            citations: assembled.citations, items: assembled.items, tokens: assembled.tokens, budget: assembled.budget,
            counter: assembled.counter, scopes: scopes.map(\.name), degraded: knowledge?.degraded ?? recalled?.degraded)
        if plan.count > 1 { response.retrieval = Retrieval(queries: plan) }
        return response
    }

    /// A report's sections, each searched with its own query and filters (and the request's);
    /// a section that finds nothing — retrieval failed, or the embedder is down and keywords
    /// found nothing — is filled with its curated fallback texts, marked as such.
    func reportContext(_ template: ReportTemplate, query: String, filters: ContextFilters, budget: Int,
                       assembler: ContextAssembler) async throws -> ContextResponse {
        let room = max(0, budget - assembler.minimumBudget)
        var sections: [ContextSection] = []
        var degraded: Degraded?
        for section in template.sections {
            var search = SearchQuery(query.isEmpty ? section.query : section.query + " " + query)
            search.tags = section.tags
            search.anyTags = section.anyTags
            search.kinds = Set(section.kinds)
            search.limit = max(section.snippets * 3, 8)
            search.excerpts = false
            var sectionFilters = filters
            if !filters.anyTags.isEmpty, !section.anyTags.isEmpty {
                // Both narrow: a snippet must carry one of each list; the section's list wins here
                // and the request's is checked below.
                sectionFilters.anyTags = section.anyTags
            }
            sectionFilters.apply(to: &search)
            var hits = try await searches([search], collapsing: false) { _, _ in }.searches[0]
            if !filters.anyTags.isEmpty, !section.anyTags.isEmpty {
                hits.hits = hits.hits.filter { hit in filters.anyTags.contains { hit.snippet.tags.contains($0) } }
            }
            degraded = degraded ?? hits.degraded
            let items = hits.hits.isEmpty ? Self.fallbackItems(section, report: template.name) : hits.hits.map(Self.item)
            sections.append(ContextSection(name: section.name, items: items,
                                           budget: Int(Double(room) * section.share), maxItems: section.snippets))
        }
        let assembled = try assembler.assemble(sections, budget: budget)
        return ContextResponse(
            bot: nil, report: template.name, system: nil, query: query, context: assembled.context,
            citations: assembled.citations, items: assembled.items, tokens: assembled.tokens, budget: assembled.budget,
            counter: assembled.counter, scopes: [], degraded: degraded)
    }

    /// A section's curated fallback texts as context items, each its own source
    /// (`report:NAME#SECTION.N`, so that none is merged with another).
    static func fallbackItems(_ section: ReportTemplate.Section, report: String) -> [ContextItem] {
        section.fallback.enumerated().map { index, fallback in
            var item = ContextItem(kind: .note, text: fallback.text, score: 0, sourcePath: "report:\(report)#\(section.name).\(index + 1)",
                                   sourceTitle: fallback.title, headingPath: [section.name])
            item.fallback = true
            return item
        }
    }

    static func item(_ hit: SearchHit) -> ContextItem {
        ContextItem(
            kind: hit.kind, text: hit.snippet.text, score: hit.score, sourcePath: hit.sourcePath, sourceTitle: hit.sourceTitle,
            ordinal: hit.snippet.ordinal, snippetIDs: [hit.snippetID], pages: hit.snippet.pages,
            headingPath: hit.snippet.headingPath, tags: hit.snippet.tags, ocr: hit.snippet.ocr)
    }

    static func item(_ hit: MemoryHit) -> ContextItem {
        ContextItem(
            kind: .memory, text: hit.memory.content, score: hit.score, sourcePath: hit.memory.sourcePath,
            sourceTitle: hit.memory.title ?? "", tags: hit.memory.tags, memoryID: hit.memory.id, scope: hit.memory.scope.name)
    }
}

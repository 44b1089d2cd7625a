import Foundation
import KBContext
import KBCore
import KBMemory
import KBRequests
import KBRetrieval
import KBStore

/// Prompt context for a bot's turn or a report: the retrieval (`Retriever`, with a bot's
/// knowledge and its user's memories as two arms of one retrieval), then assembly within the
/// budget (`ContextAssembler`). Holds no state of its own.
struct ContextBuilder: Sendable {
    let store: any IndexStore
    let limits: Limits
    let retriever: Retriever
    let memoryBook: MemoryBook

    var profile: RetrievalProfile { retriever.profile }

    /// Prompt context for a bot's turn or a report: knowledge snippets (only from the bot's own
    /// sources) and, for bots, memories of the scopes the bot may read, assembled within the
    /// budget. `reports` are the templates a request may name.
    ///
    /// A scoped token gets context only through its bots, for users of its scopes, and for
    /// reports with the right `reports`.
    func context(_ checked: Checked<ContextRequest>, reports: [String: ReportTemplate] = [:], counter: any TokenCounter = ConservativeTokenCounter(),
                        options: ContextOptions = ContextOptions(), as caller: Caller) async throws -> ContextResponse {
        let valid = checked.valid
        switch valid.target {
        case .bot(let name, let user):
            try caller.requireBot(name)
            if let user { try caller.requireScopes([try MemoryScope.user(user)], writing: false) }
        case .report:
            try caller.require(.reports, writing: false, "assemble report context")
        }
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
        let profile = self.profile
        // The bot is read in the ranking's snapshot; its knowledge and its user's memories are two
        // arms of one retrieval, over the same planned queries.
        let (made, results, memories) = try await retriever.retrieve(
            query, history: history, use: .fused, needsVectors: true, mayDegrade: true,
            arms: { snapshot in
                let bot = try snapshot.bot(named: name)
                var knowledge = SearchQuery(query)
                knowledge.selectors = bot.sources
                knowledge.user = user
                knowledge.limit = profile.contextSnippets
                knowledge.excerpts = false
                filters.apply(to: &knowledge)
                var recall = MemoryQuery(query)
                recall.scopes = bot.scopes(user: user)
                recall.limit = profile.contextMemories
                recall.asOf = filters.memoriesAsOf
                var arms: [Retriever.Arm] = []
                if !bot.sources.isEmpty { arms.append(Retriever.Arm(knowledge, collapsing: false, approximatingLargeScans: true)) }
                if !recall.scopes.isEmpty { arms.append(Retriever.Arm(memoryBook.recallSearch(recall), collapsing: false)) }
                return ((bot: bot, recall: recall), arms)
            },
            extra: { snapshot, made, results in
                made.recall.scopes.isEmpty ? [:] : try snapshot.memories(sourcePaths: results.last!.hits.map(\.sourcePath))
            })
        let (bot, recall) = made
        let knowledge = bot.sources.isEmpty ? nil : results.first
        let recalled = recall.scopes.isEmpty ? nil : results.last.map { MemoryBook.recalled(recall, $0, memories: memories) }
        var items: [ContextItem] = knowledge?.hits.map(Self.item) ?? []
        items += recalled?.hits.map(Self.item) ?? []
        let scopes = recall.scopes
        // What was searched, the rewriter's queries included: the plan the retrieval made, once.
        let plan = results.first?.queries
        let assembled = try assembler.assemble([ContextSection(items: items, budget: budget, maxItems: profile.contextItems)], budget: budget)
        var response = ContextResponse(
            bot: bot.name, report: nil, system: bot.systemPrompt, query: query, context: assembled.context,
            citations: Self.identified(assembled.citations), items: assembled.items, tokens: assembled.tokens, budget: assembled.budget,
            counter: assembled.counter, scopes: scopes.map(\.name), degraded: knowledge?.degraded ?? recalled?.degraded)
        if let plan, plan.count > 1 { response.retrieval = Retrieval(queries: plan) }
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
            search.limit = max(section.snippets * profile.sectionWidening, profile.hits)
            search.excerpts = false
            var sectionFilters = filters
            if !filters.anyTags.isEmpty, !section.anyTags.isEmpty {
                // Both narrow: a snippet must carry one of each list; the section's list wins here
                // and the request's is checked below.
                sectionFilters.anyTags = section.anyTags
            }
            sectionFilters.apply(to: &search)
            var hits = try await retriever.search(search, collapsing: false) { _, _ in () }.results
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
            citations: Self.identified(assembled.citations), items: assembled.items, tokens: assembled.tokens, budget: assembled.budget,
            counter: assembled.counter, scopes: [], degraded: degraded)
    }

    /// Citations with the ids the sources API lists their sources by (not memories' or fallbacks').
    static func identified(_ citations: [Citation]) -> [Citation] {
        citations.map { citation in
            var citation = citation
            if citation.memoryID == nil, citation.fallback != true { citation.sourceID = SourceInfo.id(ofPath: citation.path) }
            return citation
        }
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

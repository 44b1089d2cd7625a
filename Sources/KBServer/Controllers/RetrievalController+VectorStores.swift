import Foundation
import Hummingbird
import KBCore
import KBKit
import KBRequests

extension RetrievalController {
    /// `POST /v1/vector_stores/{id}/search`: OpenAI's vector store search over a bot's knowledge
    /// (the store's id is the bot's name), so clients written for OpenAI's file search can ask
    /// kb. It is kb's search with the bot (hybrid, the caller's rights); each hit is a result
    /// with its source as the file, `attributes` its citation fields and tags, `content` its
    /// text. Filters `eq` (a tag `key:value`, or `kind`), `in` (any of those tags, or kinds) and `and`
    /// of them are read; others are refused, as is `rewrite_query` (kb does not rewrite here).
    func searchVectorStore(_ request: Request, bot: String, as caller: Caller) async throws -> Response {
        let buffer = try await request.body.collect(upTo: maxBodyBytes)
        let body = try API.decode(API.VectorStoreSearchBody.self, from: Data(buffer: buffer))
        let queries = body.query.texts.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard !queries.isEmpty, queries.count <= 8, queries.allSatisfy({ !$0.isEmpty }) else {
            throw KBError(.invalidArgument, "query must be a non-empty text or 1 to 8 of them.")
        }
        let limit = body.max_num_results ?? 10
        guard (1...50).contains(limit) else { throw KBError(.invalidArgument, "max_num_results must be between 1 and 50; got \(limit).") }
        if body.rewrite_query == true {
            throw KBError(.invalidArgument, "rewrite_query is not done by this endpoint; send false (kb's search already plans the query), or use POST /v1/search with a rewriter.")
        }
        var filters = (tags: [String](), anyTags: [String](), kinds: [String]())
        if let given = body.filters, given != .null { try Self.readFilter(given, into: &filters) }
        // A kind no source can have finds nothing (a filter, not a mistake).
        let kinds = Set(SourceKind.documents.map(\.rawValue))
        if !filters.kinds.isEmpty {
            filters.kinds = filters.kinds.filter(kinds.contains)
            if filters.kinds.isEmpty { return try Answers.json(API.VectorStoreSearchPage(search_query: queries, data: [])) }
        }

        // Each query is one of kb's searches through the bot; a snippet found by several keeps its best score.
        var best: [Int64: SearchHit] = [:]
        for query in queries {
            var search = SearchRequest(query: query)
            search.bot = bot
            search.k = limit
            search.tags = filters.tags.isEmpty ? nil : filters.tags
            search.anyTags = filters.anyTags.isEmpty ? nil : filters.anyTags
            search.kinds = filters.kinds.isEmpty ? nil : filters.kinds
            for hit in try await kb.search(search, as: caller).hits where (best[hit.snippetID]?.score ?? -.infinity) < hit.score {
                best[hit.snippetID] = hit
            }
        }
        let threshold = body.ranking_options?.score_threshold ?? -.infinity
        let hits = best.values.filter { $0.score >= threshold }.sorted { $0.score > $1.score }.prefix(limit)
        let data = hits.map { hit in
            var attributes: [String: KBCore.JSONValue] = ["path": .string(hit.sourcePath), "kind": .string(hit.kind.rawValue),
                                                          "start": .integer(hit.snippet.start), "end": .integer(hit.snippet.end)]
            if let pages = hit.snippet.pages {
                attributes["page"] = .integer(pages.start)
                attributes["pageLabel"] = .string(pages.citation)
            }
            if !hit.snippet.headingPath.isEmpty { attributes["heading"] = .string(hit.snippet.headingPathString) }
            for tag in hit.snippet.tags where attributes[tag.key ?? tag.name] == nil {
                attributes[tag.key ?? tag.name] = tag.key == nil ? .bool(true) : .string(tag.value)
            }
            let id = Source.uploadID(path: hit.sourcePath) ?? SourceInfo.fileID(hit.sourcePath)
            return API.VectorStoreResult(file_id: id, filename: hit.sourceTitle, score: hit.score, attributes: attributes,
                                         content: [.init(text: hit.snippet.text)])
        }
        return try Answers.json(API.VectorStoreSearchPage(search_query: queries, data: Array(data)))
    }

    /// OpenAI's attribute filters as kb's tag and kind filters.
    static func readFilter(_ filter: KBCore.JSONValue, into filters: inout (tags: [String], anyTags: [String], kinds: [String])) throws {
        guard case .object(let object) = filter, case .string(let type)? = object["type"] else {
            throw KBError(.invalidArgument, "filters must be {\"type\": \"eq\", \"key\", \"value\"}, {\"type\": \"in\", …} or {\"type\": \"and\", \"filters\": […]}.")
        }
        func text(_ value: KBCore.JSONValue) throws -> String {
            switch value {
            case .string(let text):
                guard text.contains(where: { !$0.isWhitespace }) else { throw KBError(.invalidArgument, "A filter's value is empty; give a tag's value.") }
                return text
            case .integer(let number): return String(number)
            case .number(let number): return String(number)
            case .bool(let flag): return String(flag)
            default: throw KBError(.invalidArgument, "A filter's value must be a string, number or boolean; got \(value).")
            }
        }
        let fields: Set<String> = type == "and" ? ["type", "filters"] : ["type", "key", "value"]
        if let unknown = object.keys.sorted().first(where: { !fields.contains($0) }) {
            throw KBError(.invalidArgument, "A filter of type \(type) has the unknown field \"\(unknown)\"; it takes \(fields.sorted().joined(separator: ", ")).")
        }
        if case .string(let key)? = object["key"], key.isEmpty || key.contains(where: { $0.isWhitespace || $0 == ":" }) {
            throw KBError(.invalidArgument, "A filter's key '\(key)' must be a tag's key: no spaces and no ':'.")
        }
        switch type {
        case "and":
            guard case .array(let parts)? = object["filters"] else { throw KBError(.invalidArgument, "An \"and\" filter needs \"filters\": […].") }
            for part in parts { try readFilter(part, into: &filters) }
        case "eq":
            guard case .string(let key)? = object["key"], let value = object["value"] else {
                throw KBError(.invalidArgument, "An \"eq\" filter needs \"key\" and \"value\".")
            }
            if key == "kind" {
                guard filters.kinds.isEmpty else { throw KBError(.unprocessable, "kb reads one kind filter (eq or in) per request.") }
                filters.kinds = [try text(value)]
            } else {
                filters.tags.append(key + ":" + (try text(value)))
            }
        case "in":
            guard case .string(let key)? = object["key"], case .array(let values)? = object["value"], !values.isEmpty else {
                throw KBError(.invalidArgument, "An \"in\" filter needs \"key\" and a list \"value\" of one or more values.")
            }
            if key == "kind" {
                guard filters.kinds.isEmpty else { throw KBError(.unprocessable, "kb reads one kind filter (eq or in) per request.") }
                filters.kinds = try values.map(text)
            } else {
                guard filters.anyTags.isEmpty else {
                    throw KBError(.unprocessable, "kb reads one \"in\" filter on tags per request (any of its values); combine the others with eq.")
                }
                filters.anyTags = try values.map { key + ":" + (try text($0)) }
            }
        default:
            throw KBError(.invalidArgument, "kb filters a vector store search by eq, in and and (tags key:value, and kind); \(type) is not read.")
        }
    }
}

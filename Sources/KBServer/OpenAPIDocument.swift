import Foundation
import KBKit
import KBChat
import KBContext
import KBCore
import KBIngest
import KBRequests
import KBStore

/// The OpenAPI 3.1 description of `kb serve`, served at `GET /openapi.json`. Request bodies are
/// the schemas of the request types, with the service's limits; answers are derived from their
/// types (`answerTypes`, `SchemaDerivation`); only shapes kb passes through are written here.
enum OpenAPIDocument {
    /// The document depends on the service's limits only (not on the model installed), so that
    /// the one KBClient is generated from (`Sources/KBClient/openapi.json`) is what a `kb serve`
    /// with the default limits serves, whichever model it runs.
    static func json(_ limits: Limits, maxEmbeddingInputs: Int = ServiceConfiguration().maxEmbeddingInputs) -> String {
        (try? KBJSON.text(document(limits, maxEmbeddingInputs: maxEmbeddingInputs), pretty: true)) ?? "{}"
    }

    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
    static func array(_ items: JSONValue) -> JSONValue { ["type": "array", "items": items] }
    static let string: JSONValue = ["type": "string"]
    static let integer: JSONValue = ["type": "integer"]
    static let number: JSONValue = ["type": "number"]
    static let boolean: JSONValue = ["type": "boolean"]
    /// An object kb makes: closed (`additionalProperties: false`), so an answer's field that its
    /// document lacks fails the answer check (`AnswerSchema`).
    static func object(_ properties: [String: JSONValue], required: [String] = []) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "object", "properties": .object(properties), "additionalProperties": false]
        if !required.isEmpty { schema["required"] = .array(required.map { .string($0) }) }
        return .object(schema)
    }

    static func body(_ schema: String) -> JSONValue {
        ["required": true, "content": ["application/json": ["schema": ref(schema)]]]
    }

    static func responses(_ ok: (String, JSONValue), also: [String] = [], errors: [Int] = [400]) -> JSONValue {
        var result: [String: JSONValue] = [:]
        for code in [ok.0] + also { result[code] = ["description": "Success", "content": ["application/json": ["schema": ok.1]]] }
        let descriptions = [400: "Bad input", 401: "Missing, wrong, expired or revoked bearer token",
                            403: "The token lacks the right (scope, bot or allow) the request needs, or a web page of another origin asked (kb serve --allow-origin)",
                            404: "Not found", 409: "Conflict",
                            413: "Body too large", 415: "Not a media type kb reads, or not the one the body is (a JSON body must be sent as application/json)",
                            421: "A host name kb does not answer to (kb serve --allowed-host)",
                            422: "Cannot be done with this index", 500: "Internal error", 502: "The language model failed or gave an answer kb does not accept",
                            503: "The embedder is unavailable, or the index's database cannot be reached (code database_unavailable, with Retry-After: try again then)", 504: "The language model gave no answer in time (kb serve --llm-timeout)"]
        for code in Set(errors + [401, 403, 421, 500, 503]).sorted() {
            var response: [String: JSONValue] = ["description": .string(descriptions[code]!), "content": ["application/json": ["schema": ref("Error")]]]
            if code == 503 { response["headers"] = ["Retry-After": ["description": "When the database cannot be reached: seconds to wait before trying again", "schema": ["type": "integer"]]] }
            result[String(code)] = .object(response)
        }
        return .object(result)
    }

    static func operation(_ id: String, _ summary: String, body: String? = nil, ok: (String, JSONValue), also: [String] = [],
                          errors: [Int] = [400], parameters: [JSONValue] = [], open: Bool = false) -> JSONValue {
        var op: [String: JSONValue] = ["operationId": .string(id), "summary": .string(summary),
                                       "responses": responses(ok, also: also, errors: errors + (body == nil ? [] : [415]))]
        if let body { op["requestBody"] = self.body(body) }
        if !parameters.isEmpty { op["parameters"] = .array(parameters) }
        if open { op["security"] = [] }
        return .object(op)
    }

    static func pathParameter(_ name: String, _ description: String, pattern: String) -> JSONValue {
        ["name": .string(name), "in": "path", "required": true, "description": .string(description),
         "schema": ["type": "string", "pattern": .string(pattern)]]
    }

    static func memoryID(_ description: String) -> JSONValue { pathParameter("id", description, pattern: Pattern.memoryID) }
    static let botName = pathParameter("name", "The bot's name.", pattern: Pattern.botName)

    static func queryParameter(_ name: String, _ description: String, schema: JSONValue) -> JSONValue {
        ["name": .string(name), "in": "query", "required": false, "description": .string(description), "schema": schema]
    }

    /// A request type's fields as query parameters (a list field repeats its parameter).
    static func queryParameters(_ type: any KBRequest.Type, _ limits: Limits, excluding: Set<String> = []) -> [JSONValue] {
        guard case .object(let schema) = type.schema(limits), case .object(let properties)? = schema["properties"] else { return [] }
        let required: Set<String>
        if case .array(let names)? = schema["required"] { required = Set(names.compactMap { if case .string(let n) = $0 { n } else { nil } }) } else { required = [] }
        return properties.keys.sorted().filter { !excluding.contains($0) }.map { name in
            var parameter: [String: JSONValue] = ["name": .string(name), "in": "query", "required": .bool(required.contains(name)),
                                                  "schema": properties[name]!]
            if case .object(let property) = properties[name]!, let description = property["description"] { parameter["description"] = description }
            return .object(parameter)
        }
    }

    /// `POST /v1/sources`: a JSON text source, or a file's bytes with its fields in the query.
    static func addSource(_ limits: Limits) -> JSONValue {
        var content: [String: JSONValue] = ["application/json": ["schema": ref("SourceRequest")]]
        for type in MediaType.allCases { content[type.rawValue] = ["schema": ["type": "string", "format": "binary"]] }
        guard case .object(var op) = operation(
            "addSource",
            "Add a knowledge source: a text (JSON body, its fields in the body and no query parameters) or a file (the bytes as the body, up to \(limits.maxUploadBytes) bytes, fields as query parameters). "
          + "It is read in the background: 202 with the job (Location: /v1/jobs/{id}), or 201 when a short text was read at once.",
            ok: ("202", ref("SourceAdded")), also: ["201"], errors: [400, 404, 409, 413, 415, 422, 503],
            parameters: queryParameters(UploadRequest.self, limits, excluding: ["contentType"])) else { return .null }
        op["requestBody"] = ["required": true, "content": .object(content)]
        return .object(op)
    }

    /// `GET /healthz`: 200 "ok" once kb is warm, 503 "warming" before (no token).
    static var health: JSONValue {
        let status: JSONValue = ["description": "kb is up but still warming (loading the model, reading the index): wait before sending load",
                                 "content": ["application/json": ["schema": ref("Readiness")]]]
        guard case .object(var op) = operation(
            "health", "Readiness check (no token needed): {\"status\": \"ok\"} once the model and the index are ready, 503 {\"status\": \"warming\"} until then (a load balancer waits).",
            ok: ("200", ref("Readiness")), errors: [], open: true),
            case .object(var responses)? = op["responses"] else { return .null }
        responses["503"] = status
        op["responses"] = .object(responses)
        return .object(op)
    }

    /// A console page: HTML, or a redirect to it; no token.
    static func page(_ id: String, _ summary: String, redirect: Bool) -> JSONValue {
        var responses: [String: JSONValue] = [
            "403": ["description": "A web page of another origin asked (kb serve --allow-origin)", "content": ["application/json": ["schema": ref("Error")]]],
            "421": ["description": "A host name kb does not answer to (kb serve --allowed-host)", "content": ["application/json": ["schema": ref("Error")]]],
        ]
        if redirect {
            responses["302"] = ["description": "To /console/", "headers": ["Location": ["schema": string]]]
        } else {
            responses["200"] = ["description": "The page", "content": ["text/html": ["schema": string]]]
        }
        return ["operationId": .string(id), "summary": .string(summary), "security": [], "responses": .object(responses)]
    }

    /// `POST /v1/chat/completions`: OpenAI's request and answer, streamed as Server-Sent Events
    /// when `stream` is true.
    static func chatCompletions(_ limits: Limits) -> JSONValue {
        guard case .object(var op) = operation(
            "chatCompletions",
            "OpenAI-compatible chat completion with the bot's context: model names a bot (astro) or a bot and the upstream model (astro/llama3.1); "
          + "kb puts the bot's system prompt and context first, sends the messages on unchanged, and returns the answer with citations on each "
          + "choice's message (streamed: in a last chunk's kb field, before [DONE]).",
            body: "ChatCompletionRequest", ok: ("200", ref("ChatCompletion")), errors: [400, 404, 413, 422, 502, 503, 504]),
              case .object(var responses)? = op["responses"] else { return .null }
        responses["200"] = ["description": "Success", "content": [
            "application/json": ["schema": ref("ChatCompletion")],
            "text/event-stream": ["schema": ["type": "string", "description": "data: events, each a ChatCompletionChunk (a schema of this document), then data: [DONE]."],
                                  "x-kb-event": ref("ChatCompletionChunk")],
        ]]
        op["responses"] = .object(responses)
        return .object(op)
    }

    /// The request types, as components: what every route that takes a body decodes.
    static func requests(_ limits: Limits) -> [String: JSONValue] {
        let types: [any KBRequest.Type] = [
            SearchRequest.self, RecallRequest.self, RememberRequest.self, ContextRequest.self, BotRequest.self, SourceRequest.self,
            MemoryExtractRequest.self, TokenRequest.self, ChatOptions.self, MemoryConsolidateRequest.self, SourceSyncRequest.self,
            SourceGrepRequest.self,
        ]
        var schemas = Dictionary(uniqueKeysWithValues: types.map { ($0.schemaName, $0.schema(limits)) })
        // The path names the memory or bot these change, so their bodies leave it out.
        for (type, key) in [(MemoryChangeRequest.self as any KBRequest.Type, "id"), (BotChangeRequest.self, "name"), (MemoryFeedbackRequest.self, "id")] {
            guard case .object(var schema) = type.schema(limits), case .object(var properties) = schema["properties"] else { continue }
            properties[key] = nil
            schema["properties"] = .object(properties)
            schema["required"] = nil
            schema["minProperties"] = 1   // something to change
            schemas[type.schemaName] = .object(schema)
        }
        return schemas
    }

    /// `POST /mcp`: MCP's streamable HTTP transport, stateless. Its own refusals (Accept, the
    /// protocol version) are JSON-RPC errors; kb's (token, Origin, Host, body, media type) kb's.
    static let mcp: JSONValue = {
        guard case .object(var responses) = responses(("200", ref("MCPResponse")), errors: [400, 413, 415]) else { return [] }
        responses["202"] = ["description": "A notification, accepted (no body)"]
        responses["400"] = ["description": "Not a JSON-RPC request or notification kb reads, or an MCP protocol version it does not speak",
                            "content": ["application/json": ["schema": ["anyOf": [ref("Error"), ref("MCPError")]]]]]
        responses["406"] = ["description": "The client does not accept application/json", "content": ["application/json": ["schema": ref("MCPError")]]]
        return [
            "operationId": "mcp",
            "summary": "The Model Context Protocol over streamable HTTP, stateless (no session; a JSON answer to each request, 202 to a notification): the tools and the prompt of kb mcp, acting with the bearer token's rights. Point an MCP client at this URL with the token as `Authorization: Bearer TOKEN`.",
            "requestBody": body("MCPRequest"),
            "responses": .object(responses),
        ]
    }()

    static func paths(_ limits: Limits) -> JSONValue { [
        "/healthz": ["get": health],
        "/metrics": ["get": [
            "operationId": "metrics",
            "summary": "Prometheus metrics, text format 0.0.4 (admin token only, or no token with kb serve --metrics-public).",
            "responses": [
                "200": ["description": "Success", "content": ["text/plain": ["schema": string]]],
                "401": ["description": "Missing, wrong, expired or revoked bearer token", "content": ["application/json": ["schema": ref("Error")]]],
                "403": ["description": "Only the admin token reads metrics", "content": ["application/json": ["schema": ref("Error")]]],
                "421": ["description": "A host name kb does not answer to (kb serve --allowed-host)", "content": ["application/json": ["schema": ref("Error")]]],
                "500": ["description": "Internal error", "content": ["application/json": ["schema": ref("Error")]]],
            ],
        ]],
        "/openapi.json": ["get": operation("openapi", "This document.", ok: ("200", ["type": "object"]), errors: [])],
        "/mcp": ["post": mcp],
        "/v1/status": ["get": operation("status", "What the index holds.", ok: ("200", ref("Status")), errors: [])],
        "/v1/me": ["get": operation("me", "Who the token is and what it may do (the console shows only that).", ok: ("200", ref("CallerInfo")), errors: [])],
        "/v1/reports": ["get": operation("listReports", "The report templates kb serve was started with (--reports), with their sections; a scoped token needs the right reports.",
                                         ok: ("200", array(ref("ReportTemplate"))), errors: [])],
        "/v1/usage": ["get": operation("usage", "The request log grouped by day, bot, report or route, and the embedding tokens each remote embedder used (admin only).",
                                       ok: ("200", ref("UsageReport")), errors: [400], parameters: [
                                           queryParameter("since", "How far back: 30d (the default), 12h, 90m, 2w.", schema: ["type": "string", "pattern": .string(UsageReport.sincePattern)]),
                                           queryParameter("by", "Group by day (the default), bot, report or route.", schema: ["type": "string", "enum": ["day", "bot", "report", "route"]]),
                                       ])],
        "/": ["get": page("consoleRoot", "Leads to the console (/console/).", redirect: true)],
        "/console": ["get": page("console", "The console's page, also at /console/ (no token needed: it holds no data; its API calls carry one).", redirect: false)],
        "/console/{file}": ["get": [
            "operationId": "consoleFile", "summary": "One of the console's files (script, style sheet).", "security": [],
            "parameters": [["name": "file", "in": "path", "required": true, "schema": ["type": "string"]]],
            "responses": [
                "200": ["description": "The file", "content": ["text/javascript": ["schema": string], "text/css": ["schema": string], "text/html": ["schema": string]]],
                "403": ["description": "A web page of another origin asked (kb serve --allow-origin)", "content": ["application/json": ["schema": ref("Error")]]],
                "404": ["description": "No such file", "content": ["application/json": ["schema": ref("Error")]]],
                "421": ["description": "A host name kb does not answer to (kb serve --allowed-host)", "content": ["application/json": ["schema": ref("Error")]]],
            ],
        ]],
        "/favicon.ico": ["get": [
            "operationId": "favicon", "summary": "The console's icon (what a browser asks every site for; no token needed).", "security": [],
            "responses": [
                "200": ["description": "The icon", "content": ["image/svg+xml": ["schema": string]]],
                "403": ["description": "A web page of another origin asked (kb serve --allow-origin)", "content": ["application/json": ["schema": ref("Error")]]],
                "421": ["description": "A host name kb does not answer to (kb serve --allowed-host)", "content": ["application/json": ["schema": ref("Error")]]],
            ],
        ]],
        "/v1/context": ["post": operation(
            "context", "Prompt context for a bot's turn or a report, with citations, within a token budget.",
            body: "ContextRequest", ok: ("200", ref("ContextResponse")), errors: [400, 404, 413, 422, 503])],
        "/v1/chat/completions": ["post": chatCompletions(limits)],
        "/v1/models": ["get": operation("listModels", "The bots the caller may use, as OpenAI's list of models (for a chat app's model picker).",
                                        ok: ("200", ref("ModelList")), errors: [])],
        "/v1/search": ["post": operation(
            "search", "Ranked snippets (memories only with kinds: [memory]).", body: "SearchRequest",
            ok: ("200", ref("SearchResults")), errors: [400, 404, 413, 422, 503])],
        "/v1/embeddings": ["post": operation(
            "embeddings", "OpenAI-compatible embeddings from the local model.", body: "EmbeddingsRequest",
            ok: ("200", ref("EmbeddingsResponse")), errors: [400, 404, 413, 422, 503])],
        "/v1/vector_stores/{id}/search": ["post": operation(
            "searchVectorStore", "OpenAI's vector store search over a bot's knowledge (the store's id is the bot's name): kb's search through the bot, each hit a result with its source as the file, its citation fields and tags as attributes. Filters eq, in and and on tags (key:value) and kind.",
            body: "VectorStoreSearchRequest", ok: ("200", ref("VectorStoreSearchResultsPage")), errors: [400, 403, 404, 413, 422, 503],
            parameters: [pathParameter("id", "The bot's name.", pattern: Pattern.botName)])],
        "/v1/memories": [
            "get": operation("listMemories", "Memories, oldest first.", ok: ("200", array(ref("Memory"))), parameters: [
                queryParameter("scope", "Only this scope (repeatable).", schema: ["type": "string", "pattern": .string(Pattern.scope)]),
                queryParameter("tag", "Only memories with this tag (repeatable; all must match).", schema: ["type": "string", "pattern": .string(Pattern.tag)]),
                queryParameter("all", "true to include superseded, closed, expired and wrong-flagged memories.", schema: boolean),
            ]),
            "delete": operation("eraseScope", "Erase a scope: its memories with every version, and for user:ID the user's private sources.",
                                ok: ("200", ref("Erasure")), errors: [400],
                                parameters: queryParameters(EraseRequest.self, limits)),
            "post": operation("addMemory", "Remember something (200 with created: false when the same content exists).",
                              body: "RememberRequest", ok: ("201", ref("RememberResult")), also: ["200"], errors: [400, 404, 409, 413, 422, 503]),
        ],
        "/v1/memories/search": ["post": operation(
            "searchMemories", "Recall memories of the given scopes.", body: "RecallRequest",
            ok: ("200", ref("MemoryResults")), errors: [400, 413, 422, 503])],
        "/v1/memories/extract": ["post": operation(
            "extractMemories", "Propose memories for a user from a conversation, checked against the user's memories; with apply, store them.",
            body: "MemoryExtractRequest", ok: ("200", ref("MemoryExtraction")), errors: [400, 404, 413, 422, 502, 503])],
        "/v1/memories/consolidate": ["post": operation(
            "consolidateMemories", "Propose (with apply, make) the changes that keep a scope clean: expired memories retired, contradicted facts closed, near-duplicates merged; each a new version.",
            body: "MemoryConsolidateRequest", ok: ("200", ref("MemoryConsolidation")), errors: [400, 409, 413, 422, 503])],
        "/v1/memories/{id}/feedback": ["post": operation(
            "memoryFeedback", "Feedback on a memory: wrong (hidden until confirmed), outdated (closed now), useful (ranked a little higher), confirmed; logged with the caller.",
            body: "MemoryFeedbackRequest", ok: ("200", ref("MemoryFeedbackResult")), errors: [400, 404, 409, 413, 422],
            parameters: [memoryID("The memory's id or a unique prefix.")])],
        "/v1/memories/{id}": [
            "get": operation("getMemory", "A memory with its earlier versions and the feedback given on it.", ok: ("200", ref("MemoryWithHistory")), errors: [400, 404, 422],
                             parameters: [memoryID("The memory's id or a unique prefix (4+ characters).")]),
            "patch": operation("updateMemory", "Change a memory; the previous version is kept.", body: "MemoryChangeRequest",
                               ok: ("200", ref("Memory")), errors: [400, 404, 409, 413, 422, 503],
                               parameters: [memoryID("The memory's id or a unique prefix.")]),
            "delete": operation("deleteMemory", "Delete a memory and its history.", ok: ("200", ref("Deleted")),
                                errors: [400, 404, 422], parameters: [memoryID("The memory's id or a unique prefix.")]),
        ],
        "/v1/bots": [
            "get": operation("listBots", "Every bot.", ok: ("200", array(ref("Bot"))), errors: []),
            "post": operation("createBot", "Make a bot.", body: "BotRequest", ok: ("201", ref("Bot")), errors: [400, 409, 413, 422]),
        ],
        "/v1/tokens": [
            "get": operation("listTokens", "Every scoped token, without secrets or hashes (admin token only).", ok: ("200", array(ref("Token"))),
                             errors: [403]),
            "post": operation("createToken", "Make a scoped token; the secret is in this answer only (admin token only).", body: "TokenRequest",
                              ok: ("201", ref("CreatedToken")), errors: [400, 403, 404, 409, 413]),
        ],
        "/v1/tokens/{name}": ["delete": operation(
            "revokeToken", "Revoke a scoped token (admin token only).", ok: ("200", ref("Token")), errors: [400, 403, 404],
            parameters: [pathParameter("name", "The token's name.", pattern: Pattern.botName)])],
        "/v1/bots/{name}": [
            "get": operation("getBot", "One bot.", ok: ("200", ref("Bot")), errors: [400, 404], parameters: [botName]),
            "patch": operation("updateBot", "Change a bot's system prompt, sources or memory scopes, in one transaction.", body: "BotChangeRequest",
                               ok: ("200", ref("Bot")), errors: [400, 404, 413, 422], parameters: [botName]),
            "delete": operation("deleteBot", "Delete a bot (its memories stay).", ok: ("200", ref("Deleted")),
                                errors: [400, 404], parameters: [botName]),
        ],
        "/v1/sources": [
            "get": operation("listSources", "Sources added over the API and ingested files, by path, a page at a time.",
                             ok: ("200", ref("SourceList")), errors: [400, 404], parameters: queryParameters(SourceListRequest.self, limits)),
            "post": addSource(limits),
            "delete": operation("eraseUserSources", "Remove every private source of a user (with their originals), and cancel the user's waiting uploads.",
                                ok: ("200", ref("SourcesErased")), errors: [400], parameters: [
                                    ["name": "user", "in": "query", "required": true, "description": "The user whose sources go.",
                                     "schema": ["type": "string", "pattern": .string(Pattern.userID)]],
                                ]),
        ],
        "/v1/sources/{id}": [
            "get": operation("getSource", "One source, with the bots that see it.", ok: ("200", ref("SourceInfo")), errors: [400, 404],
                             parameters: [sourceID]),
            "delete": operation("deleteSource", "Remove a source added over the API, with its snippets and original (409 for an ingested file).",
                                ok: ("200", ref("Deleted")), errors: [400, 404, 409], parameters: [sourceID]),
        ],
        "/v1/sources/{id}/reread": [
            "post": operation("rereadSource", "Read an uploaded source again from its kept original, in the background: 202 with the running job (Location: /v1/jobs/{id}); the source keeps its version until the job stores the new one (409 for a file ingested by kb ingest).",
                              body: "NoFields", ok: ("202", ref("SourceAdded")), errors: [400, 404, 409], parameters: [sourceID]),
        ],
        "/v1/sources/sync": [
            "post": operation("syncSources", "Compare an app's list of a collection ({id, sha256, title}) with what kb holds: what to upload (new, changed, retitled), what is unchanged, what kb holds that the list no longer names (removed with prune), and ids that belong to sources outside the collection.",
                              body: SourceSyncRequest.schemaName, ok: ("200", ref("SourcesSynced")), errors: [400, 413]),
        ],
        "/v1/sources/grep": [
            "post": operation("grepSources", "Find a regular expression (POSIX extended) or a text in the sources the caller may read: each match with its source, pages, headings and line; bounded in count and time (truncated says which ended it).",
                              body: SourceGrepRequest.schemaName, ok: ("200", ref("SourceMatches")), errors: [400, 404, 413]),
        ],
        "/v1/sources/{id}/text": [
            "get": operation("readSource", "A part of a source's text — pages, printed labels, a heading, or a character range — with its citation fields, at most maxCharacters at a time (next continues).",
                             ok: ("200", ref("SourceText")), errors: [400, 404, 422],
                             parameters: [sourceID] + queryParameters(SourceReadRequest.self, limits, excluding: ["source"])),
        ],
        "/v1/sources/{id}/snippets": [
            "get": operation("getSourceSnippets", "A source's snippets in order, with pages and printed labels, headings, tags, weight and OCR mark (none yet while its job runs).",
                             ok: ("200", ref("SourceSnippets")), errors: [400, 404], parameters: [sourceID]),
        ],
        "/v1/sources/{id}/pages/{page}": ["get": pagePicture()],
        "/v1/sources/{id}/pages/{page}/words": [
            "get": operation("getPageWords", "The words on a page of a PDF or scanned source and where they stand (boxes as fractions of the page from its top-left corner, in reading order: from the PDF's text layer, or placed by OCR, with the languages the source was read with, on a scan or a page without a text layer — seconds the first time, then kept): every word, or those of one snippet, to mark on the page's picture. The rights of reading the source's text.",
                             ok: ("200", ref("PageWords")), errors: [400, 404, 409, 415, 422],
                             parameters: [sourceID, pageNumber,
                                          queryParameter("snippet", "A snippet's ordinal in the source: only its words on this page (none when it is not on it).", schema: ["type": "integer", "minimum": 0, "maximum": .integer(Int.max)])]
                                 + pageReader),
        ],
        "/v1/jobs/{id}": ["get": operation("getJob", "The job that reads an added source: state, progress, error.", ok: ("200", ref("Job")),
                                           errors: [404], parameters: [pathParameter("id", "The job's id.", pattern: "^[0-9a-f-]{36}$")])],
    ] }

    static let sourceID = pathParameter("id", "The source's id, as listed.", pattern: Pattern.listedSourceID)

    static let pageNumber: JSONValue = ["name": "page", "in": "path", "required": true, "description": "The page, from 1.",
                                        "schema": ["type": "string", "pattern": "^[0-9]{1,18}$"]]
    /// Whose view a page is read in: a bot's sources, a user's private ones.
    static let pageReader: [JSONValue] = [
        queryParameter("bot", "Read as this bot sees the sources (a scoped token must name one of its bots).", schema: ["type": "string", "pattern": .string(Pattern.botName)]),
        queryParameter("user", "The user whose private sources may be read (a scoped token's scopes must cover user:NAME).", schema: ["type": "string", "pattern": "\\S"]),
    ]

    /// `GET /v1/sources/{id}/pages/{page}`: a page of a PDF or a scan as a PNG picture.
    static func pagePicture() -> JSONValue {
        guard case .object(var op) = operation(
            "getPagePicture",
            "A page of a PDF or scanned-image source as a PNG picture \(PageReadRequest.widths.lowerBound)–\(PageReadRequest.widths.upperBound) pixels wide (narrower for a page more than \(PDFPages.maximumHeight) pixels tall at that width), rendered by poppler (a PDF) or drawn from the image (a PNG, JPEG or TIFF scan) from the upload's kept original or the ingested file, and kept in the page cache. KB-Page-Count says how many pages the source has. The rights of reading the source's text; 404 for a page it does not have, 409 when the file is gone or changed, 415 for a source without pages, 422 for a PDF poppler cannot open or an image that cannot be decoded.",
            ok: ("200", string), errors: [400, 404, 409, 415, 422],
            parameters: [sourceID, pageNumber,
                         queryParameter("width", "The picture's width in pixels (default \(PageReadRequest.defaultWidth)).",
                                        schema: ["type": "integer", "minimum": .integer(PageReadRequest.widths.lowerBound), "maximum": .integer(PageReadRequest.widths.upperBound)])]
                + pageReader),
              case .object(var responses)? = op["responses"] else { return .null }
        responses["200"] = ["description": "The page's picture",
                            "headers": ["KB-Page-Count": ["description": "How many pages the source has.", "schema": integer]],
                            "content": ["image/png": ["schema": ["type": "string", "format": "binary"]]]]
        op["responses"] = .object(responses)
        return .object(op)
    }

    static let queryText: JSONValue = ["type": "string", "pattern": "\\S", "maxLength": 4000]
    static let filterValue: JSONValue = ["type": ["string", "number", "boolean"], "pattern": "\\S"]
    static let equalFilter: JSONValue = [
        "type": "object", "properties": ["type": ["enum": ["eq"]], "key": ["type": "string", "pattern": "^[^\\s:]+$"], "value": filterValue],
        "required": ["type", "key", "value"], "additionalProperties": false,
    ]
    static let inFilter: JSONValue = [
        "type": "object", "properties": ["type": ["enum": ["in"]], "key": ["type": "string", "pattern": "^[^\\s:]+$"],
                                         "value": ["type": "array", "items": filterValue, "minItems": 1, "maxItems": 64]],
        "required": ["type", "key", "value"], "additionalProperties": false,
    ]

    /// kb's answers, each described by its type (`SchemaDerivation`): the component's name and
    /// the type the service encodes.
    nonisolated(unsafe) static let answerTypes: [(name: String, type: any Decodable.Type)] = [   // metatypes: never mutated
        ("Error", ErrorBody.self), ("Readiness", Readiness.self), ("Deleted", Deleted.self),
        ("Citation", Citation.self), ("ContextItem", ContextItem.self), ("ContextResponse", ContextResponse.self),
        ("SearchHit", SearchHit.self), ("Snippet", Snippet.self), ("SearchResults", SearchResults.self),
        ("PageWords", PageWords.self), ("PageWord", PageWord.self), ("SourceSnippets", SourceSnippets.self),
        ("Memory", Memory.self), ("MemoryVersion", MemoryVersion.self), ("MemoryWithHistory", MemoryWithHistory.self),
        ("MemoryFeedbackEntry", MemoryFeedbackEntry.self), ("MemoryFeedbackResult", MemoryFeedbackResult.self),
        ("MemoryConsolidation", MemoryConsolidation.self), ("Erasure", Erasure.self), ("MemoryExtraction", MemoryExtraction.self),
        ("RememberResult", RememberResult.self), ("MemoryResults", MemoryResults.self),
        ("Token", APIToken.self), ("CreatedToken", CreatedToken.self), ("Bot", Bot.self), ("ChatAnswerInfo", ChatAnswerInfo.self),
        ("ReportTemplate", ReportTemplate.self), ("UsageReport", UsageReport.self), ("CallerInfo", CallerInfo.self),
        ("ModelList", ModelList.self), ("VectorStoreSearchResultsPage", API.VectorStoreSearchPage.self),
        ("EmbeddingsResponse", API.EmbeddingsResponse.self), ("Job", Job.self), ("SourceAdded", SourceAdded.self),
        ("SourceInfo", SourceInfo.self), ("SourceList", SourceList.self), ("SourcesErased", SourcesErased.self),
        ("SourcesSynced", SourcesSynced.self), ("SourceText", SourceText.self), ("SourceMatches", SourceMatches.self),
        ("Status", ServiceStatus.self),
    ]

    /// What the service answers with: kb's answers derived from their types; the shapes kb
    /// passes through (the upstream model's chat completion and chunks, MCP's JSON-RPC
    /// messages) and OpenAI's requests written here.
    static func answers(_ limits: Limits = Limits(), maxEmbeddingInputs: Int) -> [String: JSONValue] {
        // A type that cannot be derived is a programmer's error the tests meet at once.
        let derivation = SchemaDerivation(components: answerTypes)
        var schemas = try! derivation.schemas()
        schemas.merge(passedThrough(limits, maxEmbeddingInputs: maxEmbeddingInputs, derivation: derivation)) { derived, _ in derived }
        return schemas
    }

    static func passedThrough(_ limits: Limits, maxEmbeddingInputs: Int, derivation: SchemaDerivation) -> [String: JSONValue] { [
        // MCP's JSON-RPC messages (the protocol defines their params and results; kb lists its tools' schemas in tools/list).
        "MCPRequest": object(["jsonrpc": ["type": "string", "enum": ["2.0"]], "id": ["type": ["string", "integer"]],
                              "method": ["type": "string", "minLength": 1], "params": ["type": "object"]], required: ["jsonrpc", "method"]),
        "MCPResponse": ["type": "object", "properties": ["jsonrpc": ["type": "string", "enum": ["2.0"]], "id": ["type": ["string", "integer", "null"]],
                                                         "result": ["type": "object"], "error": ref("MCPErrorDetail")],
                        "required": ["jsonrpc"]],
        "MCPError": ["type": "object", "properties": ["jsonrpc": ["type": "string", "enum": ["2.0"]], "id": ["type": ["string", "integer", "null"]],
                                                      "error": ref("MCPErrorDetail")],
                     "required": ["jsonrpc", "error"]],
        "MCPErrorDetail": ["type": "object", "properties": ["code": integer, "message": string, "data": [:]], "required": ["code", "message"]],
        "ChatCompletionRequest": [
            "type": "object",
            "description": "OpenAI's chat completion request. Fields kb does not read (temperature, max_tokens, stop, tools, …) go to the upstream model unchanged.",
            "properties": [
                "model": ["type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}(/.+)?$", "description": "A bot (astro), or a bot and the upstream model (astro/llama3.1)."],
                "messages": [
                    "type": "array", "minItems": 1, "maxItems": .integer(limits.maxChatMessages),
                    "items": [
                        "type": "object",
                        "properties": [
                            "role": ["type": "string", "enum": ["system", "developer", "user", "assistant", "tool", "function"]],
                            // One schema with three types (maxLength bounds only a string), not anyOf with a null
                            // branch: swift-openapi-generator drops a property whose anyOf holds null.
                            "content": ["type": ["string", "array", "null"], "maxLength": .integer(limits.maxChatMessageCharacters)],
                        ],
                        "required": ["role"],
                    ],
                ],
                "stream": ["type": ["boolean", "null"]],
                "user": ["type": ["string", "null"], "pattern": .string(Pattern.userID), "description": "The end user's id, for the bot's user:{user} memories (kb.user wins)."],
                "kb": ref("ChatOptions"),
            ],
            "required": ["model", "messages"],
        ],
        "ChatCompletion": [
            "type": "object",
            "description": "The upstream model's chat completion; each choice's message carries citations, and kb says what the context was made of.",
            "properties": [
                // The upstream's choices, with its fields (index, finish_reason, the message's role and content, …): open.
                "choices": array(["type": "object", "properties": ["message": ["type": "object", "properties": ["citations": array(ref("Citation"))]]]]),
                "kb": ref("ChatAnswerInfo"),
            ],
            "required": ["choices", "kb"],
        ],
        // The stream's events are the upstream model's chunks as it sent them (open: its fields
        // pass through), then kb's own last chunk, or an error event if the upstream failed.
        "ChatCompletionChunk": [
            "type": "object",
            "description": "The data of one event of a streamed chat completion (text/event-stream): the upstream model's chunks as it sent them, then kb's last chunk (no choices, the kb field with the citations), then data: [DONE]. An upstream that fails mid-answer gives an event with error instead.",
            "properties": [
                "id": string, "object": string, "created": integer, "model": string,
                "choices": array(["type": "object", "properties": [
                    "index": integer,
                    "delta": ["type": "object", "properties": ["role": string, "content": ["type": ["string", "null"]]]],
                    "finish_reason": ["type": ["string", "null"]],
                ]]),
                "kb": ref("ChatAnswerInfo"),
                "error": try! derivation.schema(of: ChatStreamError.Detail.self),
            ],
        ],
        "NoFields": ["type": "object", "maxProperties": 0, "description": "An empty JSON object: the request takes no fields."],
        "EmbeddingsRequest": object([
            "input": ["anyOf": [["type": "string", "minLength": 1],
                                ["type": "array", "items": ["type": "string", "minLength": 1], "minItems": 1,
                                 "maxItems": .integer(maxEmbeddingInputs)]]],
            // OpenAI's optional fields may be sent as null, as some clients do.
            "model": ["type": ["string", "null"]],
            "encoding_format": ["type": ["string", "null"], "enum": ["float", "base64", .null]],
            "dimensions": ["type": ["integer", "null"], "minimum": 1,
                           "description": "The model's width, if sent (384 for both local models): kb does not shorten vectors, so any other width is a 422."],
            "user": ["type": ["string", "null"]],
            "input_type": ["type": ["string", "null"], "enum": ["passage", "document", "search_document", "query", "search_query", .null],
                           "description": "What the texts are: passages (the default, as kb ingests) or queries (as kb searches)."],
        ], required: ["input"]),
        "VectorStoreSearchRequest": object([
            "query": ["anyOf": [queryText, ["type": "array", "items": queryText, "minItems": 1, "maxItems": 8]]],
            // OpenAI's optional fields may be sent as null, as some clients do.
            "max_num_results": ["type": ["integer", "null"], "minimum": 1, "maximum": 50, "default": 10],
            "rewrite_query": ["type": ["boolean", "null"], "enum": [false, .null]],
            "filters": ["anyOf": [["type": "null"], equalFilter, inFilter,
                                  ["type": "object", "properties": ["type": ["enum": ["and"]], "filters": ["type": "array", "items": ["anyOf": [equalFilter, inFilter]], "maxItems": 32]],
                                   "required": ["type", "filters"], "additionalProperties": false]],
                        "description": "A tag key:value (or kind) equal to a value, one of values, or an and of those."],
            "ranking_options": ["type": ["object", "null"], "properties": ["ranker": ["type": ["string", "null"]],
                                                                            "score_threshold": ["type": ["number", "null"]]]],
        ], required: ["query"]),
    ] }

    static func document(_ limits: Limits, maxEmbeddingInputs: Int) -> JSONValue { [
        "openapi": "3.1.0",
        "info": [
            "title": "kb retrieval service",
            "version": "0.1.0",
            "description": "Prompt context, search, memories, bots and embeddings over one kb index. Errors are {\"error\": {\"code\", \"message\"}}.",
        ],
        "servers": [["url": "http://127.0.0.1:8080"]],
        "security": [["bearer": []]],
        "paths": paths(limits),
        "components": [
            "schemas": .object(answers(limits, maxEmbeddingInputs: maxEmbeddingInputs).merging(requests(limits)) { first, _ in first }),
            "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "description": "Required when kb serve has a token (--token or KB_API_TOKEN)."]],
        ],
    ] }
}

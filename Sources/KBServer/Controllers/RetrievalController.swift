import Foundation
import Hummingbird
import KBCore
import KBKit
import KBRequests
import NIOCore

/// `/v1/context`, `/v1/search`, `/v1/embeddings` and `/v1/vector_stores/{id}/search`.
struct RetrievalController: Controller {
    let kb: KnowledgeBase
    let maxBodyBytes: Int
    let reports: [String: ReportTemplate]
    let maxEmbeddingInputs: Int
    let embeddings: LocalEmbeddings

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.logged(.post, "context") { request, context in
            try await answer(ContextRequest.self, request) { request in
                let answer = try await kb.context(request, reports: reports, as: context.caller)
                RequestNote.set { note in
                    (note.bot, note.report, note.user, note.query) = (request.bot, request.report, request.user, request.query)
                    (note.results, note.tokens, note.budget, note.degraded) = (answer.citations.count, answer.tokens, answer.budget, answer.degraded != nil)
                }
                return answer
            }
        }
        routes.logged(.post, "search") { request, context in
            try await answer(SearchRequest.self, request) { request in
                let answer = try await kb.search(request, as: context.caller)
                RequestNote.set { note in
                    (note.bot, note.user, note.query) = (request.bot, request.user, request.query)
                    (note.results, note.degraded) = (answer.hits.count, answer.degraded != nil)
                }
                return answer
            }
        }
        routes.post("embeddings") { request, _ in try await embed(request) }
        routes.logged(.post, "vector_stores/{id}/search") { request, context in
            try await searchVectorStore(request, bot: try context.pathParameter("id"), as: context.caller)
        }
        return routes
    }

    func embed(_ request: Request) async throws -> Response {
        let buffer = try await request.body.collect(upTo: maxBodyBytes)
        guard buffer.readableBytes > 0 else { throw KBError(.invalidArgument, "The request needs a JSON body.") }
        let body = try API.decode(API.EmbeddingsBody.self, from: Data(buffer: buffer))
        let texts = body.input.texts
        guard !texts.isEmpty, texts.count <= maxEmbeddingInputs else {
            throw KBError(.invalidArgument, "input must hold 1 to \(maxEmbeddingInputs) texts; got \(texts.count).")
        }
        if let empty = texts.firstIndex(where: { $0.isEmpty }) {
            throw KBError(.invalidArgument, "input[\(empty)] is empty; every input must be a non-empty string.")
        }
        let format = body.encoding_format ?? "float"
        guard format == "float" || format == "base64" else {
            throw KBError(.invalidArgument, "encoding_format must be float or base64; got \(format).")
        }
        let model = try await embeddings.modelID()
        if let asked = body.model, !["local", model, model.lowercased(), "sentence-transformers/" + model].contains(asked) {
            throw KBError(.notFound, "The model '\(asked)' does not exist here; this service embeds with \(model).")
        }
        let role: EmbeddingRole
        switch body.input_type {
        case nil, "passage", "document", "search_document": role = .passage
        case "query", "search_query": role = .query
        case let other?:
            throw KBError(.invalidArgument, "input_type must be passage (document, search_document) or query (search_query); got \(other).")
        }
        let width = try await embeddings.dimension()
        if let dimensions = body.dimensions, dimensions != width {
            throw KBError(.unprocessable, "\(model) returns \(width) dimensions; it cannot return \(dimensions).")
        }
        let (vectors, tokens) = try await embeddings.embed(texts, role: role)
        let data = vectors.enumerated().map { index, vector in
            API.Embedding(index: index, embedding: format == "float" ? .floats(vector) : .base64(Self.base64(vector)))
        }
        return try Answers.json(API.EmbeddingsResponse(data: data, model: model, usage: .init(prompt_tokens: tokens, total_tokens: tokens),
                                                    input_type: role.rawValue))
    }

    /// Little-endian float32 bytes, base64: what OpenAI's `encoding_format: base64` returns.
    static func base64(_ vector: [Float]) -> String {
        var bytes = Data(capacity: vector.count * 4)
        for value in vector { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes.base64EncodedString()
    }
}

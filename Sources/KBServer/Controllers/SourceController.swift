import Foundation
import HTTPTypes
import Hummingbird
import KBCore
import KBKit
import KBRequests
import NIOCore

/// `/v1/sources` (texts and files added, listed, removed; a user's erased) and `/v1/jobs`.
struct SourceController: Controller {
    let kb: KnowledgeBase
    let maxBodyBytes: Int

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.logged(.post, "sources") { request, context in try await addSource(request, as: context.caller) }
        routes.logged(.get, "sources") { request, context in
            try Answers.json(try await kb.sources(try KBJSON.decode(SourceListRequest.self, query: Answers.parameters(request)), as: context.caller))
        }
        routes.logged(.delete, "sources") { request, context in
            let parameters = Answers.parameters(request)
            guard parameters.count == 1, parameters[0].key == "user" else {
                throw KBError(.invalidArgument, "DELETE /v1/sources takes one parameter, user (?user=ada): it erases that user's sources. Remove one source with DELETE /v1/sources/{id}.")
            }
            return try Answers.json(try await kb.eraseSources(user: parameters[0].value, as: context.caller))
        }
        routes.logged(.post, "sources/sync") { request, context in
            try await answer(SourceSyncRequest.self, request) { try await kb.syncSources($0, as: context.caller) }
        }
        routes.logged(.post, "sources/grep") { request, context in
            try await answer(SourceGrepRequest.self, request) { try await kb.grepSources($0, as: context.caller) }
        }
        routes.logged(.get, "sources/{id}/text") { request, context in
            let read = try KBJSON.decode(SourceReadRequest.self, query: Answers.parameters(request),
                                         adding: ["source": .string(try context.pathParameter("id"))])
            return try Answers.json(try await kb.readSource(read, as: context.caller))
        }
        routes.logged(.get, "sources/{id}") { _, context in
            try Answers.json(try await kb.source(try context.pathParameter("id"), as: context.caller))
        }
        routes.logged(.post, "sources/{id}/reread") { request, context in
            // The body is an empty JSON object (a JSON body, as every POST of kb's takes).
            let body = try await request.body.collect(upTo: maxBodyBytes)
            if body.readableBytes > 0, (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body))) != .object([:]) {
                throw KBError(.invalidArgument, "POST /v1/sources/{id}/reread takes no fields; send {} (or no body).")
            }
            let added = try await kb.reread(source: try context.pathParameter("id"), as: context.caller)
            var response = try Answers.json(added, status: .accepted)
            response.headers[.location] = "/v1/jobs/" + added.job.id
            return response
        }
        routes.get("sources/{id}/snippets") { _, context in
            try Answers.json(try await kb.snippets(ofSource: try context.pathParameter("id"), as: context.caller))
        }
        routes.get("sources/{id}/pages/{page}") { request, context in
            let (page, options) = try Self.pageQuery(request, context, allowing: ["width", "bot", "user"])
            let width = try options["width"].map { text in
                guard let width = Int(text) else { throw KBError(.invalidArgument, "width is '\(text)'; give the picture's width in pixels, e.g. width=1000.") }
                return width
            }
            let picture = try await kb.pagePicture(source: try context.pathParameter("id"), page: page, width: width,
                                                   bot: options["bot"], user: options["user"], as: context.caller)
            var headers: HTTPFields = [.contentType: "image/png", .contentLength: String(picture.png.count)]
            headers[Self.pageCountHeader] = String(picture.pages)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: picture.png)))
        }
        routes.get("sources/{id}/pages/{page}/words") { request, context in
            let (page, options) = try Self.pageQuery(request, context, allowing: ["snippet", "bot", "user"])
            let snippet = try options["snippet"].map { text in
                guard let ordinal = Int(text), ordinal >= 0 else {
                    throw KBError(.invalidArgument, "snippet is '\(text)'; give a snippet's ordinal in its source (`GET /v1/sources/{id}/snippets` lists them), e.g. snippet=3.")
                }
                return ordinal
            }
            return try Answers.json(try await kb.pageWords(source: try context.pathParameter("id"), page: page, snippet: snippet,
                                                        bot: options["bot"], user: options["user"], as: context.caller))
        }
        routes.logged(.delete, "sources/{id}") { _, context in
            try Answers.json(try await kb.removeSource(SourceRemoveRequest(id: try context.pathParameter("id")), as: context.caller))
        }
        routes.get("jobs/{id}") { _, context in try Answers.json(try await kb.job(try context.pathParameter("id"), as: context.caller)) }
        return routes
    }

    /// The number of pages of the source a page picture is of.
    static let pageCountHeader = HTTPField.Name("KB-Page-Count")!

    /// A page route's page number (from the path) and its query parameters, each at most once and
    /// each one `allowing` names.
    static func pageQuery(_ request: Request, _ context: CallerContext, allowing names: Set<String>) throws -> (Int, [String: String]) {
        let text = try context.pathParameter("page")
        guard let page = Int(text) else {
            throw KBError(.invalidArgument, "'\(text)' is not a page number; pages are numbered from 1, e.g. /pages/1.")
        }
        var options: [String: String] = [:]
        for (key, value) in Answers.parameters(request) {
            guard names.contains(key) else {
                throw KBError(.invalidArgument, "\(key) is not a parameter of this route; it takes \(names.sorted().joined(separator: ", ")).")
            }
            guard options.updateValue(value, forKey: key) == nil else { throw KBError(.invalidArgument, "\(key) is given twice; give it once.") }
        }
        return (page, options)
    }

    /// `POST /v1/sources`: a JSON body is a text source; any other body is a file, streamed into
    /// the index as it arrives (never held whole in memory), its fields in the query. Answers 202
    /// with the queued job and its `Location`, or 201 when the job is already done.
    func addSource(_ request: Request, as caller: Caller) async throws -> Response {
        let type = request.headers[.contentType] ?? ""
        let added: SourceAdded
        if BrowserPolicy.isJSON(type) {
            let query = Answers.parameters(request)
            guard query.isEmpty else {
                let names = Set(query.map(\.key)).sorted().joined(separator: ", ")
                throw KBError(.invalidArgument,
                    "POST /v1/sources with a JSON body takes its fields in the body, not as query parameters (\(names)); query parameters go with a file's bytes.")
            }
            let buffer = try await request.body.collect(upTo: maxBodyBytes)
            added = try await kb.addSource(try KBJSON.decode(SourceRequest.self, from: Data(buffer: buffer)), as: caller)
        } else {
            if let length = request.headers[.contentLength].flatMap(Int.init), length > kb.limits.maxUploadBytes {
                throw KBError(.tooLarge, "The upload is \(length) bytes; the limit is \(kb.limits.maxUploadBytes) (kb serve --max-upload).")
            }
            let upload = try await kb.beginUpload(try KBJSON.decode(UploadRequest.self, query: Answers.parameters(request),
                                                                    adding: ["contentType": .string(type)]), as: caller)
            do {
                for try await buffer in request.body { try await upload.append(Data(buffer: buffer)) }
            } catch let error as KBError {
                await upload.discard()
                throw error
            } catch {
                await upload.discard()
                throw KBError(.invalidArgument, "The upload was cut short before all its bytes arrived; nothing was kept. Send it again.")
            }
            added = try await upload.finish()
        }
        var response = try Answers.json(added, status: added.job.state == .queued ? .accepted : .created)
        response.headers[.location] = "/v1/jobs/" + added.job.id
        return response
    }
}

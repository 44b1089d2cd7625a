import Foundation
import HTTPTypes
import Hummingbird
import KBCore
import KBKit
import KBLanguageModel
import KBRequests
import MCP
import NIOCore

/// `POST /mcp`: the tools of `kb mcp` over the Model Context Protocol's streamable HTTP
/// transport, statelessly (a JSON answer to each request, 202 for a notification; no session,
/// so GET and DELETE are 405). The token, Origin and Host are checked as for every route; the
/// tools act with the request's caller, whose rights KBKit decides as for the HTTP API.
struct MCPController: Controller {
    let kb: KnowledgeBase
    let maxBodyBytes: Int
    let reports: [String: ReportTemplate]
    let chatModel: ChatModel?

    var routes: RouteCollection<CallerContext> {
        let routes = RouteCollection(context: CallerContext.self)
        routes.logged(.post, "mcp") { request, context in
            guard BrowserPolicy.isJSON(request.headers[.contentType] ?? "") else {
                throw KBError(.unsupportedMediaType, "POST /mcp takes a JSON-RPC message as application/json.")
            }
            let body = try await request.body.collect(upTo: maxBodyBytes)
            try Self.checkMCPEnvelope(Data(buffer: body))
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            // A client that accepts anything accepts JSON (the transport asks for it by name).
            if (headers["accept"] ?? "").isEmpty || headers["accept"]?.contains("*/*") == true {
                headers["accept"] = "application/json"
            }
            var service = MCPService(kb: kb, reports: reports, chatModel: chatModel)
            service.acting = context.caller
            let answer = try await service.respond(to: MCP.HTTPRequest(method: "POST", headers: headers, body: Data(buffer: body), path: "/mcp"))
            var fields = HTTPFields()
            for (name, value) in answer.headers {
                if let name = HTTPField.Name(name) { fields[name] = value }
            }
            return Response(status: .init(code: answer.statusCode), headers: fields,
                            body: answer.bodyData.map { .init(byteBuffer: ByteBuffer(data: $0)) } ?? .init())
        }
        return routes
    }

    /// A JSON-RPC request or notification as the document describes it (MCP has no batches since
    /// 2025-06-18): jsonrpc "2.0", a method, an id (a string or an integer) for a request, params an
    /// object; nothing else. Anything other is a 400 before the protocol sees it.
    static func checkMCPEnvelope(_ data: Data) throws {
        let shape = "A JSON-RPC request: {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\", \"params\": {}} (no id for a notification)."
        guard case .object(let message)? = try? JSONDecoder().decode(KBCore.JSONValue.self, from: data) else {
            throw KBError(.invalidArgument, "The body must be one JSON object. " + shape)
        }
        if let unknown = message.keys.sorted().first(where: { !["jsonrpc", "id", "method", "params"].contains($0) }) {
            throw KBError(.invalidArgument, "Unknown field \"\(unknown)\". " + shape)
        }
        guard message["jsonrpc"] == .string("2.0") else { throw KBError(.invalidArgument, "jsonrpc must be \"2.0\". " + shape) }
        guard case .string(let method)? = message["method"], !method.isEmpty else { throw KBError(.invalidArgument, "method must be a non-empty text. " + shape) }
        switch message["id"] {
        case nil, .string?, .integer?: break
        default: throw KBError(.invalidArgument, "id must be a text or a whole number. " + shape)
        }
        switch message["params"] {
        case nil, .object?: break
        default: throw KBError(.invalidArgument, "params must be an object. " + shape)
        }
    }
}

import Foundation
import Hummingbird
import KBCore
import KBKit
import KBRequests
import NIOCore

/// The routes of one resource as a type holding only what they use — the knowledge base they hand
/// each request to, the largest body they read, and whatever else the resource needs (the
/// upstream chat model, the report templates, the metrics) — as in Hummingbird's examples'
/// controllers. `RetrievalService.router` makes each and adds its `routes`.
protocol Controller: Sendable {
    var kb: KnowledgeBase { get }
    var maxBodyBytes: Int { get }
}

extension Controller {
    /// Decodes a request body into `R` (fields from the path added), answers it with `body`, and
    /// encodes the answer: all a kb route does.
    func answer<R: KBRequest, T: Encodable>(
        _ type: R.Type, _ request: Request, adding: [String: JSONValue] = [:], status: (T) -> HTTPResponse.Status = { _ in .ok },
        _ body: (R) async throws -> T
    ) async throws -> Response {
        let buffer = try await request.body.collect(upTo: maxBodyBytes)
        let decoded = try KBJSON.decode(R.self, from: Data(buffer: buffer), adding: adding)
        let value = try await body(decoded)
        return try Answers.json(value, status: status(value))
    }
}

/// How every route writes its answer, and reads a query string.
enum Answers {
    /// `value` as kb's JSON, with `status`.
    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(bytes: try KBJSON.encode(value))))
    }

    /// A request's query parameters, in order.
    static func parameters(_ request: Request) -> [(key: String, value: String)] {
        request.uri.queryParameters.map { (String($0.key), String($0.value)) }
    }
}

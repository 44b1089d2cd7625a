import Foundation
import HTTPTypes
import Hummingbird
import KBCore
import KBKit
import KBRequests
import Logging
import NIOCore

/// Gives every response an `X-Request-ID` (the request's own when it sends a sane
/// one) and turns every error into `{"error": {"code", "message"}}` with its status: kb's own
/// errors answer as Hummingbird's `HTTPResponseError`s (`KBError+HTTP`); a path that exists but
/// not for the method gets 405 with the methods its registered routes allow.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    static var requestIDHeader: HTTPField.Name { HTTPField.Name("X-Request-ID")! }

    /// The registered routes, for 405 answers.
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = Self.requestID(request.headers[Self.requestIDHeader])
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = self.response(for: error, request: request, id: id, context: context)
        }
        response.headers[Self.requestIDHeader] = id
        return response
    }

    /// The caller's id when it is 1–128 printable ASCII characters, else a new one.
    static func requestID(_ given: String?) -> String {
        if let given, (1...128).contains(given.utf8.count), given.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) { return given }
        return UUID.random().uuidString.lowercased()
    }

    func response(for error: any Error, request: Request, id: String, context: Context) -> Response {
        switch error {
        case let error as KBError:
            return error.response(to: request, id: id, context: context)
        case let error as HTTPError:
            if error.status == .notFound, error.body == nil {
                let allowed = routes.methods(for: request.uri.path)
                if !allowed.isEmpty {
                    var answer = Self.response(.methodNotAllowed, code: Self.code(.methodNotAllowed),
                                               message: "\(request.uri.path) answers \(allowed.joined(separator: ", ")), not \(request.method).")
                    answer.headers[.allow] = allowed.joined(separator: ", ")
                    return answer
                }
            }
            let message = error.body ?? (error.status == .notFound
                ? "No such endpoint: \(request.method) \(request.uri.path). GET /openapi.json lists them." : error.status.reasonPhrase)
            return Self.response(error.status, code: Self.code(error.status), message: message)
        case is NIOTooManyBytesError:
            return Self.response(.contentTooLarge, code: KBError.Code.tooLarge.rawValue, message: "The request body is over the service's limit.")
        default:
            context.logger.error("request \(id): \(request.method) \(request.uri.path) failed: \(String(describing: error))")
            return Self.response(.internalServerError, code: "internal", message: "Something went wrong inside kb (request \(id)); the server log has the details.")
        }
    }

    static func code(_ status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: KBError.Code.invalidArgument.rawValue
        case 401: "unauthorized"
        case 404: KBError.Code.notFound.rawValue
        case 405: "method_not_allowed"
        case 413: KBError.Code.tooLarge.rawValue
        default: "http_\(status.code)"
        }
    }

    static func response(_ status: HTTPResponse.Status, code: String, message: String) -> Response {
        var response = (try? Answers.json(ErrorBody(code: code, message: message), status: status)) ?? Response(status: status)
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import KBCore
import KBKit
import Logging
import NIOCore

/// Gives every response an `X-Request-ID` (the request's own when it sends a sane one) and turns
/// every error into `{"error": {"code", "message"}}` with its status. A 5xx answer says only that
/// something failed, with the request id; what failed goes to the server log under that id, so
/// no path, SQL or model detail reaches a client.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    static var requestIDHeader: HTTPField.Name { HTTPField.Name("X-Request-ID")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = Self.requestID(request.headers[Self.requestIDHeader])
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = Self.response(for: error, request: request, id: id, logger: context.logger)
        }
        response.headers[Self.requestIDHeader] = id
        return response
    }

    /// The caller's id when it is 1–128 printable ASCII characters, else a new one.
    static func requestID(_ given: String?) -> String {
        if let given, (1...128).contains(given.utf8.count), given.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) { return given }
        return UUID().uuidString.lowercased()
    }

    static func response(for error: any Error, request: Request, id: String, logger: Logger) -> Response {
        switch error {
        case let error as KBError:
            let status = status(error.code)
            guard status.code >= 500 else { return response(status, code: error.code.rawValue, message: error.message) }
            logger.error("request \(id): \(request.method) \(request.uri.path) failed (\(error.code)): \(error.message)\(error.cause.map { " — \($0)" } ?? "")")
            return response(status, code: error.code.rawValue, message: status == .serviceUnavailable
                ? "The embedder is unavailable right now (request \(id)). Try again later, or search with mode keyword."
                : "Something went wrong inside kb (request \(id)); the server log has the details.")
        case let error as HTTPError:
            if error.status == .notFound, error.body == nil {
                let allowed = RetrievalService.methods(for: request.uri.path)
                if !allowed.isEmpty {
                    var answer = response(.methodNotAllowed, code: code(.methodNotAllowed),
                                          message: "\(request.uri.path) answers \(allowed.joined(separator: ", ")), not \(request.method).")
                    answer.headers[.allow] = allowed.joined(separator: ", ")
                    return answer
                }
            }
            let message = error.body ?? (error.status == .notFound
                ? "No such endpoint: \(request.method) \(request.uri.path). GET /openapi.json lists them." : error.status.reasonPhrase)
            return response(error.status, code: code(error.status), message: message)
        case is NIOTooManyBytesError:
            return response(.contentTooLarge, code: KBError.Code.tooLarge.rawValue, message: "The request body is over the service's limit.")
        default:
            logger.error("request \(id): \(request.method) \(request.uri.path) failed: \(String(describing: error))")
            return response(.internalServerError, code: "internal", message: "Something went wrong inside kb (request \(id)); the server log has the details.")
        }
    }

    /// The HTTP status of each error code: every code named, so a new one cannot slip through as a 500.
    static func status(_ code: KBError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidArgument, .invalidText, .invalidFrontMatter, .invalidVocabulary, .unsupportedFileType: .badRequest
        case .notFound: .notFound
        case .conflict: .conflict
        case .tooLarge: .contentTooLarge
        case .unsupportedMode, .embedderMismatch, .unprocessable: .unprocessableContent
        case .modelMissing, .invalidModel, .embedding: .serviceUnavailable
        case .noSuchFile, .unreadableFile, .notAnIndex, .noIndex, .newerSchema, .database: .internalServerError
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
        var response = (try? RetrievalService.json(["error": ["code": code, "message": message]], status: status)) ?? Response(status: status)
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}

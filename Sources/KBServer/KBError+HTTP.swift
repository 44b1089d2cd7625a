import HTTPTypes
public import Hummingbird
public import KBCore

/// kb's errors as Hummingbird's `HTTPResponseError`s: the status comes from the one exhaustive
/// mapping of error codes below, the body is `{"error": {"code", "message"}}`.
extension KBError: HTTPResponseError {
    /// The HTTP status of this error's code.
    public var status: HTTPResponse.Status { Self.status(for: code) }

    /// The HTTP status of each error code: every code named, so a new one cannot slip through as a 500.
    static func status(for code: Code) -> HTTPResponse.Status {
        switch code {
        case .invalidArgument, .invalidText, .invalidFrontMatter, .invalidVocabulary, .unsupportedFileType: .badRequest
        case .notFound: .notFound
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .misdirectedRequest: .misdirectedRequest
        case .conflict: .conflict
        case .tooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .unsupportedMode, .embedderMismatch, .unprocessable: .unprocessableContent
        case .modelMissing, .invalidModel, .embedding, .databaseUnavailable: .serviceUnavailable
        case .languageModel: .badGateway
        case .upstreamTimeout: .gatewayTimeout
        case .noSuchFile, .unreadableFile, .notAnIndex, .noIndex, .newerSchema, .database: .internalServerError
        }
    }

    /// Seconds a client is told to wait (`Retry-After`) when the index's database is unreachable.
    static let retryAfterSeconds = 2

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response(to: request, id: ErrorMiddleware<BasicRequestContext>.requestID(request.headers[ErrorMiddleware<BasicRequestContext>.requestIDHeader]),
                 context: context)
    }

    /// A 4xx answer carries the code and the message. A 5xx answer says only that something
    /// failed, with the request id; what failed goes to the server log under that id, so no path,
    /// SQL or model detail reaches a client. A language model's failure (502, 504) says which
    /// model at which address and the fix, in kb's words; the model's own answer goes to the log.
    func response(to request: Request, id: String, context: some RequestContext) -> Response {
        let status = self.status
        guard status.code >= 500 else { return ErrorMiddleware<BasicRequestContext>.response(status, code: code.rawValue, message: message) }
        context.logger.error("request \(id): \(request.method) \(request.uri.path) failed (\(code)): \(message)\(cause.map { " — \($0)" } ?? "")")
        if code == .databaseUnavailable {
            // A database server restarting: the client may try again after a moment.
            var response = ErrorMiddleware<BasicRequestContext>.response(
                status, code: code.rawValue, message: "The index's database cannot be reached right now (request \(id)). Try again in a few seconds.")
            response.headers[.retryAfter] = String(Self.retryAfterSeconds)
            return response
        }
        let message = switch status {
        case .serviceUnavailable: "The embedder is unavailable right now (request \(id)). Try again later, or search with mode keyword."
        // kb's own words about the model (which one, where, the fix); what the model itself
        // answered stays in the cause, for the log.
        case .badGateway, .gatewayTimeout: "\(message) (request \(id); the server log has the details.)"
        default: "Something went wrong inside kb (request \(id)); the server log has the details."
        }
        return ErrorMiddleware<BasicRequestContext>.response(status, code: code.rawValue, message: message)
    }
}

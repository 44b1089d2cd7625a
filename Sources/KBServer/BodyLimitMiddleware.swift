import Hummingbird
import KBCore

/// Answers 413 before reading a body whose declared length is over the limit; bodies without a
/// length are cut off at the limit when read. A file uploaded to `POST /v1/sources` (any body
/// but JSON) has the upload limit instead, which its route applies.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let isUpload = BrowserPolicy.isUpload(method: request.method, path: request.uri.path, contentType: request.headers[.contentType])
        if !isUpload, let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw KBError(.tooLarge, "The request body is \(length) bytes; the limit is \(limit).")
        }
        return try await next(request, context)
    }
}

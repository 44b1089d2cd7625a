import HTTPTypes
import Hummingbird

extension RouteCollection {
    /// Registers a route whose answers the request log keeps (`kb usage`): which routes are
    /// logged is said where each is declared.
    @discardableResult
    func logged(_ method: HTTPRequest.Method, _ path: RouterPath = "",
                use handler: @escaping @Sendable (Request, Context) async throws -> Response) -> Self {
        on(path, method: method) { request, context in
            RequestNote.set { $0.logged = true }
            return try await handler(request, context)
        }
    }
}

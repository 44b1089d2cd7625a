public import Hummingbird
import KBCore
public import KBRequests

/// The context of every request kb answers. `caller` is who is asking, as `AuthMiddleware`
/// decided from the request's token; it stays nil on the routes anyone may reach (`/healthz`,
/// the console's files, `/metrics` with `--metrics-public`), which therefore cannot act for anyone.
public struct KBRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who is asking; nil until the auth middleware has decided, and on the open routes.
    public internal(set) var caller: Caller?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        caller = nil
    }
}

/// The context of a route that acts for someone. A handler reaches KBKit only through
/// `context.caller`, which is not optional here: a route that would run without a caller does not
/// compile on `KBRequestContext` (whose caller is optional), and one registered in the group of
/// this context is refused (401) when the middleware set no caller — never run as admin.
public struct CallerContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who is asking: the admin token's holder, a scoped token, or the loopback user of a service
    /// without an admin token.
    public let caller: Caller

    public init(context: KBRequestContext) throws {
        guard let caller = context.caller else {
            throw KBError(.unauthorized, "Send the API token as `Authorization: Bearer TOKEN`.")
        }
        coreContext = context.coreContext
        self.caller = caller
    }
}

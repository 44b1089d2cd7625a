import Foundation
import HTTPTypes
import Hummingbird
import KBCore

/// What kb lets a web browser do. A page of any site can make the user's browser send requests
/// to `http://127.0.0.1:8080`; without these rules it could plant memories and sources in a kb
/// that has no token (a "simple" `text/plain` POST needs no permission), or, with its own name
/// pointed at 127.0.0.1 (DNS rebinding), read everything. So kb answers only:
///
/// - requests for a **Host** it answers to: its bound address, `localhost`, `127.0.0.1`, `[::1]`
///   and the names given with `--allowed-host` (on a wildcard bind, 0.0.0.0 or ::, any IP
///   address too); others get 421;
/// - requests with no **Origin**, kb's own origin, or one listed with `--allow-origin` (answered
///   with CORS for exactly that origin); other origins, and cross-site requests a browser sends
///   without an Origin (images, scripts), get 403 — following a link to kb stays possible;
/// - **JSON bodies as JSON**: a body for a route that takes JSON must say
///   `Content-Type: application/json` (415 otherwise); file uploads keep their media types.
///
/// ```swift
/// let policy = try BrowserPolicy(ServiceConfiguration())
/// policy.judge(method: .post, path: "/v1/memories", authority: "127.0.0.1:8080", headers: [.origin: "http://evil.example"])
/// // .refuse(.forbidden, "kb refuses requests from web pages of other origins: …")
/// ```
struct BrowserPolicy: Sendable {
    /// Host names kb answers to: lowercased, IPv6 without brackets, no port.
    let hosts: Set<String>
    /// kb listens on every address (0.0.0.0 or ::): any IP literal is then one of its own.
    let anyAddress: Bool
    /// Origins whose pages may call kb, as browsers write them (`http://localhost:3000`).
    let origins: Set<String>

    /// The methods a preflight allows, and the request headers.
    static let methods = "GET, POST, PATCH, DELETE"
    static let requestHeaders = "Authorization, Content-Type, X-Request-ID"
    static let exposedHeaders = "X-Request-ID, Location, Allow, WWW-Authenticate"

    /// The strictest policy: loopback names only, no other origin. What a service whose
    /// configuration holds a bad entry falls back to until `ServiceConfiguration.validate()`
    /// (which `run()` calls first) refuses to start it.
    static let loopback = BrowserPolicy(hosts: ["localhost", "127.0.0.1", "::1"], anyAddress: false, origins: [])

    private init(hosts: Set<String>, anyAddress: Bool, origins: Set<String>) {
        (self.hosts, self.anyAddress, self.origins) = (hosts, anyAddress, origins)
    }

    /// Validates `--allow-origin` and `--allowed-host` values; a bad one is an error naming it.
    init(_ configuration: ServiceConfiguration) throws {
        var hosts: Set<String> = ["localhost", "127.0.0.1", "::1"]
        let bound = Self.bare(configuration.host.lowercased())
        anyAddress = ["0.0.0.0", "::", ""].contains(bound)
        if !anyAddress { hosts.insert(bound) }
        for name in configuration.allowedHosts {
            guard let host = Self.hostName(name) else {
                throw KBError(.invalidArgument,
                    "--allowed-host takes a host name or an IP address as clients write it, without scheme, port or path "
                  + "(--allowed-host kb.example.com); got '\(name)'.")
            }
            hosts.insert(host)
        }
        self.hosts = hosts
        var origins: Set<String> = []
        for given in configuration.allowedOrigins {
            guard given != "*", given != "null" else {
                throw KBError(.invalidArgument,
                    "--allow-origin takes the origins you trust one by one (--allow-origin http://localhost:3000); '\(given)' would let "
                  + "any web page, or any sandboxed one, act on kb.")
            }
            let trimmed = given.hasSuffix("/") ? String(given.dropLast()) : given
            guard let origin = Origin(trimmed) else {
                throw KBError(.invalidArgument,
                    "--allow-origin takes an origin: http or https, a host and an optional port, no path "
                  + "(--allow-origin https://app.example.com); got '\(given)'.")
            }
            origins.insert(origin.serialised)
        }
        self.origins = origins
    }

    enum Verdict: Equatable {
        /// Answer it; with the origin to name in CORS headers, if it is an allowed one.
        case pass(cors: String?)
        /// A CORS preflight from an allowed origin (or kb's own): answered here.
        case preflight(origin: String)
        /// Refuse it; a refused request from an allowed origin still gets CORS headers, so that
        /// its page can read why.
        case refuse(KBError.Code, String, cors: String? = nil)
    }

    static let hostField = HTTPField.Name("Host")!
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    static let secFetchMode = HTTPField.Name("Sec-Fetch-Mode")!

    /// What to do with a request: the Host first, then where it comes from, then its body's type.
    /// `routed` says whether a route answers this method on this path (a method the path does
    /// not have is answered 405, whatever its body).
    func judge(method: HTTPRequest.Method, path: String, authority: String?, headers: HTTPFields, routed: Bool = true) -> Verdict {
        // HTTP/1's first Host is the authority; another is left among the fields.
        if headers[values: Self.hostField].count > 0 {
            return .refuse(.invalidArgument, "The request has more than one Host header; send one.")
        }
        // A request without Host (HTTP/1.0) comes from no browser.
        if let authority {
            guard let (host, _) = Self.authority(authority), hosts.contains(host) || (anyAddress && Self.isIPAddress(host)) else {
                let name = Self.authority(authority)?.host ?? authority
                return .refuse(.misdirectedRequest,
                    "kb does not answer to the host name '\(name)' (Host: \(authority)): a page whose name points at this machine "
                  + "could otherwise read and change the index (DNS rebinding). If this is how you reach kb — a reverse proxy, a "
                  + "name on your network — start kb serve with --allowed-host \(name).")
            }
        }
        var cors: String?
        if let given = headers[.origin] {
            let origin = Origin(given)
            if let origin, origins.contains(origin.serialised) {
                cors = origin.serialised
            } else if let origin, let authority, origin.isOrigin(ofAuthority: authority) {
                cors = nil   // kb's own pages
            } else {
                let allow = origin.map { " If that page is yours, start kb serve with --allow-origin \($0.serialised)." } ?? ""
                return .refuse(.forbidden,
                    "kb refuses requests from web pages of other origins: this one came from \(given).\(allow)")
            }
            if method == .options, headers[.accessControlRequestMethod] != nil { return .preflight(origin: origin!.serialised) }
        } else if let site = headers[Self.secFetchSite], site == "cross-site" || site == "same-site" {
            // What a browser sends without an Origin: images, scripts, styles, and following a link.
            let navigates = (method == .get || method == .head) && headers[Self.secFetchMode] == "navigate"
            if !navigates {
                return .refuse(.forbidden,
                    "kb refuses requests that a web page of another site makes the browser send (Sec-Fetch-Site: \(site)); "
                  + "call it from a page on an origin allowed with --allow-origin, or from a program.")
            }
        }
        if routed, [.post, .put, .patch].contains(method), !Self.isUpload(method: method, path: path, contentType: headers[.contentType]),
           !Self.isJSON(headers[.contentType]) {
            let said = headers[.contentType].map { "is \($0)" } ?? "is missing"
            return .refuse(.unsupportedMediaType,
                "\(method) \(path) takes a JSON body: send it with Content-Type: application/json (this request's Content-Type \(said)).",
                cors: cors)
        }
        return .pass(cors: cors)
    }

    /// `POST /v1/sources` with any body but JSON: a file's bytes, of the media type it declares.
    static func isUpload(method: HTTPRequest.Method, path: String, contentType: String?) -> Bool {
        method == .post && path == "/v1/sources" && !isJSON(contentType)
    }

    /// `application/json` or a `+json` type, parameters (`; charset=utf-8`) allowed.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }

    /// A Host value's name (lowercased, IPv6 without brackets, a trailing dot dropped) and port;
    /// nil when it is not `name[:port]` or `[v6][:port]`.
    static func authority(_ text: String) -> (host: String, port: Int?)? {
        var name = Substring(text.lowercased())
        var port: Int?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return nil }
            let rest = name[name.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()), (0...65535).contains(value) else { return nil }
                port = value
            }
            name = name[name.index(after: name.startIndex)..<close]
            return name.isEmpty ? nil : (String(name), port)
        }
        if let colon = name.lastIndex(of: ":") {
            guard let value = Int(name[name.index(after: colon)...]), (0...65535).contains(value) else { return nil }
            port = value
            name = name[..<colon]
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else { return nil }
        return (String(name), port)
    }

    /// A host name or IP address as `--allowed-host` takes it, normalised as `authority` does; nil
    /// when it carries a scheme, a port or a path.
    static func hostName(_ text: String) -> String? {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        if bare.contains(":") { return isIPAddress(bare.lowercased()) ? bare.lowercased() : nil }
        guard let (host, port) = authority(text), port == nil else { return nil }
        return host
    }

    static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// A web origin, `scheme://host[:port]`, as the `Origin` header carries it.
    struct Origin: Equatable {
        let scheme: String
        let host: String
        let port: Int

        init?(_ text: String) {
            let lower = text.lowercased()
            guard let range = lower.range(of: "://") else { return nil }
            scheme = String(lower[..<range.lowerBound])
            guard let standard = Self.defaultPort(scheme) else { return nil }
            let rest = String(lower[range.upperBound...])
            guard !rest.contains("/"), !rest.contains("@"), let (host, port) = BrowserPolicy.authority(rest) else { return nil }
            self.host = host
            self.port = port ?? standard
        }

        static func defaultPort(_ scheme: String) -> Int? { ["http": 80, "https": 443][scheme] }

        /// As browsers write it: the default port left out, IPv6 in brackets.
        var serialised: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port == Self.defaultPort(scheme) ? "\(scheme)://\(name)" : "\(scheme)://\(name):\(port)"
        }

        /// Whether a page of this origin is one of kb's own when kb is reached as `authority`
        /// (behind a TLS proxy the origin is https and the Host has no port: both mean 443).
        func isOrigin(ofAuthority authority: String) -> Bool {
            guard let (name, given) = BrowserPolicy.authority(authority) else { return false }
            return name == host && (given ?? Self.defaultPort(scheme)) == port
        }
    }
}

/// The browser rules of ``BrowserPolicy`` for every request, and the headers every answer
/// carries: `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
/// `Cross-Origin-Resource-Policy: same-origin`, and unless the route chose its own,
/// `Cache-Control: no-store` and a `Content-Security-Policy` that lets the answer load and run
/// nothing and be framed by no page. It runs outside the error middleware, so refusals and
/// errors carry them too, and before the token is checked.
struct BrowserGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: BrowserPolicy
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        var cors: String?
        let routed = routes.methods(for: request.uri.path).contains(request.method.rawValue)
        switch policy.judge(method: request.method, path: request.uri.path, authority: request.head.authority, headers: request.headers,
                            routed: routed) {
        case .refuse(let code, let message, let origin):
            cors = origin
            let id = ErrorMiddleware<Context>.requestID(request.headers[ErrorMiddleware<Context>.requestIDHeader])
            response = KBError(code, message).response(to: request, id: id, context: context)
            response.headers[ErrorMiddleware<Context>.requestIDHeader] = id
        case .preflight(let origin):
            let methods = routes.methods(for: request.uri.path)
            response = Response(status: .noContent, headers: [
                .accessControlAllowMethods: methods.isEmpty ? BrowserPolicy.methods : methods.joined(separator: ", "),
                .accessControlAllowHeaders: BrowserPolicy.requestHeaders,
                .accessControlMaxAge: "600",
            ])
            cors = origin
        case .pass(let origin):
            response = try await next(request, context)
            cors = origin
        }
        if let cors {
            response.headers[.accessControlAllowOrigin] = cors
            response.headers[.accessControlExposeHeaders] = BrowserPolicy.exposedHeaders
        }
        if !policy.origins.isEmpty { response.headers[.vary] = "Origin" }
        Self.secure(&response.headers)
        return response
    }

    /// The headers every answer carries.
    static func secure(_ headers: inout HTTPFields) {
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[.crossOriginResourcePolicy] = "same-origin"
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
        if headers[.contentSecurityPolicy] == nil { headers[.contentSecurityPolicy] = "default-src 'none'; frame-ancestors 'none'" }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import KBCore
import NIOCore

/// The console: `/` leads to `/console/`, whose page and assets (and `/favicon.ico`) are part of the
/// binary (`ConsoleAssets`). They hold no data, so they need no token; every API call the
/// page makes carries the token the user signs in with.
struct ConsoleController {
    var routes: RouteCollection<KBRequestContext> {
        let routes = RouteCollection(context: KBRequestContext.self)
        routes.get { _, _ in Self.redirect("/console/") }
        routes.get("console") { _, _ in try Self.asset("index.html") }   // also /console/
        routes.get("console/{file}") { _, context in try Self.asset(try context.parameters.require("file")) }
        // What a browser asks every site for: the console's icon, so no page logs a failed load.
        routes.get("favicon.ico") { _, _ in try Self.asset("icon.svg") }
        return routes
    }

    /// What the console's pages may load and reach: only kb itself.
    static let consolePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
        + "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func asset(_ name: String) throws -> Response {
        guard let asset = ConsoleAssets.files[name] else {
            throw KBError(.notFound, "The console has no file named \(name).")
        }
        return Response(status: .ok, headers: [.contentType: asset.type, .contentSecurityPolicy: consolePolicy, .cacheControl: "no-cache"],
                        body: .init(byteBuffer: ByteBuffer(string: asset.text)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location])
    }
}

import Foundation
import Hummingbird

/// The routes a router answers, read from its registrations once they are made: what a 405
/// answer lists as allowed methods, and what the OpenAPI document must cover.
///
/// @unchecked Sendable: `entries` is written once, under `lock`, before the router serves, and
/// read under it.
final class RouteTable: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(method: String, path: String)] = []

    /// Takes the router's registered routes.
    func record(_ router: Router<some RequestContext>) {
        let entries = Self.entries(of: router)
        lock.withLock { self.entries = entries }
    }

    /// A router's registered routes, as method and path template (`/v1/memories/{id}`), by path,
    /// and for each path in the order GET, POST, PATCH, DELETE.
    static func entries(of router: Router<some RequestContext>) -> [(method: String, path: String)] {
        let order = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        func rank(_ method: String) -> Int { order.firstIndex(of: method) ?? order.count }
        return router.routes.map { ($0.method.rawValue, $0.path.description) }
            .sorted { $0.path != $1.path ? $0.path < $1.path : rank($0.method) < rank($1.method) }
    }

    /// The methods a path answers (empty for a path the service does not have): those of the
    /// most specific route it matches (`/v1/memories/search` before `/v1/memories/{id}`).
    func methods(for path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let matching = lock.withLock { entries }.compactMap { route -> (method: String, parameters: Int)? in
            let template = route.path.split(separator: "/", omittingEmptySubsequences: false)
            guard template.count == segments.count, zip(template, segments).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) else { return nil }
            return (route.method, template.filter { $0.hasPrefix("{") }.count)
        }
        let fewest = matching.map(\.parameters).min()
        return matching.filter { $0.parameters == fewest }.map(\.method)
    }
}

public import Foundation
public import Hummingbird
import Logging
public import ServiceLifecycle

/// A real HTTP server on 127.0.0.1 (a free port), for client tests.
public struct LiveServer: Sendable {
    public let url: URL
    public let group: ServiceGroup
    public let task: Task<Void, any Error>

    public static func start<Context: RequestContext>(_ router: Router<Context>) async throws -> LiveServer where Context.Source == ApplicationRequestContextSource {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical   // stopping a test server logs "already closed"; not news
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "test"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = stream.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        return LiveServer(url: URL(string: "http://127.0.0.1:\(port)/v1")!, group: group, task: task)
    }

    /// Shuts the server down gracefully: connections in progress are finished and closed (a
    /// cancelled server task can drop an accepted connection unclosed, which NIO traps on).
    public func stop() {
        let group = group
        Task { await group.triggerGracefulShutdown() }
    }
}

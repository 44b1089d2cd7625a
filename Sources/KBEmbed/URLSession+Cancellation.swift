public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import KBCore

extension URLSession {
    /// What `data(for:)` does, without its faults on Linux when the calling task is cancelled:
    /// there, `URLSessionTask.cancel()` runs under the task's status lock while the session's
    /// queue, finishing the request, waits for that lock to resume it (a deadlock,
    /// swift-corelibs-foundation#5412), and a cancel racing the request's end can trap in the
    /// session's task registry. Here a cancelled call throws `URLError(.cancelled)` at once and
    /// the request is never cancelled: it runs to its end or its timeout, and its answer is
    /// dropped.
    public func dataCancellingSafely(for request: URLRequest) async throws -> (Data, URLResponse) {
        typealias Pending = CheckedContinuation<(Data, URLResponse), any Error>
        let pending = LockedValue<Pending?>(nil)
        let take: @Sendable () -> Pending? = { pending.withLock { continuation in defer { continuation = nil }; return continuation } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Pending) in
                pending.withLock { $0 = continuation }
                guard !Task.isCancelled else {
                    take()?.resume(throwing: URLError(.cancelled))
                    return
                }
                dataTask(with: request) { data, response, error in
                    guard let continuation = take() else { return }   // cancelled: nobody waits
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }.resume()
            }
        } onCancel: {
            // Resumed from another thread: this handler runs under the task's status lock.
            if let continuation = take() { DispatchQueue.global().async { continuation.resume(throwing: URLError(.cancelled)) } }
        }
    }

    /// `dataCancellingSafely(for:)` for a GET of `url`.
    public func dataCancellingSafely(from url: URL) async throws -> (Data, URLResponse) {
        try await dataCancellingSafely(for: URLRequest(url: url))
    }
}

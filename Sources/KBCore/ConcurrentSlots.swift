import Foundation

/// Results that concurrent workers write by index (`DispatchQueue.concurrentPerform`), read
/// once they are done. Every slot starts empty; reading an unwritten slot gives nil.
///
/// ```swift
/// let slots = ConcurrentSlots<Int>(count: items.count)
/// DispatchQueue.concurrentPerform(iterations: items.count) { slots.set($0, work(items[$0])) }
/// let results = slots.values.map { $0! }
/// ```
///
/// @unchecked Sendable: all access to `storage` is guarded by `lock`.
public final class ConcurrentSlots<T>: @unchecked Sendable {
    private var storage: [T?]
    private let lock = NSLock()

    public init(count: Int) { storage = Array(repeating: nil, count: count) }

    public func set(_ index: Int, _ value: T) { lock.withLock { storage[index] = value } }

    public var values: [T?] { lock.withLock { storage } }
}

extension Array where Element: Sendable {
    /// `transform` of each element, in order, computed on every core (in one contiguous run of
    /// elements each) when there are at least `minimumCount` elements, else on the calling
    /// thread. For pure per-element work on a Dispatch thread (never Swift's cooperative pool:
    /// the call blocks until every core is done).
    ///
    /// ```swift
    /// let lines = pages.concurrentMap(minimumCount: 64, cleanLines)
    /// ```
    public func concurrentMap<T>(minimumCount: Int, _ transform: @Sendable (Element) -> T) -> [T] {
        let workers = count >= Swift.max(minimumCount, 2) ? ProcessInfo.processInfo.activeProcessorCount : 1
        guard workers > 1 else { return map(transform) }
        let slots = ConcurrentSlots<T>(count: count)
        let chunk = (count + workers - 1) / workers
        withoutActuallyEscaping(transform) { transform in
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for index in worker * chunk..<Swift.min(count, (worker + 1) * chunk) { slots.set(index, transform(self[index])) }
            }
        }
        return slots.values.map { $0! }
    }
}

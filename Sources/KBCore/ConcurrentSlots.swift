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

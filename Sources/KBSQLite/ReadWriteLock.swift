import Foundation

/// A pthread read-write lock.
/// @unchecked Sendable: pthread_rwlock_t is designed for concurrent use.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    init() { pthread_rwlock_init(lock, nil) }
    deinit { pthread_rwlock_destroy(lock); lock.deallocate() }
    func read<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock); defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
    func write<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock); defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}

/// A pointer handed to concurrent workers that touch disjoint parts of what it points to.
/// @unchecked Sendable: callers guarantee the workers never touch the same elements.
struct UnsafeSendable<T>: @unchecked Sendable {
    let pointer: T
    init(_ pointer: T) { self.pointer = pointer }
}

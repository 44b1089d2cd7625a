import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A whole file mapped read-only into memory (private, so the file's later changes are not
/// seen), unmapped when the last reference goes. The readers of kb's large files — model weights,
/// the saved search copies — read their bytes where they lie instead of copying them in.
///
/// ```swift
/// let file = try MappedFile(path: path, minimumLength: 16) { failure in KBError(.database, "\(path): \(failure)") }
/// let magic = file.base.loadUnaligned(as: UInt64.self)
/// ```
///
/// @unchecked Sendable: the mapping is only read, and stays until `deinit`.
public final class MappedFile: @unchecked Sendable {
    /// Why a file could not be mapped, for the caller's message.
    public enum Failure: Error, CustomStringConvertible {
        /// The file cannot be opened (the system's reason).
        case unopenable(String)
        /// It holds fewer bytes than the reader needs (it may be empty).
        case short(Int)
        /// It cannot be mapped (the system's reason).
        case unmappable(String)

        public var description: String {
            switch self {
            case .unopenable(let reason): "cannot be opened: \(reason)"
            case .short(let bytes): "is cut short (\(bytes) bytes)"
            case .unmappable(let reason): "cannot be memory-mapped: \(reason)"
            }
        }
    }

    public let path: String
    public let base: UnsafeRawPointer
    public let length: Int

    /// Maps `path`; `error` makes the error thrown (naming the file, saying what to do) from what
    /// went wrong.
    public init(path: String, minimumLength: Int, error: (Failure) -> any Error) throws {
        self.path = path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw error(.unopenable(String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error(.unopenable(String(cString: strerror(errno)))) }
        guard Int(info.st_size) >= max(1, minimumLength) else { throw error(.short(Int(info.st_size))) }
        length = Int(info.st_size)
        guard let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
            throw error(.unmappable(String(cString: strerror(errno))))
        }
        base = UnsafeRawPointer(mapped)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), length) }

    /// Tells the kernel how `bytes` bytes from `offset` will be read (`MADV_SEQUENTIAL`,
    /// `MADV_RANDOM`, `MADV_DONTNEED`…); advice it does not take is ignored.
    public func advise(_ advice: Int32, offset: Int = 0, bytes: Int? = nil) {
        let count = bytes ?? length - offset
        guard count > 0 else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + offset), count, advice)
    }
}

public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reading a pipe or file to its end and writing all of a buffer, where Foundation's
/// `readDataToEndOfFile()` and `write(_:)` would stop the process: they `try!` the system call, so a
/// read interrupted by a signal (`EINTR`, met when a test runs many processes at once) or refused
/// (`EISDIR`: `kb ingest - < some-folder`) crashes. Here an interrupted call is tried again and any
/// other failure is thrown, naming the system's reason.
///
/// ```swift
/// let text = try DescriptorIO.readToEnd(STDIN_FILENO)
/// ```
public enum DescriptorIO {
    /// Why a read or write failed: the system's reason (`strerror`).
    public struct Failure: LocalizedError, CustomStringConvertible {
        public let code: Int32
        public var description: String { String(cString: strerror(code)) }
        public var errorDescription: String? { description }
    }

    /// Everything `fd` gives until its end (a pipe's writers have all closed it).
    public static func readToEnd(_ fd: Int32) throws(Failure) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                throw Failure(code: errno)
            }
        }
    }

    /// Writes all of `data` to `fd`.
    public static func writeAll(_ data: Data, to fd: Int32) throws(Failure) {
        var offset = 0
        while offset < data.count {
            let count = data.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count >= 0 {
                offset += count
            } else if errno != EINTR {
                throw Failure(code: errno)
            }
        }
    }

    /// Standard input's text, for the commands that read `-`; what the system refuses is an error
    /// naming standard input and what to give instead.
    public static func standardInput() throws -> Data {
        do {
            return try readToEnd(STDIN_FILENO)
        } catch {
            throw KBError(.unreadableFile, "Cannot read standard input (\(error)). Pipe a file's text into kb, e.g. `< notes.txt`.")
        }
    }
}

public import Foundation
import KBCore

/// A file's bytes, memory-mapped where the system allows: how kb reads a file once for all that
/// needs it (its content hash, a loader's signature check, the loader).
public enum FileBytes {
    /// The bytes of the file at `path`; the error names it as `name` (the path as the user wrote it).
    public static func read(_ path: String, name: String? = nil) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: [.mappedIfSafe])
        } catch {
            throw KBError(.unreadableFile, "Cannot read \(name ?? path): \(error.localizedDescription). Check that it exists and is readable.")
        }
    }
}

import Foundation
public import KBCore

/// Source paths as requests give them: made absolute and standardised, turned into the prefix
/// stored paths are matched with, or into a bot's source selector.
///
/// ```swift
/// let prefix = SourcePaths.prefix("~/notes")        // "/home/ada/notes/" when it is a folder
/// let selector = try SourcePaths.selector("tag:area:career")
/// ```
public enum SourcePaths {
    /// An absolute, standardised path (`~` expanded, relative to the current folder).
    public static func absolute(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        let url = expanded.isAbsolutePath
            ? URL(fileURLWithPath: expanded)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(expanded)
        var standardized = url.standardizedFileURL.path
        while standardized.count > 1 && standardized.hasSuffix("/") { standardized.removeLast() }
        return standardized
    }

    /// Turns a `--source` argument into the absolute prefix stored paths are matched with:
    /// a folder matches the files inside it, anything else is a plain path prefix.
    public static func prefix(_ argument: String) -> String {
        let path = absolute(argument)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue, path != "/" {
            return path + "/"
        }
        return argument.hasSuffix("/") && path != "/" ? path + "/" : path
    }

    /// Parses a selector given in a request: `tag:…`, `kind:…`, or an absolute path (a folder
    /// selects what is inside it). The CLI makes relative paths absolute before they get here.
    public static func selector(_ text: String) throws -> SourceSelector {
        guard text.isAbsolutePath else { return try SourceSelector(text) }
        return try SourceSelector(prefix(text))
    }

    /// An absolute path prefix given in a request (a folder matches what is inside it).
    public static func absolutePrefix(_ text: String) throws -> String {
        guard text.isAbsolutePath else {
            throw KBError(.invalidArgument, "'\(text)' is not an absolute path. Give source paths from the root, e.g. /home/ada/notes.")
        }
        return prefix(text)
    }
}

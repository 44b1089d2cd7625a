import Foundation
import KBCore
import KBIngest
import KBRequests

/// Finds the files an ingest should read: given files as they are, folders recursively
/// (hidden files and folders skipped), keeping only the types kb reads, each with its kind.
/// It walks the file system: call it off the cooperative pool (`OffPool.run`).
struct FileScanner {
    struct Result: Sendable {
        var files: [SourceFile] = []
        /// Absolute folders that were scanned (for pruning).
        var folders: [String] = []
        var failures: [IngestReport.Failure] = []
        /// Absolute paths of arguments that do not exist.
        var missingArguments: [String] = []
    }

    /// - Parameter skippingInFolders: kinds of file left out of folders (named files are kept):
    ///   images under `--ocr never`, which only OCR could read.
    static func scan(_ arguments: [String], skippingInFolders skipped: Set<SourceKind> = []) -> Result {
        var result = Result()
        var seen = Set<String>()
        let fm = FileManager.default
        for argument in arguments {
            let root = SourcePaths.absolute(argument)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: root, isDirectory: &isDirectory) else {
                result.failures.append(.init(path: argument, message: "No such file or folder: \(argument). Check the path."))
                result.missingArguments.append(root)
                continue
            }
            if !isDirectory.boolValue {
                do {
                    let kind = try DocumentReader.kind(of: root, displayName: argument)
                    if seen.insert(root).inserted { result.files.append(SourceFile(path: root, displayName: argument, kind: kind)) }
                } catch {
                    result.failures.append(.init(path: argument, message: (error as? KBError)?.message ?? "\(error)"))
                }
                continue
            }
            guard let enumerator = fm.enumerator(
                at: URL(fileURLWithPath: root, isDirectory: true),
                includingPropertiesForKeys: [.isRegularFileKey],
                options: [.skipsHiddenFiles]) else {
                result.failures.append(.init(path: argument, message: "Cannot read the folder \(argument). Check its permissions."))
                continue
            }
            let ignore: IgnoreRules
            do {
                ignore = try IgnoreRules(folder: root)
            } catch {
                // Without its rules, the folder would be ingested with what it excludes: leave it alone.
                result.failures.append(.init(path: argument, message: (error as? KBError)?.message ?? "\(error)"))
                continue
            }
            result.folders.append(root)
            var found: [SourceFile] = []
            for case let url as URL in enumerator {
                guard let kind = FileTypes.kind(forExtension: url.pathExtension), !skipped.contains(kind) else { continue }
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
                let path = SourcePaths.absolute(url.path)
                let relative = path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
                guard !ignore.ignores(relative), seen.insert(path).inserted else { continue }
                let base = argument.hasSuffix("/") ? String(argument.dropLast()) : argument
                found.append(SourceFile(path: path, displayName: base + "/" + relative, kind: kind))
            }
            result.files += found.sorted { $0.path < $1.path }
        }
        return result
    }
}

/// Patterns from a `.kbignore` file at the top of an ingested folder: one shell glob per line
/// (`#` starts a comment), matched against the path relative to that folder and against the
/// file name. `drafts/*` skips a folder's files; `README.md` skips every README.md.
struct IgnoreRules {
    let patterns: [String]

    init(patterns: [String]) { self.patterns = patterns }

    /// Reads the folder's `.kbignore`, if it has one; one that exists but cannot be read is an
    /// error (ingesting the folder without it would index what it excludes).
    init(folder: String) throws {
        let file = folder + "/.kbignore"
        var text = ""
        if FileManager.default.fileExists(atPath: file) {
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw KBError(.unreadableFile,
                    "Cannot read \(file) (\(error.localizedDescription)), so the folder is left alone: ingesting it would index what the file excludes. Fix its permissions or its encoding (UTF-8).")
            }
        }
        patterns = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map { $0.hasSuffix("/") ? $0 + "*" : $0 }
    }

    func ignores(_ relativePath: String) -> Bool {
        let name = (relativePath as NSString).lastPathComponent
        return patterns.contains { fnmatch($0, relativePath, 0) == 0 || fnmatch($0, name, 0) == 0 }
    }
}

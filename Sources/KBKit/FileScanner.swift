import Foundation
import KBCore
import KBIngest

/// Finds the files an ingest should read: given files as they are, folders recursively
/// (hidden files and folders skipped), keeping only the types kb reads.
struct FileScanner {
    struct Candidate: Hashable {
        /// Absolute, standardised path: the source's identity in the index.
        var path: String
        /// The path as the user would write it, for messages.
        var displayName: String
    }

    struct Result {
        var files: [Candidate] = []
        /// Absolute folders that were scanned (for pruning).
        var folders: [String] = []
        var failures: [IngestReport.Failure] = []
        /// Absolute paths of arguments that do not exist.
        var missingArguments: [String] = []
    }

    static func absolute(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        let url = expanded.isAbsolutePath
            ? URL(fileURLWithPath: expanded)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(expanded)
        var standardized = url.standardizedFileURL.path
        while standardized.count > 1 && standardized.hasSuffix("/") { standardized.removeLast() }
        return standardized
    }

    /// - Parameter skippingInFolders: kinds of file left out of folders (named files are kept):
    ///   images under `--ocr never`, which only OCR could read.
    static func scan(_ arguments: [String], skippingInFolders skipped: Set<SourceKind> = []) -> Result {
        var result = Result()
        var seen = Set<String>()
        let fm = FileManager.default
        for argument in arguments {
            let root = absolute(argument)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: root, isDirectory: &isDirectory) else {
                result.failures.append(.init(path: argument, message: "No such file or folder: \(argument). Check the path."))
                result.missingArguments.append(root)
                continue
            }
            if !isDirectory.boolValue {
                let ext = URL(fileURLWithPath: root).pathExtension
                guard FileTypes.kind(forExtension: ext) != nil else {
                    result.failures.append(.init(path: argument,
                        message: "\(argument): kb does not read .\(ext.isEmpty ? "(no extension)" : ext) files; it reads \(FileTypes.supportedList)."))
                    continue
                }
                if seen.insert(root).inserted { result.files.append(Candidate(path: root, displayName: argument)) }
                continue
            }
            result.folders.append(root)
            guard let enumerator = fm.enumerator(
                at: URL(fileURLWithPath: root, isDirectory: true),
                includingPropertiesForKeys: [.isRegularFileKey],
                options: [.skipsHiddenFiles]) else {
                result.failures.append(.init(path: argument, message: "Cannot read the folder \(argument). Check its permissions."))
                continue
            }
            let ignore = IgnoreRules(folder: root)
            var found: [Candidate] = []
            for case let url as URL in enumerator {
                guard let kind = FileTypes.kind(forExtension: url.pathExtension), !skipped.contains(kind) else { continue }
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
                let path = absolute(url.path)
                let relative = path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
                guard !ignore.ignores(relative), seen.insert(path).inserted else { continue }
                let base = argument.hasSuffix("/") ? String(argument.dropLast()) : argument
                found.append(Candidate(path: path, displayName: base + "/" + relative))
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

    init(folder: String) {
        let file = folder + "/.kbignore"
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
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

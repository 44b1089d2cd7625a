import Foundation
import KBCore
import KBIngest
public import KBStore

extension KnowledgeBase {
    /// An absolute, standardised path (`~` expanded, relative to the current folder).
    public static func absolutePath(_ path: String) -> String { FileScanner.absolute(path) }

    /// Turns a `--source` argument into the absolute prefix stored paths are matched with:
    /// a folder matches the files inside it, anything else is a plain path prefix.
    public static func sourcePrefix(_ argument: String) -> String {
        let path = FileScanner.absolute(argument)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue, path != "/" {
            return path + "/"
        }
        return argument.hasSuffix("/") && path != "/" ? path + "/" : path
    }

    /// Ingested files (memories are listed by `memories(_:)`).
    public func sources() async throws -> [StoredSource] { try await store.snapshot { try $0.sources() }.filter { $0.kind != .memory } }

    /// Removes sources by file path, or all sources under a folder path. Throws when a path
    /// matches nothing, naming it, and removes nothing in that case.
    @discardableResult
    public func remove(_ paths: [String]) async throws -> [String] {
        let absolute = paths.map(FileScanner.absolute)
        let stored = try await store.snapshot { snapshot in try absolute.map { try snapshot.sourcePaths(under: $0) } }
        for (argument, (path, under)) in zip(paths, zip(absolute, stored)) where !under.contains(where: { $0 == path || $0.hasPrefix(path + "/") }) {
            throw KBError(.notFound, "No source in the index matches \(argument). `kb sources` lists what is indexed.")
        }
        let removed = try await store.removeSources(matching: absolute).paths
        try await store.scrub()
        return removed
    }

    /// The OCR languages for an ingest into this index (`OCRSettings.languages(given:recorded:)`):
    /// `given` languages are recorded as the index's.
    public func ocrLanguages(given: [String]?) async throws -> [String] {
        let recorded = try await store.snapshot { try $0.meta(Self.ocrLanguagesKey) }
        if let given {
            let list = given.joined(separator: "+")
            if recorded != list { try await store.setMeta(Self.ocrLanguagesKey, list) }
        }
        return OCRSettings.languages(given: given, recorded: recorded)
    }

    static let ocrLanguagesKey = "ocr_languages"

    /// Tunes keyword search for `language` (recorded with the index); rebuilds the keyword index
    /// when it was tuned for another. False when nothing changed.
    @discardableResult
    public func setKeywordLanguage(_ language: KeywordLanguage) async throws -> Bool {
        try await store.setKeywordLanguage(language)
    }
}

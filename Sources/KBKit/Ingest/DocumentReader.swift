import Crypto
public import Foundation
public import KBCore
public import KBIngest
import KBRequests

/// A file an ingest reads: where it is, how the user named it, and the kind of source it
/// becomes — decided once, when the file is found in a folder or named (`DocumentReader.file`).
struct SourceFile: Hashable, Sendable {
    /// Absolute, standardised path: the source's identity in the index.
    var path: String
    /// The path as the user would write it, for messages.
    var displayName: String
    var kind: SourceKind
    /// Whether text is Markdown; nil: by the file's extension (an upload says by its media type).
    var markdown: Bool? = nil
    /// A records file's format (`csv`, `jsonl`); nil: by the file's extension (an upload says by its media type).
    var recordFormat: String? = nil

    /// Whether OCR may read its pages (PDFs and scans): then new OCR settings re-read it even
    /// when its bytes did not change.
    var isPaged: Bool { kind == .pdf || kind == .image }
}

/// Reading files: each file's bytes are read from disk once and handed to the content hash, the
/// loader's signature check and the loader (a PDF is opened by poppler from those bytes).
enum DocumentReader {
    /// A file's bytes (memory-mapped where the system allows), when it was modified, and their hash.
    struct Contents: Sendable {
        var data: Data
        var modifiedAt: Date?
        var hash: String
    }

    /// The kind of source a file with this name becomes; the error names the file and what kb reads.
    static func kind(of path: String, displayName: String) throws -> SourceKind {
        let ext = URL(fileURLWithPath: path).pathExtension
        guard let kind = FileTypes.kind(forExtension: ext) else {
            throw KBError(.unsupportedFileType,
                "\(displayName): kb does not read .\(ext.isEmpty ? "(no extension)" : ext) files; it reads \(FileTypes.supportedList).")
        }
        return kind
    }

    /// The file `name` names, for reading it alone (`kb inspect`): it must exist, be a file and
    /// be of a kind kb reads.
    static func file(named name: String) throws -> SourceFile {
        let path = SourcePaths.absolute(name)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw KBError(.noSuchFile, "No such file: \(name). Check the path.")
        }
        guard !isDirectory.boolValue else {
            throw KBError(.invalidArgument, "\(name) is a folder; `kb inspect` takes one file. Try one of the files in it.")
        }
        return SourceFile(path: path, displayName: name, kind: try kind(of: path, displayName: name))
    }

    /// Reads a file's bytes once, with its modification time and content hash.
    static func read(_ file: SourceFile) throws -> Contents {
        let data = try FileBytes.read(file.path, name: file.displayName)
        // The bytes are what counts; a modification time the system cannot give is left out.
        let modified = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date
        return Contents(data: data, modifiedAt: modified, hash: contentHash(data))
    }

    /// Hex SHA-256 of the bytes: a source's content hash.
    static func contentHash(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// Parses one file's bytes with the loader its kind calls for; snippets get their `lang:` tags.
    static func load(_ file: SourceFile, _ contents: Contents, options: IngestOptions, ocr: OCRSession) throws -> SourceDocument {
        var document = try parse(file, contents, options: options, ocr: ocr)
        LanguageDetector.tag(&document, options.textLanguage)
        return document
    }

    static func parse(_ file: SourceFile, _ contents: Contents, options: IngestOptions, ocr: OCRSession) throws -> SourceDocument {
        try FileLoaders.loader(for: file.kind, options: options, ocr: ocr).load(
            FileInput(contents.data, path: file.path, displayName: file.displayName, contentHash: contents.hash, modifiedAt: contents.modifiedAt,
                      markdown: file.markdown, recordFormat: file.recordFormat))
    }
}

extension KnowledgeBase {
    /// What ingest would store for one file, without touching any index. Parsing (and OCR) runs
    /// on a Dispatch thread, off the cooperative pool.
    public static func inspect(_ file: String, options: IngestOptions) async throws -> SourceDocument {
        try await OffPool.run {
            let source = try DocumentReader.file(named: file)
            return try DocumentReader.load(source, try DocumentReader.read(source), options: options, ocr: OCRSession(settings: options.ocr))
        }
    }

    /// Hex SHA-256 of the bytes: a source's content hash, as ingest computes it.
    public static func contentHash(_ data: Data) -> String { DocumentReader.contentHash(data) }
}

import Crypto
public import Foundation
public import KBCore
import KBIngest
import KBStore

/// One source as the sources API shows it, whether it was added over the API or ingested from a
/// file by the CLI.
public struct SourceInfo: Sendable, Hashable, Codable, SchemaFieldNotes {
    public static let fieldNotes: [String: JSONValue] = ["state": ["enum": ["ready", "queued", "running"]]]

    public enum Origin: String, Sendable, Hashable, Codable, CaseIterable, SchemaEnumeration {
        /// Added over the API (or `kb ingest -`); removable by its id.
        case upload
        /// Ingested from a file on the server's disk; it belongs to the file (`kb remove PATH`).
        case file
    }

    /// An upload's own id, or `file:` and 16 hex digits of the file path's SHA-256.
    public var id: String
    public var origin: Origin
    /// The file's path (files only).
    public var path: String?
    public var kind: SourceKind
    public var title: String
    public var tags: [Tag]
    /// The user a private source belongs to.
    public var user: String?
    public var size: Int
    public var contentHash: String
    public var snippets: Int
    /// How OCR read it (`Source.ocr`), and the mean OCR confidence of its snippets read by OCR.
    public var ocr: String?
    public var ocrConfidence: Double?
    public var ingestedAt: Date
    public var modifiedAt: Date?
    /// The bots that see it (given by `GET /v1/sources/{id}`, not by listings).
    public var bots: [String]?
    /// `ready` (stored and searchable), or the state of the job that is reading it now:
    /// `queued` or `running` (an acknowledged upload is listed at once, before its job ends).
    public var state: String = "ready"
    /// The unfinished job reading it (`GET /v1/jobs/{id}`), if any.
    public var job: String?

    /// A stored source as the API, MCP and `kb sources` show it: by its public id, never the
    /// index's row number.
    /// The public id of the source stored at `path`: an upload's own id, else `file:…`.
    public static func id(of path: String) -> String { Source.uploadID(path: path) ?? fileID(path) }

    init(_ stored: StoredSource) {
        let upload = Source.uploadID(path: stored.path)
        id = upload ?? Self.fileID(stored.path)
        origin = upload == nil ? .file : .upload
        path = upload == nil ? stored.path : nil
        kind = stored.kind
        title = stored.title
        tags = stored.tags
        user = stored.owner
        size = stored.size
        contentHash = stored.contentHash
        snippets = stored.snippetCount
        ocr = stored.ocr
        ocrConfidence = stored.ocrConfidence.map { ($0 * 10).rounded() / 10 }
        ingestedAt = stored.ingestedAt
        modifiedAt = stored.modifiedAt
    }

    /// An acknowledged upload whose job has not stored it yet.
    init(pending stored: StoredJob) {
        id = stored.job.source
        origin = .upload
        path = nil
        kind = (try? MediaType(stored.job.contentType))?.kind ?? .note
        title = stored.title ?? stored.job.source
        tags = stored.tags
        user = stored.owner
        size = stored.job.size
        contentHash = stored.contentHash ?? ""
        snippets = 0
        ingestedAt = stored.job.createdAt
        state = stored.job.state.rawValue
        job = stored.job.id
    }

    /// The id a file's source is listed under: stable across re-ingests and copies of the index.
    /// The id of the source stored at `path`: an upload's own id, else the file's.
    public static func id(ofPath path: String) -> String { Source.uploadID(path: path) ?? fileID(path) }

    public static func fileID(_ path: String) -> String {
        "file:" + SHA256.hash(data: Data(path.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}

/// A page of sources.
public struct SourceList: Sendable, Hashable, Codable {
    public var sources: [SourceInfo]
    /// How many sources pass the filters, on every page.
    public var total: Int
    public var offset: Int
    public var limit: Int
}

/// What adding a source started: its id, and the job that reads it.
public struct SourceAdded: Sendable, Hashable, Codable {
    public struct Reference: Sendable, Hashable, Codable {
        public var id: String
    }
    public var source: Reference
    public var job: Job
}

/// What reading uploaded sources again from their originals did, source by source.
public struct SourcesReread: Sendable, Hashable, Codable {
    public struct Outcome: Sendable, Hashable, Codable {
        public var id: String
        /// The job that read it: `done` (the source was replaced), or `failed` with its error
        /// (the source stays as it was).
        public var job: Job
    }
    public var sources: [Outcome]
    public var failed: Int { sources.filter { $0.job.state == .failed }.count }
}

/// What erasing a user's sources removed.
public struct SourcesErased: Sendable, Hashable, Codable {
    public var user: String
    /// Sources removed, with their snippets, vectors and originals.
    public var sources: Int
    /// Jobs cancelled that had not yet stored their source.
    public var jobs: Int
}

/// A source with its snippets in order (`GET /v1/sources/{id}/snippets`), and for a PDF each
/// page's text layer, to read beside the snippets made from it.
public struct SourceSnippets: Sendable, Hashable, Codable {
    public struct Page: Sendable, Hashable, Codable {
        /// From 1.
        public var number: Int
        /// The printed label (`iv`, `12`), else the number.
        public var label: String
        /// The page's text layer as the PDF has it (empty for a scan: OCR made its snippets).
        public var text: String
    }

    public var source: SourceInfo
    public var snippets: [Snippet]
    /// A PDF's pages, when its bytes are at hand (an upload's kept original, or the ingested file).
    public var pages: [Page]?
}

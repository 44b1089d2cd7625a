public import Foundation

/// Reading one source that was added over the API (a file upload, or a long text), in the
/// background: `POST /v1/sources` answers with it, `GET /v1/jobs/{id}` follows it. The bytes it
/// reads are stored with the index before the job is acknowledged, so a restart loses nothing: a
/// job that was queued or running when the server stopped runs again.
public struct Job: Sendable, Hashable, Codable, Identifiable {
    public enum State: String, Sendable, Hashable, Codable, CaseIterable, SchemaEnumeration {
        /// The upload is still arriving (not yet acknowledged).
        case receiving
        /// Stored, waiting for its turn.
        case queued
        case running
        /// The source is stored and searchable.
        case done
        /// The source could not be read; `error` says why. Whatever the index held for the
        /// source before stays as it was.
        case failed
    }

    /// How far a job has come, of how many known so far: pages (while OCR runs, the pages it has
    /// recognised of those that need it; once the file is read, all its pages) and snippets embedded.
    public struct Progress: Sendable, Hashable, Codable {
        public var pagesDone = 0
        public var pagesTotal = 0
        public var snippetsDone = 0
        public var snippetsTotal = 0

        public init(pagesDone: Int = 0, pagesTotal: Int = 0, snippetsDone: Int = 0, snippetsTotal: Int = 0) {
            self.pagesDone = pagesDone
            self.pagesTotal = pagesTotal
            self.snippetsDone = snippetsDone
            self.snippetsTotal = snippetsTotal
        }
    }

    public var id: String
    /// The id of the source it reads (`Source.uploadID`).
    public var source: String
    public var state: State
    /// The media type the bytes were sent as (`application/pdf`, `text/markdown`, …).
    public var contentType: String
    /// Bytes received.
    public var size: Int
    public var progress: Progress
    /// Why a failed job failed, in the words the CLI would use.
    public var error: String?
    /// Warnings of a job that succeeded (repaired text, pages OCR could not read).
    public var warnings: [String]
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: String, source: String, state: State, contentType: String, size: Int, progress: Progress = Progress(),
                error: String? = nil, warnings: [String] = [], createdAt: Date, updatedAt: Date) {
        self.id = id
        self.source = source
        self.state = state
        self.contentType = contentType
        self.size = size
        self.progress = progress
        self.error = error
        self.warnings = warnings
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

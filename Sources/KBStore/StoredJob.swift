import Foundation
public import KBCore

/// A job as a store keeps it: the job, and what the source it reads will be given (title, tags,
/// owner) and which bots see it once it is read.
public struct StoredJob: Sendable, Hashable {
    public var job: Job
    public var title: String?
    public var tags: [Tag]
    public var owner: String?
    /// Bots the source is attached to when the upload is acknowledged (`upload:ID` selectors).
    public var bots: [String]
    /// Hex SHA-256 of the bytes, once they are all in.
    public var contentHash: String?

    public init(job: Job, title: String? = nil, tags: [Tag] = [], owner: String? = nil, bots: [String] = [], contentHash: String? = nil) {
        self.job = job
        self.title = title
        self.tags = tags
        self.owner = owner
        self.bots = bots
        self.contentHash = contentHash
    }

    /// The index path of the source the job reads.
    public var sourcePath: String { Source.uploadPath(job.source) }
}

/// How a job ended that did not store a new version of its source.
public enum JobEnding: Sendable, Hashable {
    /// The bytes and settings are those of the source already stored: nothing was re-done.
    case unchanged
    /// The source could not be read, for this reason.
    case failed(String)
}

/// The one error type kb throws: what happened, to which input, and what to do about it.
///
/// ```swift
/// throw KBError(.noSuchFile, "No such file: notes/x.md. Check the path.")
/// ```
public struct KBError: Error, Sendable, CustomStringConvertible {
    /// A machine-readable category (its raw value is what JSON errors carry as `code`). A closed
    /// set, so that every place that maps codes — the HTTP status of each, the CLI's exit code —
    /// is checked by the compiler when one is added.
    public enum Code: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case noSuchFile = "no_such_file"
        case unreadableFile = "unreadable_file"
        case unsupportedFileType = "unsupported_file_type"
        case invalidText = "invalid_text"
        case invalidFrontMatter = "invalid_front_matter"
        case invalidVocabulary = "invalid_vocabulary"
        case invalidArgument = "invalid_argument"
        case notAnIndex = "not_an_index"
        case noIndex = "no_index"
        case newerSchema = "newer_schema"
        case database = "database"
        /// The index's database server cannot be reached right now (PostgreSQL restarting or
        /// gone); the same request may succeed shortly.
        case databaseUnavailable = "database_unavailable"
        case notFound = "not_found"
        case unsupportedMode = "unsupported_mode"
        case invalidModel = "invalid_model"
        case modelMissing = "model_missing"
        case embedderMismatch = "embedder_mismatch"
        case embedding = "embedding"
        /// Input over a size limit (memory content, request bodies).
        case tooLarge = "too_large"
        /// Bytes of a media type kb does not read, or not of the type they were sent as.
        case unsupportedMediaType = "unsupported_media_type"
        /// The change clashes with what the index holds (same content, an id with other data).
        case conflict = "conflict"
        /// A well-formed request that cannot be carried out as asked: fields that do not go
        /// together, nothing to change, a keyword query without words.
        case unprocessable = "unprocessable"
        /// A language model kb was told to ask (memory extraction) failed, timed out, or gave an
        /// answer kb does not accept.
        case languageModel = "language_model"
        /// A language model kb was told to ask gave no answer within its timeout (a chat
        /// completion's upstream).
        case upstreamTimeout = "upstream_timeout"
        /// No valid credential: a missing, wrong, expired or revoked token.
        case unauthorized = "unauthorized"
        /// The caller's token does not carry the right the request needs, or a web page of
        /// another origin asked.
        case forbidden = "forbidden"
        /// A request for a host name the service does not answer to (DNS rebinding, a proxy
        /// that needs `--allowed-host`).
        case misdirectedRequest = "misdirected_request"

        public var description: String { rawValue }
    }

    public var code: Code
    /// A sentence or two naming the input and the fix.
    public var message: String
    /// The lower-level error, if any.
    public var cause: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { message }
}

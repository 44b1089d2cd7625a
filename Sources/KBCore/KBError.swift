/// The one error type kb throws: what happened, to which input, and what to do about it.
///
/// ```swift
/// throw KBError(.noSuchFile, "No such file: notes/x.md. Check the path.")
/// ```
public struct KBError: Error, Sendable, CustomStringConvertible {
    /// A machine-readable category. Extensible: new codes may appear in later versions.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let noSuchFile = Code(rawValue: "no_such_file")
        public static let unreadableFile = Code(rawValue: "unreadable_file")
        public static let unsupportedFileType = Code(rawValue: "unsupported_file_type")
        public static let invalidText = Code(rawValue: "invalid_text")
        public static let invalidFrontMatter = Code(rawValue: "invalid_front_matter")
        public static let invalidVocabulary = Code(rawValue: "invalid_vocabulary")
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        public static let notAnIndex = Code(rawValue: "not_an_index")
        public static let noIndex = Code(rawValue: "no_index")
        public static let newerSchema = Code(rawValue: "newer_schema")
        public static let database = Code(rawValue: "database")
        public static let notFound = Code(rawValue: "not_found")
        public static let unsupportedMode = Code(rawValue: "unsupported_mode")
        public static let invalidModel = Code(rawValue: "invalid_model")
        public static let modelMissing = Code(rawValue: "model_missing")
        public static let embedderMismatch = Code(rawValue: "embedder_mismatch")
        public static let embedding = Code(rawValue: "embedding")
        /// Input over a size limit (memory content, request bodies).
        public static let tooLarge = Code(rawValue: "too_large")
        /// The change clashes with what the index holds (same content, an id with other data).
        public static let conflict = Code(rawValue: "conflict")
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

/// The limits every way into kb applies — CLI, HTTP and MCP — declared once. Requests are
/// checked against them where they enter `KnowledgeBase`, and the OpenAPI document and MCP tool
/// schemas state them.
///
/// ```swift
/// var limits = Limits()
/// limits.maxResults = 50
/// let kb = try KnowledgeBase.open(at: path, limits: limits)
/// ```
public struct Limits: Sendable, Hashable, Codable {
    /// Most hits a search or recall returns (`k`). The default is 100.
    public var maxResults = 100
    /// Most candidates each ranking contributes before fusion (`candidates`). The default is 10,000.
    public var maxCandidates = 10_000
    /// Largest token budget of assembled context (`budget`). The default is 32,000.
    public var maxBudget = 32_000
    /// Longest query, in characters. The default is 4,000.
    public var maxQueryCharacters = 4_000
    /// Largest memory content, in UTF-8 bytes. The default is 8,192.
    public var maxMemoryBytes = 8_192
    /// Most entries in one list field (tags, kinds, sources, scopes). The default is 64.
    public var maxListItems = 64
    /// Longest text source (`POST /v1/sources` with JSON, `add_source`), in characters. The
    /// default is 1,000,000 (the HTTP service's body limit usually comes first).
    public var maxSourceTextCharacters = 1_000_000
    /// Largest uploaded file, in bytes (`kb serve --max-upload`). The default is 100 MB.
    public var maxUploadBytes = 100_000_000
    /// Most sources one listing returns (`limit`). The default is 1,000.
    public var maxListedSources = 1_000
    /// Most earlier turns a context request's `history` holds. The default is 20.
    public var maxHistoryTurns = 20
    /// Longest turn of a `history`, in characters. The default is 4,000.
    public var maxTurnCharacters = 4_000
    /// Most messages of one chat completion request (all are sent on to the model; the last
    /// `maxHistoryTurns` before the user's turn steer retrieval). The default is 256.
    public var maxChatMessages = 256
    /// Longest message of a chat completion request, in characters. The default is 100,000 (the
    /// HTTP service's body limit usually comes first).
    public var maxChatMessageCharacters = 100_000

    /// Most items of one sync request (`POST /v1/sources/sync`). The default is 100,000.
    public var maxSyncItems = 100_000
    /// Most characters one `read_source` answer holds (`maxCharacters`). The default is 32,000.
    public var maxReadCharacters = 32_000
    /// Most matches one `grep_sources` answer holds (`limit`). The default is 500.
    public var maxGrepMatches = 500
    /// Longest a `grep_sources` request searches before it answers with what it found
    /// (`truncated: "time"`), in seconds. The default is 2.
    public var grepSeconds = 2.0

    public init() {}
}

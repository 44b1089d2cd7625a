/// Every depth and limit of retrieval, each declared once with its default: what searches and
/// recalls return when a request does not say, how deep each ranking goes, how many snippets and
/// memories a bot's context weighs. Search, recall, bot context, report sections and evaluation
/// read them from here (a knowledge base's own profile; `standard` for request defaults).
///
/// ```swift
/// var profile = RetrievalProfile()
/// profile.contextSnippets = 40   // a bot weighs more of its knowledge per turn
/// let kb = try KnowledgeBase.open(at: path, profile: profile)
/// ```
public struct RetrievalProfile: Sendable, Hashable, Codable {
    /// Hits a search, and memories a recall, return when the request does not say (`k`). The
    /// default is 8.
    public var hits = 8
    /// How many candidates each ranking (keyword, vector) contributes before fusion, grouping and
    /// diversity. The default is 50.
    public var candidates = 50
    /// A search that keeps one hit per source or diversifies ranks this many times deeper than the
    /// hits it returns, so that there is enough to choose from; so does a recall weighted by
    /// recency (at least `candidates` deep). The default is 5.
    public var widening = 5
    /// Knowledge snippets a bot's context request ranks for assembly. The default is 24.
    public var contextSnippets = 24
    /// Memories a bot's context request ranks for assembly. The default is 8.
    public var contextMemories = 8
    /// Items a bot's context holds at most (a report section holds its template's count). The
    /// default is 10.
    public var contextItems = 10
    /// A report section ranks this many snippets per snippet it holds (at least `hits`). The
    /// default is 3.
    public var sectionWidening = 3
    /// Snippets a bot's knowledge must allow before its vector ranking scans the int8 copy of the
    /// vectors and rescores the best exactly (a quarter of the memory traffic). The default is
    /// 20,000.
    public var approximateScanFrom = 20_000
    /// Candidates an asynchronous retrieval stage (a re-ranker) sees, at least the hits wanted;
    /// without such a stage the ranking stops at the hits wanted. The default is 20.
    public var stageCandidates = 20

    public init() {}

    /// The defaults, as requests document them.
    public static let standard = RetrievalProfile()
}

import Foundation
import KBCore
import KBIngest
import KBRequests
import KBRetrieval
import KBTestSupport
import Testing
@testable import KBKit

/// The asynchronous slot of retrieval: a stage that waits (as a model call would), sees every
/// list with its texts after the snapshot has closed, and reorders it — in searches, recalls and
/// bot contexts alike.
@Suite struct RetrievalStageTests {
    /// Reverses every list it is shown and gives the new first the highest score, after waiting;
    /// records what it saw.
    final class Reversing: RetrievalStage, @unchecked Sendable {
        let name = "reversing"
        private let lock = NSLock()
        private var seen: [(query: String, texts: [String])] = []

        func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] {
            try await Task.sleep(nanoseconds: 1_000_000)
            lock.withLock { seen.append((query, candidates.map(\.text))) }
            return candidates.reversed().enumerated().map { index, candidate in
                var candidate = candidate
                candidate.score = Double(candidates.count - index)
                return candidate
            }
        }

        var calls: [(query: String, texts: [String])] { lock.withLock { seen } }
    }

    struct Failing: RetrievalStage {
        let name = "failing"
        struct Down: Error {}
        func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] { throw Down() }
    }

    /// Keeps what it is given but one candidate it makes up.
    struct Inventing: RetrievalStage {
        let name = "inventing"
        func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] {
            [RetrievalCandidate(snippetID: 999_999, score: 9, sourcePath: "/nowhere", text: "made up")] + candidates
        }
    }

    /// Five notes about Venus and a bot over them, and Ada's memories; the stage sees exactly
    /// the hits wanted (`stageCandidates` 1), so that its reversal is the answer's.
    func knowledgeBase(_ ws: Workspace) async throws -> KnowledgeBase {
        for (index, text) in ["Venus rules love.", "Venus rules beauty and love.", "Venus in the tenth house: love of art.",
                              "Venus, love and money.", "Venus and love and venus again."].enumerated() {
            try ws.write("venus\(index).md", "# Venus \(index)\n\n\(text)")
        }
        var profile = RetrievalProfile()
        profile.stageCandidates = 1
        let kb = try KnowledgeBase.open(at: ws.dbPath, profile: profile)
        let (embedder, record) = try await kb.embedder(.hashing)
        _ = try await kb.ingest([ws.notes.path], options: IngestOptions(), embedder: embedder, record: record, as: .admin)
        var bot = BotRequest(name: "astro")
        bot.sources = [ws.notes.path]
        _ = try await kb.createBot(bot, as: .admin)
        for text in ["Ada loves Venus.", "Ada's Venus is in Libra.", "Ada asked about Venus and love."] {
            _ = try await kb.remember(MemoryDraft(text, scope: try .user("ada")), as: .admin)
        }
        return kb
    }

    @Test func aStageThatWaitsReordersSearchesRecallsAndContexts() async throws {
        let kb = try await knowledgeBase(try Workspace())
        var search = SearchQuery("venus love")
        search.limit = 4
        var recall = MemoryQuery("Venus")
        recall.scopes = [try .user("ada")]
        var context = ContextRequest(bot: "astro", query: "venus love")
        context.user = "ada"
        context.budget = 2000

        let plainSearch = try await kb.search(search, as: .admin).hits.map(\.snippetID)
        let plainRecall = try await kb.recall(recall, as: .admin).hits.map(\.memory.id)
        let plainContext = try await kb.context(context, as: .admin).citations.map(\.path)
        #expect(plainSearch.count == 4 && plainRecall.count == 3 && plainContext.count >= 4)

        let stage = Reversing()
        kb.useRetrievalStage(stage)
        let staged = try await kb.search(search, as: .admin)
        #expect(staged.hits.map(\.snippetID) == plainSearch.reversed())
        #expect(staged.hits.map(\.rank) == [1, 2, 3, 4] && staged.hits.map(\.score) == [4, 3, 2, 1])
        #expect(staged.degraded == nil)
        #expect(try await kb.recall(recall, as: .admin).hits.map(\.memory.id) == plainRecall.reversed())
        // The assembler orders a context's items by score: the stage's scores decide it too.
        let stagedContext = try await kb.context(context, as: .admin).citations.map(\.path)
        #expect(stagedContext != plainContext)
        #expect(Set(stagedContext) == Set(plainContext))

        // It saw each list's texts and the query: the search, the recall, and the context's two arms.
        let calls = stage.calls
        #expect(calls.count == 4)
        #expect(calls[0].query == "venus love" && calls[0].texts.count == 4 && calls[0].texts.allSatisfy { $0.lowercased().contains("venus") })
        #expect(calls[1].texts.sorted() == ["Ada asked about Venus and love.", "Ada loves Venus.", "Ada's Venus is in Libra."])

        kb.useRetrievalStage(PassThroughStage())
        #expect(try await kb.search(search, as: .admin).hits.map(\.snippetID) == plainSearch)
    }

    @Test func aFailingStageLeavesTheRankingAndSaysSo() async throws {
        let kb = try await knowledgeBase(try Workspace())
        var search = SearchQuery("venus love")
        search.limit = 3
        let plain = try await kb.search(search, as: .admin).hits.map(\.snippetID)
        kb.useRetrievalStage(Failing())
        let results = try await kb.search(search, as: .admin)
        #expect(results.hits.map(\.snippetID) == plain)
        #expect(results.degraded?.reason.contains("failing") == true)
    }

    /// Records whether each candidate it was shown carried fusion signals.
    final class SignalRecorder: RetrievalStage, @unchecked Sendable {
        let name = "signals"
        private let lock = NSLock()
        private var seen: [[Bool]] = []
        func apply(_ candidates: [RetrievalCandidate], query: String) async throws -> [RetrievalCandidate] {
            lock.withLock { seen.append(candidates.map { $0.signals != nil }) }
            return candidates
        }
        var lists: [[Bool]] { lock.withLock { seen } }
    }

    @Test func aHybridListCarriesItsFusionSignalsUnlessPlannedQueriesWereFused() async throws {
        let kb = try await knowledgeBase(try Workspace())
        let recorder = SignalRecorder()
        kb.useRetrievalStage(recorder)
        var search = SearchQuery("venus love")
        search.limit = 3
        _ = try await kb.search(search, as: .admin)
        search.mode = .keyword
        _ = try await kb.search(search, as: .admin)
        search.mode = .hybrid
        search.history = [ConversationTurn(.user, "Tell me about the planets.")]
        search.text = "and that one?"
        _ = try await kb.search(search, as: .admin)
        let lists = recorder.lists
        #expect(lists.count == 3)
        #expect(!lists[0].isEmpty && lists[0].allSatisfy { $0 })    // hybrid, adaptive: signals
        #expect(!lists[1].isEmpty && lists[1].allSatisfy { !$0 })   // keyword alone: none
        #expect(!lists[2].isEmpty && lists[2].allSatisfy { !$0 })   // planned queries fused: none
    }

    @Test func aStageCannotAddCandidates() async throws {
        let kb = try await knowledgeBase(try Workspace())
        var search = SearchQuery("venus love")
        search.limit = 3
        let plain = try await kb.search(search, as: .admin).hits.map(\.snippetID)
        kb.useRetrievalStage(Inventing())
        #expect(try await kb.search(search, as: .admin).hits.map(\.snippetID) == plain)
    }
}

import Foundation
import KBCore
import KBMemory
import KBRequests
import KBTestSupport
import Testing
@testable import KBKit

/// Valid time, expiry, feedback and consolidation, on the backend the tests run against.
@Suite struct MemoryTimeTests {
    static func time(_ text: String) -> Date { try! TimeText.parse(text, name: "time") }

    func remember(_ kb: KnowledgeBase, _ content: String, tags: [String] = [], from: String? = nil, expires: String? = nil) async throws -> Memory {
        var request = RememberRequest(content: content)
        request.scope = "user:ada"
        request.tags = tags
        request.validFrom = from
        request.expiresAt = expires
        return try await kb.remember(request, embedder: .hashing, as: .admin).memory
    }

    func recall(_ kb: KnowledgeBase, _ text: String, asOf: String? = nil, all: Bool = false) async throws -> [String] {
        var request = RecallRequest(query: text)
        request.scopes = ["user:ada"]
        request.asOf = asOf
        request.includeSuperseded = all ? true : nil
        return try await kb.recall(request, as: .admin).hits.map(\.memory.content)
    }

    func context(_ kb: KnowledgeBase, _ text: String, asOf: String? = nil) async throws -> String {
        var request = ContextRequest(bot: "helper", query: text)
        request.user = "ada"
        request.asOf = asOf
        return try await kb.context(request, as: .admin).context
    }

    func base() async throws -> KnowledgeBase {
        let kb = try KnowledgeBase.open(at: try Workspace().dbPath)
        var bot = BotRequest(name: "helper")
        bot.memoryScopes = ["user:{user}"]
        _ = try await kb.createBot(bot, as: .admin)
        return kb
    }

    @Test func aChangedFactAnswersNowWithTheNewValueAndAsOfWithTheOld() async throws {
        let kb = try await base()
        let kyiv = try await remember(kb, "Lives in Kyiv, near the river.", tags: ["home", "fact:home"], from: "2025-05-01")
        let lviv = try await remember(kb, "Lives in Lviv, near the old town.", tags: ["home", "fact:home"], from: "2026-06-01")
        // The fact has one value: the new memory closed the old one at its start, and kept it.
        let old = try await kb.memory(kyiv.id, as: .admin).memory
        #expect(old.supersededBy == lviv.id && old.validTo == Self.time("2026-06-01") && !old.isCurrent)
        #expect(try await kb.memories(scopes: [try .user("ada")]).map(\.id) == [lviv.id])

        #expect(try await recall(kb, "where does ada live") == [lviv.content])
        #expect(try await recall(kb, "lives in Kyiv near the river") == [lviv.content])
        #expect(try await recall(kb, "where does ada live", asOf: "2026-03-01") == [kyiv.content])
        #expect(try await recall(kb, "where does ada live", asOf: "2026-06-01T00:00:00Z") == [lviv.content])
        #expect(try await recall(kb, "where does ada live", asOf: "2025-01-01").isEmpty)
        #expect(Set(try await recall(kb, "where does ada live", all: true)) == [kyiv.content, lviv.content])

        let now = try await context(kb, "where do I live?")
        #expect(now.contains("Lviv") && !now.contains("Kyiv"))
        let then = try await context(kb, "where do I live?", asOf: "2026-03-01")
        #expect(then.contains("Kyiv") && !then.contains("Lviv"))

        // Deleting the newer memory makes the older one hold again.
        _ = try await kb.forget(ForgetRequest(id: lviv.id), as: .admin)
        let reopened = try await kb.memory(kyiv.id, as: .admin).memory
        #expect(reopened.isCurrent && reopened.validTo == nil)
        #expect(try await recall(kb, "where does ada live") == [kyiv.content])
    }

    @Test func anExpiringMemoryLeavesAtItsTimeAndAsOfFindsItInsideItsWindow() async throws {
        let kb = try await base()
        let trip = try await remember(kb, "Is in Lisbon for a conference.", tags: ["whereabouts"], from: "2026-01-05", expires: "2026-01-10")
        #expect(try await recall(kb, "Lisbon conference").isEmpty)
        #expect(try await recall(kb, "Lisbon conference", asOf: "2026-01-07") == [trip.content])
        #expect(try await recall(kb, "Lisbon conference", asOf: "2026-01-10").isEmpty)
        #expect(try await recall(kb, "Lisbon conference", asOf: "2026-01-04").isEmpty)

        // One that expires in a moment is recalled now, and not once its time has passed: the
        // cached set of memories that hold is made again at the first change.
        // (It starts now, as said, rather than when the write is made: on a loaded machine the
        // write came after the expiry and was refused as a memory that would never hold.)
        let start = Date(), soon = start.addingTimeInterval(4)
        let visit = try await remember(kb, "Is visiting Porto for the weekend.", from: MemoryArchive.format(start),
                                       expires: MemoryArchive.format(soon))
        let found = try await recall(kb, "Porto weekend")
        if Date() < soon { #expect(found == [visit.content]) }   // (unless this machine took longer than the window)
        while Date() <= soon { try await Task.sleep(for: .milliseconds(200)) }
        #expect(try await recall(kb, "Porto weekend").isEmpty)
        #expect(try await recall(kb, "Porto weekend", asOf: MemoryArchive.format(soon.addingTimeInterval(-1))) == [visit.content])

        // A memory cannot expire before it starts, nor end before it starts.
        let error = await #expect(throws: KBError.self) { try await remember(kb, "Never holds.", from: "2026-02-01", expires: "2026-01-01") }
        #expect(error?.code == .unprocessable && error?.message.contains("expiresAt") == true)
        var backwards = RememberRequest(content: "Ends before it starts.")
        (backwards.validFrom, backwards.validTo) = ("2026-02-01", "2026-01-01")
        await #expect(throws: KBError.self) { try await kb.remember(backwards, embedder: .hashing, as: .admin) }
        var badTime = RecallRequest(query: "x")
        badTime.asOf = "last spring"
        let refused = await #expect(throws: KBError.self) { try await kb.recall(badTime, as: .admin) }
        #expect(refused?.message.contains("asOf") == true)
    }

    @Test func feedbackHidesClosesAndRanksAndIsLoggedWithTheCaller() async throws {
        let kb = try await base()
        let wrong = try await remember(kb, "Is allergic to cats and dogs.", tags: ["health"])
        let diet = try await remember(kb, "Eats no meat on weekdays.", tags: ["diet"])
        #expect(try await recall(kb, "allergic cats").first == wrong.content)

        var flag = MemoryFeedbackRequest(id: wrong.id, feedback: "wrong")
        flag.note = "Only cats."
        let flagged = try await kb.memoryFeedback(flag, as: .admin)
        #expect(flagged.memory.flaggedWrong && flagged.memory.version == wrong.version)
        #expect(!(try await recall(kb, "allergic cats")).contains(wrong.content))
        #expect(!(try await context(kb, "am I allergic to cats?")).contains("cats and dogs"))
        // Listed as such until reviewed.
        #expect(try await kb.memories(scopes: [try .user("ada")]).first { $0.id == wrong.id }?.flaggedWrong == true)
        _ = try await kb.memoryFeedback(MemoryFeedbackRequest(id: wrong.id, feedback: "confirmed"), as: .admin)
        #expect(try await recall(kb, "allergic cats").first == wrong.content)
        // A correction ends the review too.
        let typo = try await remember(kb, "Is allergic to bees and wasps.")
        _ = try await kb.memoryFeedback(MemoryFeedbackRequest(id: typo.id, feedback: "wrong"), as: .admin)
        var fix = MemoryChangeRequest(id: typo.id)
        fix.content = "Is allergic to bee stings."
        let fixed = try await kb.changeMemory(fix, as: .admin)
        #expect(!fixed.flaggedWrong && fixed.version == 2)

        let closed = try await kb.memoryFeedback(MemoryFeedbackRequest(id: String(diet.id.prefix(8)), feedback: "outdated"), as: .admin)
        #expect(closed.memory.version == diet.version + 1 && closed.memory.validTo != nil && !closed.memory.isCurrent)
        #expect(!(try await recall(kb, "meat weekdays")).contains(diet.content))
        #expect(try await recall(kb, "meat weekdays", asOf: MemoryArchive.format(diet.validFrom)).first == diet.content)
        let again = await #expect(throws: KBError.self) { try await kb.memoryFeedback(MemoryFeedbackRequest(id: diet.id, feedback: "outdated"), as: .admin) }
        #expect(again?.code == .conflict)
        #expect(try await kb.memory(diet.id, history: true, as: .admin).history?.map(\.version) == [1])

        // useful: 5 % a time, at most 20 %.
        var cats = RecallRequest(query: "allergic cats")
        cats.scopes = ["user:ada"]
        let before = try #require(try await kb.recall(cats, as: .admin).hits.first?.score)
        for _ in 0..<6 { _ = try await kb.memoryFeedback(MemoryFeedbackRequest(id: wrong.id, feedback: "useful"), as: .admin) }
        let after = try #require(try await kb.recall(cats, as: .admin).hits.first)
        #expect(after.memory.useful == 6 && abs(after.score / before - 1.2) < 1e-6)

        // A scoped token gives feedback on its own scope only, and the log names it.
        let token = try await kb.createToken({ var t = TokenRequest(name: "ada-app"); t.scopes = ["user:ada"]; return t }(), as: .admin)
        _ = try await kb.memoryFeedback(MemoryFeedbackRequest(id: wrong.id, feedback: "useful"), as: .token(token.info))
        let bob = try await kb.remember({ var r = RememberRequest(content: "Likes chess."); r.scope = "user:bob"; return r }(), embedder: .hashing, as: .admin).memory
        let refused = await #expect(throws: KBError.self) {
            try await kb.memoryFeedback(MemoryFeedbackRequest(id: bob.id, feedback: "wrong"), as: .token(token.info))
        }
        #expect(refused?.code == .forbidden)
        #expect(try await kb.memory(bob.id, as: .admin).memory.flaggedWrong == false)
        let log = try await kb.memory(wrong.id, history: true, as: .admin).feedback ?? []
        #expect(log.map(\.feedback) == ["wrong", "confirmed"] + Array(repeating: "useful", count: 7))
        #expect(log.first?.note == "Only cats." && log.first?.caller == "admin" && log.last?.caller == "token:ada-app")
    }

    /// A near-duplicate is one of the memories the caller compares with: recall may also find
    /// one outside them (closed meanwhile, left out of the list), which consolidation once took
    /// for a match and then crashed applying (a fuzzed `POST /v1/memories/consolidate`).
    @Test func aNearDuplicateIsOneOfTheMemoriesComparedWith() async throws {
        let kb = try await base()
        let sentence = "prefers metric units for cooking baking travel distances weather reports body weight and height always"
        let twin = try await remember(kb, sentence)
        let cello = try await remember(kb, "Plays the cello on Sundays.")
        let book = kb.memoryBook
        let outside = try await book.closest(sentence, existing: [cello], scope: try .user("ada"), atLeast: -1)
        #expect(outside?.memory.id == cello.id, "\(String(describing: outside))")
        #expect(try await book.closest(sentence, existing: [twin], scope: try .user("ada"), atLeast: 0.5)?.memory.id == twin.id)
        #expect(try await book.closest(sentence, existing: [twin], scope: try .user("ada"), atLeast: 0.5, excluding: twin.id) == nil)
    }

    @Test func consolidationProposesThenAppliesEveryChangeAsANewVersion() async throws {
        let kb = try await base()
        let trip = try await remember(kb, "Is in Lisbon for a conference.", from: "2026-01-05", expires: "2026-01-10")
        let kyiv = try await remember(kb, "Lives in Kyiv.", tags: ["fact:home"], from: "2025-01-01")
        // A second current home, tagged after it was stored (tags never supersede by themselves).
        let lviv = try await remember(kb, "Lives in Lviv.", tags: ["home"], from: "2026-06-01")
        var retag = MemoryChangeRequest(id: lviv.id)
        retag.tags = ["fact:home"]
        _ = try await kb.changeMemory(retag, as: .admin)
        let sentence = "prefers metric units for cooking baking travel distances weather reports body weight and height always"
        let older = try await remember(kb, sentence, from: "2026-02-01")
        let newer = try await remember(kb, sentence.replacingOccurrences(of: "always", with: "usually"), from: "2026-03-01")
        let unrelated = try await remember(kb, "Plays the cello on Sundays.")

        let proposed = try await kb.consolidateMemories(MemoryConsolidateRequest(scope: "user:ada"), as: .admin)
        #expect(!proposed.applied && proposed.examined == 6)
        let changes = Dictionary(uniqueKeysWithValues: proposed.changes.map { ($0.memory, $0) })
        #expect(Set(changes.keys) == [trip.id, kyiv.id, older.id], "\(proposed.changes)")
        #expect(changes[trip.id]?.action == .retire && changes[trip.id]?.closedAt == Self.time("2026-01-10"))
        #expect(changes[kyiv.id]?.action == .close && changes[kyiv.id]?.into == lviv.id && changes[kyiv.id]?.closedAt == Self.time("2026-06-01"))
        #expect(changes[older.id]?.action == .merge && changes[older.id]?.into == newer.id)
        #expect(try await kb.memories(scopes: [try .user("ada")]).count == 6)   // proposals only

        var apply = MemoryConsolidateRequest(scope: "user:ada")
        apply.apply = true
        let applied = try await kb.consolidateMemories(apply, as: .admin)
        #expect(applied.applied && applied.changes.allSatisfy(\.applied) && applied.changes.count == 3)
        let current = Set(try await kb.memories(scopes: [try .user("ada")]).map(\.id))
        #expect(current == [lviv.id, newer.id, unrelated.id])
        for id in [trip.id, kyiv.id, older.id] {
            let closed = try await kb.memory(id, history: true, as: .admin)
            #expect(closed.memory.version == 2 && closed.history?.count == 1 && closed.memory.validTo != nil, "\(id)")
        }
        // Nothing was deleted: every memory is still there, and asOf finds what held then.
        #expect(try await kb.memories(scopes: [try .user("ada")], includeSuperseded: true).count == 6)
        let then = try await recall(kb, "where does ada live", asOf: "2026-03-01")
        #expect(then.first == "Lives in Kyiv." && !then.contains("Lives in Lviv.") && !then.contains(older.content))
        // A second run finds nothing more to do.
        #expect(try await kb.consolidateMemories(apply, as: .admin).changes.isEmpty)

        // Export keeps valid time and feedback state; importing it elsewhere gives the same bytes back.
        _ = try await kb.memoryFeedback(MemoryFeedbackRequest(id: unrelated.id, feedback: "useful"), as: .admin)
        let exported = try await kb.exportMemories(as: .admin)
        #expect(exported.contains("\"valid_to\":") && exported.contains("\"expires_at\":\"2026-01-10T00:00:00.000Z\"") && exported.contains("\"useful\":1"))
        let copy = try KnowledgeBase.open(at: try Workspace().dbPath)
        let report = try await copy.importMemories(exported, embedder: .hashing, as: .admin)
        #expect(report.added == 6 && report.failed.isEmpty)
        #expect(try await copy.exportMemories(as: .admin) == exported)
        #expect(try await copy.memories(scopes: [try .user("ada")]).map(\.id).sorted() == current.sorted())
    }

    /// Questions that name a time recall what was said, or held, then.
    @Test func questionsThatNameATimeRecallWhatWasSaidOrHeldThen() async throws {
        let kb = try await base()
        let smoking = try await remember(kb, "Quit smoking.", tags: ["habit"], from: "2026-11-18T19:00:00Z")
        let jazz = try await remember(kb, "Likes jazz, especially Coltrane.", tags: ["preference"], from: "2026-10-01")
        let kyiv = try await remember(kb, "Lives in Kyiv.", tags: ["fact:home"], from: "2025-05-01")
        let lviv = try await remember(kb, "Lives in Lviv.", tags: ["fact:home"], from: "2026-06-01")
        func ask(_ text: String) async throws -> (ids: Set<String>, during: TimeWindow?) {
            var query = MemoryQuery(text)
            query.scopes = [try .user("ada")]
            query.now = Self.time("2026-11-26T10:00:00Z")
            let results = try await kb.recall(query, as: .admin)
            return (Set(results.hits.map(\.memory.id)), results.during)
        }
        let lastWeek = try await ask("What did I tell you last week?")
        #expect(lastWeek.ids == [smoking.id])
        #expect(lastWeek.during == TimeWindow(start: Self.time("2026-11-16"), end: Self.time("2026-11-23"), told: true))
        #expect(try await ask("Що я тобі казала минулого тижня?").ids == [smoking.id])
        #expect(try await ask("Where did I live in March?").ids == [kyiv.id])
        #expect(try await ask("Де я жила у березні?").ids == [kyiv.id])
        #expect(try await ask("What have I told you since I moved?").ids == [smoking.id, jazz.id, lviv.id])
        #expect(try await ask("What did I say yesterday?").ids.isEmpty)
        // Without a time in its words, a question is about now.
        let now = try await ask("Where do I live?")
        #expect(now.ids.contains(lviv.id) && !now.ids.contains(kyiv.id) && now.during == nil)
    }
}

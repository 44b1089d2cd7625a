import Foundation
import KBCore
import KBMemory
import Testing

@Suite struct MemoryRulesTests {
    @Test func contentKeysIgnoreRunsOfWhitespaceButNotCase() {
        #expect(MemoryRules.contentKey("  prefers\n metric \t  units ") == "prefers metric units")
        #expect(MemoryRules.contentKey("Prefers metric units") != MemoryRules.contentKey("prefers metric units"))
    }

    @Test func emptyAndOversizedContentIsRefusedWithTheLimit() throws {
        var options = MemoryOptions()
        options.maxContentBytes = 10
        #expect(throws: KBError.self) { try MemoryRules.validContent(" \n\t ", options: options) }
        let error = #expect(throws: KBError.self) { try MemoryRules.validContent("ééééééé", options: options) }
        #expect(error?.code == .tooLarge)
        #expect(error?.message.contains("14 bytes") == true)
        #expect(error?.message.contains("limit is 10") == true)
        #expect(try MemoryRules.validContent("  0123456789 \n", options: options) == "0123456789")
    }

    @Test func titlesAreOneTrimmedLineOrNothing() throws {
        #expect(try MemoryRules.validTitle("  Units ") == "Units")
        #expect(try MemoryRules.validTitle("   ") == nil)
        #expect(try MemoryRules.validTitle(nil) == nil)
        #expect(throws: KBError.self) { try MemoryRules.validTitle("two\nlines") }
    }

    @Test func tagsAreDeduplicatedAndSorted() throws {
        #expect(try MemoryRules.validTags([Tag("Diet"), Tag("topic: Health"), Tag("diet")]) == [Tag("diet"), Tag("topic:health")])
        #expect(throws: KBError.self) { try MemoryRules.validTags([Tag("  ")]) }
    }

    @Test(arguments: ["global", "user:ada", "bot:astro-helper", "user:42"])
    func validScopesParse(text: String) throws {
        #expect(try MemoryScope(text).name == text)
    }

    @Test(arguments: ["", "user:", "users:ada", "user:a b", "Global", "bot:x\n", "team:x"])
    func malformedScopesAreRefusedWithTheForm(text: String) {
        let error = #expect(throws: KBError.self) { try MemoryScope(text) }
        #expect(error?.message.contains("user:ID") == true)
    }

    @Test func idsAndPrefixesAreCheckedAndLowerCased() throws {
        #expect(try MemoryRules.idOrPrefix("3F2A") == "3f2a")
        #expect(throws: KBError.self) { try MemoryRules.idOrPrefix("3f2") }
        #expect(throws: KBError.self) { try MemoryRules.idOrPrefix("../etc") }
    }
}

@Suite struct NearDuplicatesTests {
    @Test func findsEntriesAtOrAboveTheThresholdMostSimilarFirst() {
        let v: [Float] = [1, 0, 0]
        let candidates: [(id: String, vector: [Float])] = [
            ("far", [0, 1, 0]), ("same", [2, 0, 0]), ("close", [0.95, 0.3122, 0]), ("opposite", [-1, 0, 0]),
        ]
        let found = NearDuplicates.find(v, among: candidates, threshold: 0.92)
        #expect(found.map(\.id) == ["same", "close"])
        #expect(abs(found[0].similarity - 1) < 1e-6)
        #expect(found[1].similarity >= 0.92 && found[1].similarity < 0.96)
    }

    @Test func zeroAndMismatchedVectorsAreNeverDuplicates() {
        #expect(NearDuplicates.cosine([0, 0], [1, 0]) == 0)
        #expect(NearDuplicates.cosine([1, 0], [1, 0, 0]) == 0)
    }
}

@Suite struct RecencyTests {
    @Test(arguments: [("30d", 30 * 86_400.0), ("12h", 43_200), ("90m", 5_400), ("45s", 45), ("2w", 1_209_600), ("1.5", 129_600)])
    func halfLivesParseWithUnits(text: String, seconds: Double) throws {
        #expect(try Recency(text).halfLife == seconds)
    }

    @Test(arguments: ["", "0d", "-3d", "soon", "3y", "nan"])
    func malformedHalfLivesAreRefused(text: String) {
        #expect(throws: KBError.self) { try Recency(text) }
    }

    @Test func aMemoryOneHalfLifeOldCountsHalf() throws {
        let recency = try Recency("10d")
        let now = Date(timeIntervalSince1970: 1_000_000_000)
        #expect(recency.weight(updated: now, now: now) == 1)
        #expect(abs(recency.weight(updated: now - 10 * 86_400, now: now) - 0.5) < 1e-12)
        #expect(abs(recency.weight(updated: now - 20 * 86_400, now: now) - 0.25) < 1e-12)
        #expect(recency.weight(updated: now + 3600, now: now) == 1)
    }
}

@Suite struct MemoryArchiveTests {
    func record() throws -> MemoryRecord {
        let created = MemoryArchive.roundedToMilliseconds(Date(timeIntervalSince1970: 1_790_000_000.123456))
        let memory = Memory(
            id: "6f1c1f9e-2b2a-4b7e-9a55-0c1d2e3f4a5b", scope: try MemoryScope("user:ada"), title: "Units",
            content: "Prefers metric units, \"always\".\nEven for recipes.", tags: [Tag("pref")], createdAt: created,
            updatedAt: created + 60, version: 2)
        return MemoryRecord(memory: memory, history: [
            MemoryVersion(version: 1, title: nil, content: "Prefers metric units.", tags: [], updatedAt: created),
        ])
    }

    @Test func aRecordEncodesToOneLineAndDecodesToTheSameRecord() throws {
        let original = try record()
        let line = try MemoryArchive.encode(original)
        #expect(!line.contains("\n"))
        let decoded = MemoryArchive.decode(lines: line + "\n", options: MemoryOptions())
        #expect(decoded.count == 1)
        let back = try decoded[0].result.get()
        #expect(try MemoryArchive.encode(back) == line)
        #expect(back.memory.id == original.memory.id)
        #expect(back.memory.content == original.memory.content)
        #expect(back.history.map(\.content) == ["Prefers metric units."])
        #expect(abs(back.memory.createdAt.timeIntervalSince(original.memory.createdAt)) < 0.0005)
    }

    @Test func badLinesAreReportedByNumberAndTheOthersStillParse() throws {
        let good = try MemoryArchive.encode(try record())
        let text = [
            good,
            "",
            "{not json",
            #"{"id":"nope","scope":"global","content":"x","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}"#,
            #"{"id":"6f1c1f9e-2b2a-4b7e-9a55-0c1d2e3f4a5c","scope":"team:x","content":"x","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}"#,
            #"{"id":"6f1c1f9e-2b2a-4b7e-9a55-0c1d2e3f4a5d","scope":"global","content":"  ","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}"#,
            #"{"id":"6f1c1f9e-2b2a-4b7e-9a55-0c1d2e3f4a5e","scope":"global","content":"x","created_at":"yesterday","updated_at":"2026-01-01T00:00:00.000Z"}"#,
            #"{"id":"6f1c1f9e-2b2a-4b7e-9a55-0c1d2e3f4a5f","scope":"global","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}"#,
            #"{"id":"6F1C1F9E-2B2A-4B7E-9A55-0C1D2E3F4A60","scope":"global","content":"fine","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00.000Z"}"#,
        ].joined(separator: "\n")
        let results = MemoryArchive.decode(lines: text, options: MemoryOptions())
        #expect(results.map(\.line) == [1, 3, 4, 5, 6, 7, 8, 9])
        let failures = results.compactMap { entry -> (Int, String)? in
            if case .failure(let error) = entry.result { return (entry.line, error.message) }
            return nil
        }
        #expect(failures.map(\.0) == [3, 4, 5, 6, 7, 8])
        #expect(failures[1].1.contains("UUID"))
        #expect(failures[2].1.contains("scope"))
        #expect(failures[3].1.contains("empty"))
        #expect(failures[4].1.contains("created_at"))
        #expect(failures[5].1.contains("content"))
        let last = try results[7].result.get()
        #expect(last.memory.id == "6f1c1f9e-2b2a-4b7e-9a55-0c1d2e3f4a60")
        #expect(last.memory.version == 1)
    }

    @Test func historyMustCountUpBelowTheCurrentVersion() throws {
        var bad = try record()
        bad.history.append(MemoryVersion(version: 2, title: nil, content: "x", tags: [], updatedAt: Date()))
        let line = try MemoryArchive.encode(bad)
        let results = MemoryArchive.decode(lines: line, options: MemoryOptions())
        guard case .failure(let error) = results[0].result else { Issue.record("accepted"); return }
        #expect(error.message.contains("history"))
    }
}

@testable import KBRetrieval
import Testing

@Suite struct SearchStateTests {
    /// A set every request uses (a bot's knowledge) stays cached while many one-off sets (each
    /// user's memories) fill the cache past its capacity.
    @Test func aFullCacheForgetsTheSetsUsedLeastRecently() {
        let state = SearchState()
        var made: [String: Int] = [:]
        func lookup(_ key: String, generation: Int64 = 1) -> Set<Int64> {
            state.cached(\.hidden, key, generation: generation) {
                made[key, default: 0] += 1
                return [Int64(key.count)]
            }
        }
        for user in 0..<(SearchState.capacity * 4) {
            #expect(lookup("bot") == [3])
            _ = lookup("user \(user)")
        }
        #expect(made["bot"] == 1)
        // The oldest users' sets were forgotten and are made again; the newest are still held.
        _ = lookup("user 0")
        #expect(made["user 0"] == 2)
        _ = lookup("user \(SearchState.capacity * 4 - 1)")
        #expect(made["user \(SearchState.capacity * 4 - 1)"] == 1)
        // A new generation forgets everything.
        _ = lookup("bot", generation: 2)
        #expect(made["bot"] == 2)
    }
}

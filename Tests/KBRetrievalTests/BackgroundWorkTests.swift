@testable import KBRetrieval
import Testing

@Suite struct BackgroundWorkTests {
    @Test func theResultOrTheErrorComesBackToTheStartingThread() throws {
        @Sendable func work() throws -> Int { (1...100).reduce(0, +) }
        let ranking = BackgroundWork { try work() }
        // … other work on this thread …
        let result = try ranking.result()
        #expect(result == 5050)
        struct Failed: Error {}
        let failing = BackgroundWork<Int> { throw Failed() }
        #expect(throws: Failed.self) { try failing.result() }
    }
}

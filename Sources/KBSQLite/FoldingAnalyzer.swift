import Foundation
import GRDB
public import KBStore

/// kb's keyword analysis outside an FTS5 table: the `kb_fold` tokenizer (`FoldingTokenizer`) run
/// on a private in-memory SQLite connection, so another store (PostgreSQL) keeps and searches
/// exactly the terms an SQLite index would.
///
/// ```swift
/// let analyzer = try FoldingAnalyzer(language: .auto)
/// analyzer.terms(in: "Книги і книгою")   // ["книг", "і", "книг"]
/// ```
public final class FoldingAnalyzer: KeywordAnalyzer, @unchecked Sendable {
    // @unchecked: each lane's tokenizer is used only inside its queue's serial access.
    public let language: KeywordLanguage
    /// One connection and tokenizer per core (two at least), so that texts analysed on several
    /// threads at once (`kb export` into PostgreSQL) do not wait for one connection.
    private let lanes: [(queue: DatabaseQueue, tokenizer: any FTS5Tokenizer)]
    private let next = ManagedAtomicCounter()

    public init(language: KeywordLanguage = .auto) throws {
        self.language = language
        let descriptor = FTS5TokenizerDescriptor(components: language.ftsTokenizer.split(separator: " ").map(String.init))
        lanes = try (0..<max(2, ProcessInfo.processInfo.activeProcessorCount)).map { _ in
            var configuration = Configuration()
            configuration.prepareDatabase { db in db.add(tokenizer: FoldingTokenizer.self) }
            let queue = try DatabaseQueue(configuration: configuration)
            return (queue, try queue.inDatabase { db in try db.makeTokenizer(descriptor) })
        }
    }

    public func terms(in text: String) -> [String] {
        let lane = lanes[next.increment() % lanes.count]
        // Tokenizing reads no table: it cannot fail but for memory, where no term is the answer.
        return (try? lane.queue.inDatabase { _ in try lane.tokenizer.tokenize(document: text).map(\.token) }) ?? []
    }
}

/// A counter several threads increment (a lane chosen in turn).
///
/// @unchecked Sendable: `lock` guards `value`.
private final class ManagedAtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value &+= 1
        return value & Int.max
    }
}

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
    // @unchecked: the tokenizer is used only inside `queue`'s serial access.
    public let language: KeywordLanguage
    private let queue: DatabaseQueue
    private let tokenizer: any FTS5Tokenizer

    public init(language: KeywordLanguage = .auto) throws {
        self.language = language
        var configuration = Configuration()
        configuration.prepareDatabase { db in db.add(tokenizer: FoldingTokenizer.self) }
        queue = try DatabaseQueue(configuration: configuration)
        let descriptor = FTS5TokenizerDescriptor(components: language.ftsTokenizer.split(separator: " ").map(String.init))
        tokenizer = try queue.inDatabase { db in try db.makeTokenizer(descriptor) }
    }

    public func terms(in text: String) -> [String] {
        // Tokenizing reads no table: it cannot fail but for memory, where no term is the answer.
        (try? queue.inDatabase { _ in try tokenizer.tokenize(document: text).map(\.token) }) ?? []
    }
}

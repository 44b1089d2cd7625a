import GRDB
import KBStore

/// kb's FTS5 tokenizer for keyword languages other than English (`kb_fold LANGUAGE`): unicode61
/// with `remove_diacritics 2` splits and lower-cases, keeping combining marks inside words
/// (categories `L* N* Co M*`: by default unicode61 cuts Arabic words at every haraka), then each
/// token loses its combining marks and is folded and stemmed by `KeywordLanguage.normalize`,
/// when text is indexed and when a query is parsed alike.
final class FoldingTokenizer: FTS5WrapperTokenizer {
    static let name = "kb_fold"
    let wrappedTokenizer: any FTS5Tokenizer
    let language: KeywordLanguage

    init(db: Database, arguments: [String]) throws {
        wrappedTokenizer = try db.makeTokenizer(.unicode61(diacritics: .remove, categories: "L* N* Co M*"))
        language = try arguments.first.map { try KeywordLanguage($0) } ?? .simple
    }

    func accept(token: String, flags: FTS5TokenFlags, for tokenization: FTS5Tokenization, tokenCallback: FTS5WrapperTokenCallback) throws {
        var scalars = String.UnicodeScalarView()
        for scalar in token.unicodeScalars where ![.nonspacingMark, .enclosingMark].contains(scalar.properties.generalCategory) {
            scalars.append(scalar)
        }
        let normalized = language.normalize(String(scalars))
        guard !normalized.isEmpty else { return }
        try tokenCallback(normalized, flags)
    }
}

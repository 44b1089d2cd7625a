import GRDB
import KBCore
import KBStore

/// kb's FTS5 tokenizer for keyword languages other than English (`kb_fold LANGUAGE`): unicode61
/// with `remove_diacritics 2` splits and lower-cases, keeping combining marks inside words
/// (categories `L* N* Co M*`: by default unicode61 cuts Arabic and Hindi words at every mark),
/// then each token loses its combining marks and is folded and stemmed by
/// `KeywordLanguage.normalize`, when text is indexed and when a query is parsed alike.
///
/// `kb_fold auto` puts FTS5's Porter stemmer under that (it changes only words of ASCII letters)
/// and cuts runs of Chinese and Japanese ideographs into overlapping pairs (`KeywordQuery.pairs`),
/// one token each.
final class FoldingTokenizer: FTS5WrapperTokenizer {
    static let name = "kb_fold"
    let wrappedTokenizer: any FTS5Tokenizer
    let language: KeywordLanguage

    init(db: Database, arguments: [String]) throws {
        language = try arguments.first.map { try KeywordLanguage($0) } ?? .simple
        let words = FTS5TokenizerDescriptor.unicode61(diacritics: .remove, categories: "L* N* Co M*")
        wrappedTokenizer = try db.makeTokenizer(language == .auto ? .porter(wrapping: words) : words)
    }

    func accept(token: String, flags: FTS5TokenFlags, for tokenization: FTS5Tokenization, tokenCallback: FTS5WrapperTokenCallback) throws {
        // An ASCII word (most of an English book's) has no marks, no ideographs and nothing to fold
        // or stem outside English's stemmer, which wraps this tokenizer (`.auto`, `.simple`).
        if language == .auto || language == .simple, token.utf8.allSatisfy({ $0 < 0x80 }) {
            if !token.isEmpty { try tokenCallback(token, flags) }
            return
        }
        var scalars = String.UnicodeScalarView()
        for scalar in token.unicodeScalars where ![.nonspacingMark, .enclosingMark].contains(scalar.properties.generalCategory) {
            scalars.append(scalar)
        }
        let word = String(scalars)
        if language == .auto, word.unicodeScalars.contains(where: KeywordQuery.isIdeograph) {
            for piece in KeywordQuery.pairs(word) { try tokenCallback(language.normalize(piece), flags) }
            return
        }
        let normalized = language.normalize(word)
        guard !normalized.isEmpty else { return }
        try tokenCallback(normalized, flags)
    }
}

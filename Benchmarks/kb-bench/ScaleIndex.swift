import Foundation
import KBCore
import KBEmbed
import KBSQLite
import KBStore
import GRDB

/// A shelf of books for `scripts/bench/bench-serve.sh --scale`: `count` snippets of real-length text
/// (80–200 words drawn from `wordsFile`, one snippet per paragraph, 100 to a book) with synthetic
/// unit vectors recorded under the local model's name, so that `kb serve` embeds real queries and
/// scans a matrix of the real size. Synthetic vectors make the ranking meaningless and the cost
/// real; books go under /scale/books/ for a bot to take as its knowledge. The vectors are grouped
/// as embeddings are (`shelfVectors`): a uniformly spread matrix would be a worst case no text
/// produces for the sign stage of the int8 search, whose depth is calibrated on the index's rows.
func makeScaleIndex(path: String, count: Int, wordsFile: String, modelName: String, themesFile: String?) async throws -> [String: Any] {
    let themes = try await shelfThemes(themesFile)
    let words = ((try? String(contentsOfFile: wordsFile, encoding: .utf8)) ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
    guard words.count >= 100 else { throw KBError(.invalidArgument, "\(wordsFile) holds fewer than 100 words") }
    let store = try SQLiteStore.open(at: path, create: true)
    // (The spec kb resolves to that model: "local" is the English default's.)
    let embedder = EmbedderRecord(name: modelName, dimension: 384, spec: modelName == Locations.defaultModelName ? "local" : "local:\(modelName)")
    let perBook = 100, start = now()
    var state: UInt64 = 0x5CA1E
    func next() -> Int {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int(state >> 33)
    }
    var written = 0, book = 0
    while written < count {
        let n = min(perBook, count - written)
        var snippets: [Snippet] = []
        var offset = 0
        for ordinal in 0..<n {
            let length = 80 + next() % 121
            let text = (0..<length).map { _ in words[next() % words.count] }.joined(separator: " ")
            snippets.append(Snippet(ordinal: ordinal, text: text, start: offset, end: offset + text.utf8.count,
                                    headingPath: ["Book \(book)", "Chapter \(ordinal / 10)"]))
            offset += text.utf8.count + 2
        }
        let source = Source(path: String(format: "/scale/books/book-%05d.md", book), kind: .note, title: "Book \(book)",
                            contentHash: "scale-\(book)", size: offset)
        let vectors = shelfVectors(book: book, count: n, themes: themes)
        _ = try await store.replace(SourceDocument(source: source, snippets: snippets), vectors: vectors, embedder: embedder, ingestedAt: Date())
        written += n
        book += 1
    }
    return ["snippets": written, "books": book, "seconds": now() - start]
}

/// The embeddings of `themesFile`'s texts (one a line) by the installed model: the first books'
/// themes, so that real questions about those texts meet the shelf as they meet real passages.
func shelfThemes(_ themesFile: String?) async throws -> [[Float]] {
    guard let themesFile else { return [] }
    let texts = lines(themesFile).filter { !$0.isEmpty }
    return try await BERTEmbedder.installed().embed(texts, role: .passage)
}

/// A book's synthetic vectors: each chapter of ten snippets around a centre of its own, and every
/// chapter of a book near the book's theme (cosines ≈ 0.8 between snippets of one chapter, ≈ 0.67
/// between chapters of one book, ≈ 0.8 to the theme, ≈ 0 across books) — roughly how MiniLM places
/// a book's passages. Book i's theme is `themes[i]` when there is one (a real text's embedding),
/// else a random direction.
func shelfVectors(book: Int, count: Int, themes: [[Float]]) -> [[Float]] {
    let d = 384
    let theme = book < themes.count ? themes[book] : randomUnitVectors(1, d, seed: UInt64(0x7E3E + book))
    let chapters = randomUnitVectors((count + 9) / 10, d, seed: UInt64(0xC4A9 &+ book &* 131))
    let jitter = randomUnitVectors(count, d, seed: UInt64(0xB00C + book))
    return (0..<count).map { i in
        let c = i / 10
        var v = (0..<d).map { j in theme[j] + 0.5 * chapters[c * d + j] + 0.5 * jitter[i * d + j] }
        let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        for j in 0..<d { v[j] /= norm }
        return v
    }
}

/// Rewrites the vectors of a shelf built by an older `makeScaleIndex` (uniformly spread vectors)
/// with `shelfVectors`, book by book, keeping its text and its memories.
func regroupScaleVectors(path: String, modelName: String, themesFile: String?) async throws -> [String: Any] {
    let themes = try await shelfThemes(themesFile)
    let store = try SQLiteStore.open(at: path, create: false)
    let start = now()
    let books = try await store.write { db -> Int in
        guard let embedderID = try Int64.fetchOne(db, sql: "SELECT id FROM embedders WHERE name = ?", arguments: [modelName]) else {
            throw KBError(.invalidArgument, "\(path) has no vectors of \(modelName).")
        }
        let sources = try Row.fetchAll(db, sql: "SELECT id, path FROM sources WHERE path LIKE '/scale/books/book-%' ORDER BY path")
        for source in sources {
            let path: String = source[1]
            guard let book = Int(path.dropFirst("/scale/books/book-".count).prefix(5)) else { continue }
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM snippets WHERE source_id = ? ORDER BY ordinal", arguments: [source[0] as Int64])
            for (id, vector) in zip(ids, shelfVectors(book: book, count: ids.count, themes: themes)) {
                try db.execute(sql: "UPDATE vectors SET data = ? WHERE snippet_id = ? AND embedder_id = ?",
                               arguments: [VectorCoding.encode(vector), id, embedderID])
            }
        }
        return sources.count
    }
    return ["books": books, "seconds": now() - start]
}

import Foundation
import KBCore
import KBIndex
import KBStore

/// A shelf of books for `scripts/bench-serve.sh --scale`: `count` snippets of real-length text
/// (80–200 words drawn from `wordsFile`, one snippet per paragraph, 100 to a book) with synthetic
/// unit vectors recorded under the local model's name, so that `kb serve` embeds real queries and
/// scans a matrix of the real size. Synthetic vectors make the ranking meaningless and the cost
/// real; books go under /scale/books/ for a bot to take as its knowledge.
func makeScaleIndex(path: String, count: Int, wordsFile: String, modelName: String) async throws -> [String: Any] {
    let words = ((try? String(contentsOfFile: wordsFile, encoding: .utf8)) ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
    guard words.count >= 100 else { throw KBError(.invalidArgument, "\(wordsFile) holds fewer than 100 words") }
    let store = try SQLiteStore.open(at: path, create: true)
    let embedder = EmbedderRecord(name: modelName, dimension: 384, spec: "local")
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
        let matrix = randomUnitVectors(n, 384, seed: UInt64(0xB00C + book))
        let vectors = (0..<n).map { Array(matrix[$0 * 384..<($0 + 1) * 384]) }
        _ = try await store.replace(SourceDocument(source: source, snippets: snippets), vectors: vectors, embedder: embedder, ingestedAt: Date())
        written += n
        book += 1
    }
    return ["snippets": written, "books": book, "seconds": now() - start]
}

/// The lines of a text held as Unicode scalars, by offset. Handles `\n`, `\r\n` and `\r`.
struct Lines: Sequence {
    struct Line: Hashable {
        /// Offset of the first scalar of the line.
        var start: Int
        /// Offset one past the last scalar before the line break.
        var end: Int
        /// Offset where the next line starts (after the line break).
        var next: Int
    }

    private let lines: [Line]

    init(_ scalars: [Unicode.Scalar], from offset: Int = 0, to limit: Int? = nil) {
        let limit = limit ?? scalars.count
        var result: [Line] = []
        var start = offset
        var i = offset
        while i < limit {
            let c = scalars[i]
            if c == "\n" || c == "\r" {
                var next = i + 1
                if c == "\r" && next < limit && scalars[next] == "\n" { next += 1 }
                result.append(Line(start: start, end: i, next: next))
                start = next
                i = next
            } else {
                i += 1
            }
        }
        if start < limit { result.append(Line(start: start, end: limit, next: limit)) }
        lines = result
    }

    var first: Line? { lines.first }
    var count: Int { lines.count }
    subscript(index: Int) -> Line { lines[index] }
    func makeIterator() -> IndexingIterator<[Line]> { lines.makeIterator() }

    func text(_ line: Line, in scalars: [Unicode.Scalar]) -> String {
        String(String.UnicodeScalarView(scalars[line.start..<line.end]))
    }
}

extension Unicode.Scalar {
    var isSpace: Bool { properties.isWhitespace }
}

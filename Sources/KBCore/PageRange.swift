/// The pages a snippet of a book spans: 1-based page numbers and the labels printed on them.
public struct PageRange: Hashable, Sendable, Codable {
    /// First page, 1-based physical page number.
    public var start: Int
    /// Last page, 1-based, `>= start`.
    public var end: Int
    /// The printed label of the first page ("xii", "217"); the number when the PDF has none.
    public var startLabel: String
    /// The printed label of the last page.
    public var endLabel: String

    public init(start: Int, end: Int, startLabel: String? = nil, endLabel: String? = nil) {
        self.start = start
        self.end = end
        self.startLabel = startLabel ?? String(start)
        self.endLabel = endLabel ?? String(end)
    }

    /// `p. 12` or `pp. xii–3`, as a reader would cite it.
    public var citation: String {
        start == end ? "p. \(startLabel)" : "pp. \(startLabel)–\(endLabel)"
    }
}

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

/// Where a page of a book starts in its source's text, with the label printed on it: what makes
/// a page asked for, a grep match and a cited word exact to the page (a snippet alone knows only
/// the span of pages it runs over).
public struct PageStart: Hashable, Sendable, Codable {
    /// 1-based physical page number.
    public var page: Int
    /// Offset (Unicode scalars) in the source's text where the page's text starts.
    public var offset: Int
    /// The printed label ("xii", "217"); the number when the PDF has none.
    public var label: String

    public init(page: Int, offset: Int, label: String? = nil) {
        self.page = page
        self.offset = offset
        self.label = label ?? String(page)
    }
}

extension [PageStart] {
    /// The page holding an offset (the last page starting at or before it); nil without pages.
    public func page(at offset: Int) -> PageStart? {
        guard !isEmpty else { return nil }
        var low = 0, high = count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if self[mid].offset <= offset { low = mid } else { high = mid - 1 }
        }
        return self[low]
    }

    /// The pages the text from `start` to `end` (exclusive) runs over.
    public func range(from start: Int, to end: Int) -> PageRange? {
        guard let first = page(at: start), let last = page(at: Swift.max(start, end - 1)) else { return nil }
        return PageRange(start: first.page, end: last.page, startLabel: first.label, endLabel: last.label)
    }

    /// Where pages `low` to `high` start and end in the text (`textEnd` ends the last page);
    /// nil when none of them is known.
    public func offsets(pages low: Int, _ high: Int, textEnd: Int) -> Range<Int>? {
        guard let first = firstIndex(where: { $0.page >= low && $0.page <= high }) else { return nil }
        let after = firstIndex(where: { $0.page > high })
        let end = after.map { self[$0].offset } ?? textEnd
        return self[first].offset < end ? self[first].offset..<end : nil
    }

    /// One line a page, `offset<TAB>label`: how stores keep them.
    public var stored: String {
        map { start in
            let label = String(start.label.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
            return "\(start.offset)\t\(label)"
        }.joined(separator: "\n")
    }

    /// Page starts as `stored` wrote them (pages numbered from 1 in order); lines that do not
    /// read are skipped.
    public init(stored: String) {
        self = []
        for line in stored.split(separator: "\n", omittingEmptySubsequences: true) {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard let offset = Int(parts[0]) else { continue }
            append(PageStart(page: count + 1, offset: offset, label: parts.count > 1 ? String(parts[1]) : nil))
        }
    }
}

/// Finds the headings and blocks of a Markdown text: ATX (`## Title`) and setext headings,
/// fenced code blocks (whose `#` lines are not headings), and paragraphs between blank lines.
///
/// ```swift
/// let structure = MarkdownStructure.parse(scalars, from: frontMatter.bodyStart)
/// structure.sections.map(\.headingPath)   // [["Venus"], ["Venus", "In the tenth house"]]
/// ```
public struct MarkdownStructure: Sendable {
    public var sections: [TextSection]
    /// The text of the first level-1 heading, if any.
    public var firstTitle: String?

    public static func parse(_ scalars: [Unicode.Scalar], from offset: Int = 0) -> MarkdownStructure {
        let lines = Lines(scalars, from: offset)
        var sections: [TextSection] = []
        var stack: [(level: Int, title: String)] = []
        var blocks: [Range<Int>] = []
        var firstTitle: String?
        var blockStart: Int?
        var blockEnd = 0
        var fence: (character: Unicode.Scalar, length: Int)?
        var paragraphLines = 0

        func closeBlock() {
            if let start = blockStart, let trimmed = trim(start..<blockEnd, scalars) { blocks.append(trimmed) }
            blockStart = nil
            paragraphLines = 0
        }
        func closeSection() {
            closeBlock()
            if !blocks.isEmpty { sections.append(TextSection(headingPath: stack.map(\.title), blocks: blocks)) }
            blocks = []
        }
        func openHeading(level: Int, title: String) {
            closeSection()
            while let last = stack.last, last.level >= level { stack.removeLast() }
            stack.append((level, title))
            if level == 1 && firstTitle == nil && !title.isEmpty { firstTitle = title }
        }

        for index in 0..<lines.count {
            let line = lines[index]
            let content = scalars[line.start..<line.end]
            if let open = fence {
                blockEnd = line.end
                if let close = fenceMarker(content), close.character == open.character, close.length >= open.length,
                   close.rest.allSatisfy(\.isSpace) {
                    fence = nil
                    closeBlock()
                }
                continue
            }
            if let marker = fenceMarker(content) {
                closeBlock()
                fence = (marker.character, marker.length)
                blockStart = line.start
                blockEnd = line.end
                continue
            }
            if content.allSatisfy(\.isSpace) {
                closeBlock()
                continue
            }
            if let heading = atxHeading(content) {
                openHeading(level: heading.level, title: heading.title)
                continue
            }
            if paragraphLines == 1, let start = blockStart, let level = setextLevel(content) {
                let title = String(String.UnicodeScalarView(scalars[start..<blockEnd])).trimmingSpaces
                blockStart = nil
                paragraphLines = 0
                openHeading(level: level, title: title)
                continue
            }
            if blockStart == nil { blockStart = line.start }
            blockEnd = line.end
            paragraphLines += 1
        }
        closeSection()
        return MarkdownStructure(sections: sections, firstTitle: firstTitle)
    }

    /// Plain text: one section of paragraphs separated by blank lines.
    public static func paragraphs(_ scalars: [Unicode.Scalar], from offset: Int = 0) -> [TextSection] {
        var blocks: [Range<Int>] = []
        var start: Int?
        var end = 0
        for line in Lines(scalars, from: offset) {
            if scalars[line.start..<line.end].allSatisfy(\.isSpace) {
                if let s = start, let t = trim(s..<end, scalars) { blocks.append(t) }
                start = nil
            } else {
                if start == nil { start = line.start }
                end = line.end
            }
        }
        if let s = start, let t = trim(s..<end, scalars) { blocks.append(t) }
        return blocks.isEmpty ? [] : [TextSection(headingPath: [], blocks: blocks)]
    }

    static func trim(_ range: Range<Int>, _ scalars: [Unicode.Scalar]) -> Range<Int>? {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper && scalars[lower].isSpace { lower += 1 }
        while upper > lower && scalars[upper - 1].isSpace { upper -= 1 }
        return lower < upper ? lower..<upper : nil
    }

    private static func leadingSpaces(_ line: ArraySlice<Unicode.Scalar>) -> Int {
        var n = 0
        for c in line { if c == " " { n += 1 } else { break } }
        return n
    }

    private static func fenceMarker(_ line: ArraySlice<Unicode.Scalar>)
        -> (character: Unicode.Scalar, length: Int, rest: ArraySlice<Unicode.Scalar>)? {
        let indent = leadingSpaces(line)
        guard indent <= 3 else { return nil }
        let body = line.dropFirst(indent)
        guard let c = body.first, c == "`" || c == "~" else { return nil }
        let length = body.prefix(while: { $0 == c }).count
        guard length >= 3 else { return nil }
        return (c, length, body.dropFirst(length))
    }

    private static func atxHeading(_ line: ArraySlice<Unicode.Scalar>) -> (level: Int, title: String)? {
        let indent = leadingSpaces(line)
        guard indent <= 3 else { return nil }
        let body = line.dropFirst(indent)
        let level = body.prefix(while: { $0 == "#" }).count
        guard (1...6).contains(level) else { return nil }
        let rest = body.dropFirst(level)
        guard rest.isEmpty || rest.first!.isSpace else { return nil }
        var title = String(String.UnicodeScalarView(rest)).trimmingSpaces
        // An optional closing sequence of #s, preceded by a space.
        if let lastNonHash = title.lastIndex(where: { $0 != "#" }) {
            if title[lastNonHash] == " " { title = String(title[...lastNonHash]).trimmingSpaces }
        } else {
            title = ""
        }
        return (level, title)
    }

    private static func setextLevel(_ line: ArraySlice<Unicode.Scalar>) -> Int? {
        let indent = leadingSpaces(line)
        guard indent <= 3 else { return nil }
        let body = line.dropFirst(indent).reversed().drop(while: \.isSpace)
        guard let c = body.first, c == "=" || c == "-", body.allSatisfy({ $0 == c }) else { return nil }
        return c == "=" ? 1 : 2
    }
}

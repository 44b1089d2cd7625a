import KBCore

/// Splits sections of text into snippets of at most `targetCharacters` characters, cutting at
/// headings first, then between blocks (paragraphs), then sentences (and lines), then words —
/// never inside a word. A word longer than the target becomes a snippet of its own.
///
/// ```swift
/// let chunker = try Chunker(targetCharacters: 500)
/// let spans = chunker.chunk(scalars, sections: structure.sections)
/// ```
public struct Chunker: Sendable, Hashable {
    /// A snippet's place in the text.
    public struct Span: Hashable, Sendable {
        public var range: Range<Int>
        public var headingPath: [String]
    }

    /// The most characters (Unicode scalars) a snippet may have. The default is 500
    /// (`defaultTarget`).
    public let targetCharacters: Int
    /// How many characters of the previous snippet, at most, a snippet repeats at its start
    /// when a section needs several snippets. The default is a tenth of the target
    /// (`defaultOverlap(for:)`).
    public let overlapCharacters: Int

    public static let defaultTarget = 500
    public static let minimumTarget = 50

    /// The overlap a target gets when none is given.
    public static func defaultOverlap(for target: Int) -> Int { target / 10 }

    /// Fails, naming the value and the rule, on a target below `minimumTarget` or an overlap
    /// outside 0 to half the target: the one check of chunk settings, whoever gives them.
    public init(targetCharacters: Int = Chunker.defaultTarget, overlapCharacters: Int? = nil) throws {
        guard targetCharacters >= Chunker.minimumTarget else {
            throw KBError(.invalidArgument, "Chunk size \(targetCharacters) is too small; use at least \(Chunker.minimumTarget) characters.")
        }
        let overlap = overlapCharacters ?? Self.defaultOverlap(for: targetCharacters)
        guard overlap >= 0, overlap <= targetCharacters / 2 else {
            throw KBError(.invalidArgument,
                "Chunk overlap \(overlap) must be between 0 and half the chunk size (\(targetCharacters / 2)).")
        }
        self.targetCharacters = targetCharacters
        self.overlapCharacters = overlap
    }

    /// - Parameter lineBreaksEndSentences: true for notes, where a line break ends a list item or
    ///   a line of code; false for PDF text, where lines wrap inside sentences.
    public func chunk(_ scalars: [Unicode.Scalar], sections: [TextSection], lineBreaksEndSentences: Bool = true) -> [Span] {
        var spans: [Span] = []
        for section in sections {
            var units: [Range<Int>] = []
            for block in section.blocks {
                appendUnits(of: block, level: .block, scalars, lineBreaks: lineBreaksEndSentences, into: &units)
            }
            for range in pack(units, scalars) {
                spans.append(Span(range: range, headingPath: section.headingPath))
            }
        }
        return spans
    }

    private enum Level { case block, sentence, word }

    /// Breaks a range into pieces no longer than the target, going one level finer only when needed.
    private func appendUnits(of range: Range<Int>, level: Level, _ scalars: [Unicode.Scalar], lineBreaks: Bool, into units: inout [Range<Int>]) {
        if range.count <= targetCharacters {
            units.append(range)
            return
        }
        switch level {
        case .block:
            for sentence in sentences(in: range, scalars, lineBreaks: lineBreaks) {
                appendUnits(of: sentence, level: .sentence, scalars, lineBreaks: lineBreaks, into: &units)
            }
        case .sentence:
            units += words(in: range, scalars)
        case .word:
            units.append(range)
        }
    }

    /// Greedy packing of units into snippets, each starting with an overlap into the previous one.
    private func pack(_ units: [Range<Int>], _ scalars: [Unicode.Scalar]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var i = 0
        while i < units.count {
            var start = units[i].lowerBound
            if overlapCharacters > 0, let previous = result.last,
               let overlapStart = wordStart(from: max(previous.lowerBound + 1, previous.upperBound - overlapCharacters),
                                            before: previous.upperBound, scalars),
               units[i].upperBound - overlapStart <= targetCharacters {
                start = overlapStart
            }
            var end = units[i].upperBound
            var j = i + 1
            while j < units.count && units[j].upperBound - start <= targetCharacters {
                end = units[j].upperBound
                j += 1
            }
            result.append(start..<end)
            i = j
        }
        return result
    }

    /// The first offset in `from..<before` where a word starts.
    private func wordStart(from: Int, before: Int, _ scalars: [Unicode.Scalar]) -> Int? {
        var k = max(from, 1)
        while k < before {
            if !scalars[k].isSpace && scalars[k - 1].isSpace { return k }
            k += 1
        }
        return nil
    }

    static let terminators: Set<Unicode.Scalar> = [".", "!", "?", "…", "。", "！", "？", "؟", "।"]
    static let closers: Set<Unicode.Scalar> = ["\"", "'", ")", "]", "»", "”", "’", "*", "_"]

    /// Sentences (and lines) of a range, trimmed. A sentence ends after a terminator, and any
    /// closing quotes or brackets, that is followed by whitespace; a line break also ends one.
    func sentences(in range: Range<Int>, _ scalars: [Unicode.Scalar], lineBreaks: Bool = true) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start = range.lowerBound
        var i = range.lowerBound
        func emit(_ end: Int) {
            if let t = MarkdownStructure.trim(start..<end, scalars) { result.append(t) }
            start = end
        }
        while i < range.upperBound {
            let c = scalars[i]
            if lineBreaks && (c == "\n" || c == "\r") {
                emit(i)
                i += 1
                continue
            }
            if Chunker.terminators.contains(c) {
                var end = i + 1
                while end < range.upperBound && (Chunker.terminators.contains(scalars[end]) || Chunker.closers.contains(scalars[end])) {
                    end += 1
                }
                if end == range.upperBound || scalars[end].isSpace {
                    emit(end)
                    i = end
                    continue
                }
            }
            i += 1
        }
        emit(range.upperBound)
        return result
    }

    /// Greedy runs of whole words no longer than the target less the overlap, so that the
    /// next snippet has room to repeat the end of the previous one.
    func words(in range: Range<Int>, _ scalars: [Unicode.Scalar]) -> [Range<Int>] {
        let limit = targetCharacters - overlapCharacters
        var result: [Range<Int>] = []
        var runStart: Int?
        var runEnd = range.lowerBound
        var i = range.lowerBound
        while i < range.upperBound {
            if scalars[i].isSpace { i += 1; continue }
            var wordEnd = i
            while wordEnd < range.upperBound && !scalars[wordEnd].isSpace { wordEnd += 1 }
            if let s = runStart, wordEnd - s > limit {
                result.append(s..<runEnd)
                runStart = i
            } else if runStart == nil {
                runStart = i
            }
            runEnd = wordEnd
            i = wordEnd
        }
        if let s = runStart { result.append(s..<runEnd) }
        return result
    }
}

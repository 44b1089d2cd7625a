/// Rebuilds the text of a page that holds right-to-left script (Arabic, Persian, Urdu, Hebrew)
/// from the words poppler found on it and where they stand, instead of poppler's own line
/// builder. Pure.
///
/// Poppler's text of such pages goes wrong where a combining mark sits a little above its
/// letter: a tanween (ً), a damma or a shadda becomes a line of its own, and the pieces of the
/// line it split come out in the wrong order ("محتملاً" as "محتم ً" with "لا" elsewhere). Here:
///
/// - words (poppler's boxes) are grouped into lines by their vertical extent, in poppler's
///   reading order of the lines, so columns and blocks keep the order poppler gave them;
/// - a box of combining marks alone (harakat, tanween, shadda, Hebrew points) is put back on the
///   letter it stands over;
/// - a line's words are laid out left to right as they stand, with a space where there is a gap;
/// - the line is put back in reading order: a line mostly in right-to-left script is read right
///   to left, with its runs of numbers and left-to-right words (`308`, `Python 3.12`) kept left
///   to right; right-to-left words inside a left-to-right line are turned around.
///
/// Left-to-right pages never come here: their text stays poppler's, byte for byte.
public enum PDFLines {
    /// A word on a page: its box (points, top-left origin) and its characters as they stand on
    /// the page from left to right, each with its left and right edge.
    public struct Word: Sendable, Hashable {
        public var x0: Double, y0: Double, x1: Double, y1: Double
        public var scalars: [Unicode.Scalar]
        public var left: [Double]
        public var right: [Double]

        public init(x0: Double, y0: Double, x1: Double, y1: Double, scalars: [Unicode.Scalar], left: [Double]? = nil, right: [Double]? = nil) {
            self.x0 = x0; self.y0 = y0; self.x1 = x1; self.y1 = y1
            self.scalars = scalars
            // Without character edges, the box is shared out evenly.
            let step = scalars.isEmpty ? 0 : (x1 - x0) / Double(scalars.count)
            self.left = left ?? scalars.indices.map { x0 + Double($0) * step }
            self.right = right ?? scalars.indices.map { x0 + Double($0 + 1) * step }
        }

        var height: Double { max(0.01, y1 - y0) }
        var middle: Double { (y0 + y1) / 2 }
    }

    /// Whether a page's text is right-to-left enough to rebuild: at least a tenth of its letters,
    /// and three of them, in a right-to-left script. A left-to-right page with a stray Hebrew
    /// letter (ℵ set as א in a table of symbols) keeps poppler's text.
    public static func holdsRightToLeft(_ text: String) -> Bool {
        var letters = 0, rightToLeft = 0
        // ASCII letters without Unicode's tables (most pages are mostly ASCII).
        for scalar in text.unicodeScalars
        where scalar.value < 0x80 ? (0x41...0x5A).contains(scalar.value) || (0x61...0x7A).contains(scalar.value) : scalar.properties.isAlphabetic {
            letters += 1
            if isRightToLeftRange(scalar) { rightToLeft += 1 }
        }
        return rightToLeft >= 3 && rightToLeft * 10 >= letters
    }

    /// The page's text, line by line in reading order; nil when the words are not laid out in
    /// plain horizontal lines (rotated text) or there are none, and poppler's text should stay.
    public static func text(of words: [Word]) -> String? {
        let marks = words.filter { !$0.scalars.isEmpty && $0.scalars.allSatisfy(isMark) }
        var lines: [Line] = []
        for word in words where !word.scalars.isEmpty && !word.scalars.allSatisfy(isMark) {
            // A word joins one of the last lines started when it stands on the same band.
            if let index = lines.indices.suffix(4).last(where: { lines[$0].holds(word) }) {
                lines[index].add(word)
            } else {
                lines.append(Line(word))
            }
        }
        guard !lines.isEmpty else { return nil }
        for mark in marks { place(mark, in: &lines) }

        var out = ""
        var previous: Line?
        for line in lines {
            if let previous {
                let gap = line.top - previous.bottom
                out += gap > 0.9 * max(previous.height, line.height) ? "\n\n" : "\n"
            }
            out += line.text()
            previous = line
        }
        return out
    }

    // MARK: - Lines

    struct Line {
        var words: [Word]
        var top: Double, bottom: Double

        init(_ word: Word) {
            words = [word]
            top = word.y0
            bottom = word.y1
        }

        var height: Double { max(0.01, bottom - top) }

        /// Whether a word stands on this line: its middle within the line's band (and the line's
        /// middle within its), at a height not far from the line's.
        func holds(_ word: Word) -> Bool {
            let middle = (top + bottom) / 2
            guard word.middle > top, word.middle < bottom, middle > word.y0, middle < word.y1 else { return false }
            let ratio = word.height / height
            return ratio > 0.4 && ratio < 2.5
        }

        mutating func add(_ word: Word) {
            words.append(word)
            top = min(top, word.y0)
            bottom = max(bottom, word.y1)
        }

        /// The line in reading order.
        func text() -> String {
            let sorted = words.sorted { $0.x0 < $1.x0 }
            var clusters: [[Unicode.Scalar]] = []
            for (index, word) in sorted.enumerated() {
                if index > 0 {
                    let gap = word.x0 - sorted[index - 1].x1
                    if gap > 0.08 * height { clusters.append([" "]) }
                }
                for scalar in word.scalars {
                    if isMark(scalar), !clusters.isEmpty, clusters[clusters.count - 1] != [" "] {
                        clusters[clusters.count - 1].append(scalar)
                    } else {
                        clusters.append([scalar])
                    }
                }
            }
            let ordered = PDFLines.readingOrder(clusters)
            return String(String.UnicodeScalarView(ordered.joined()))
        }
    }

    /// Puts a box of combining marks on the letter it stands over: the letter, on a line whose
    /// band it overlaps, whose middle is nearest.
    static func place(_ mark: Word, in lines: inout [Line]) {
        let x = (mark.x0 + mark.x1) / 2
        var best: (line: Int, word: Int, char: Int, distance: Double)?
        for (l, line) in lines.enumerated() {
            let slack = line.height * 0.6
            guard mark.y1 > line.top - slack, mark.y0 < line.bottom + slack else { continue }
            let vertical = max(0, line.top - mark.middle, mark.middle - line.bottom)
            for (w, word) in line.words.enumerated() {
                for c in word.scalars.indices where !isMark(word.scalars[c]) {
                    // From the letter's middle: a mark on the edge between two letters belongs to
                    // the one it is more over.
                    let distance = abs(x - (word.left[c] + word.right[c]) / 2) + vertical
                    if best == nil || distance < best!.distance { best = (l, w, c, distance) }
                }
            }
        }
        guard let best, best.distance < lines[best.line].height else { return }   // a stray mark: left out
        var word = lines[best.line].words[best.word]
        var at = best.char + 1
        while at < word.scalars.count && isMark(word.scalars[at]) { at += 1 }
        for scalar in mark.scalars {
            word.scalars.insert(scalar, at: at)
            word.left.insert(word.left[best.char], at: at)
            word.right.insert(word.right[best.char], at: at)
            at += 1
        }
        lines[best.line].words[best.word] = word
    }

    // MARK: - Order

    enum Direction { case leftToRight, rightToLeft, neutral }

    static func direction(_ cluster: [Unicode.Scalar]) -> Direction {
        guard let scalar = cluster.first else { return .neutral }
        if scalar.properties.numericType != nil && scalar.properties.generalCategory == .decimalNumber { return .leftToRight }
        if isRightToLeftRange(scalar) {
            return scalar.properties.isAlphabetic || scalar == "\u{061B}" || scalar == "\u{061F}" ? .rightToLeft : .neutral
        }
        return scalar.properties.isAlphabetic ? .leftToRight : .neutral
    }

    /// A line's characters (clusters of a letter and its marks) from left to right, in reading
    /// order: the line's direction is the one most of its letters have.
    static func readingOrder(_ visual: [[Unicode.Scalar]]) -> [[Unicode.Scalar]] {
        let directions = visual.map(direction)
        let rightToLeft = directions.filter { $0 == .rightToLeft }.count
        let leftToRight = directions.filter { $0 == .leftToRight }.count
        if rightToLeft == 0 { return visual }
        if rightToLeft >= leftToRight {
            // Read right to left, then turn the left-to-right runs back.
            let reversed = Array(visual.reversed())
            return turningRuns(of: .leftToRight, in: reversed, directions: Array(directions.reversed()), mirror: true)
        }
        return turningRuns(of: .rightToLeft, in: visual, directions: directions, mirror: false)
    }

    /// `clusters` with each run of `kind` (from its first to its last cluster of that direction,
    /// neutrals between them included) turned around. With `mirror`, brackets outside those
    /// runs (read right to left) are swapped for their pair.
    static func turningRuns(of kind: Direction, in clusters: [[Unicode.Scalar]], directions: [Direction], mirror: Bool) -> [[Unicode.Scalar]] {
        var out = clusters
        var index = 0
        var inRun = Array(repeating: false, count: clusters.count)
        while index < clusters.count {
            guard directions[index] == kind else { index += 1; continue }
            var end = index
            var probe = index + 1
            while probe < clusters.count && directions[probe] != (kind == .leftToRight ? .rightToLeft : .leftToRight) {
                if directions[probe] == kind { end = probe }
                probe += 1
            }
            out.replaceSubrange(index...end, with: clusters[index...end].reversed())
            for i in index...end { inRun[i] = true }
            index = end + 1
        }
        if mirror {
            for i in out.indices where !inRun[i] && out[i].count == 1 {
                if let pair = mirrored[out[i][0]] { out[i] = [pair] }
            }
        }
        return out
    }

    static let mirrored: [Unicode.Scalar: Unicode.Scalar] = [
        "(": ")", ")": "(", "[": "]", "]": "[", "{": "}", "}": "{", "<": ">", ">": "<", "«": "»", "»": "«",
    ]

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .nonspacingMark
    }

    /// Hebrew, Arabic, Syriac, Thaana, N'Ko and their extensions and presentation forms.
    static func isRightToLeftRange(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF: true
        default: false
        }
    }
}

import Foundation
import KBCore
/// Turns the per-page text poppler extracts into one readable document text, remembering where
/// each page starts. Pure.
///
/// - drops form feeds and the bidi control marks poppler puts around right-to-left runs
///   (the text itself stays in logical order), keeping the word boundaries they carried
///   (`spacingEmbeddings`);
/// - expands ligatures (`ﬁ` → `fi`), collapses runs of spaces, trims line ends;
/// - removes running headers and footers: an edge line (the first or last of a page, or the
///   second from either edge on pages of more than five lines) whose digit-folded text repeats
///   at the same edge on at least 3 pages, and bare page numbers;
/// - joins words hyphenated across line (and page) breaks when the next line goes on in lower
///   case (`exam-\nple` → `example`; `X-\nRay` keeps its hyphen);
/// - lets a paragraph continue across a page break (pages are joined with one newline, or a
///   blank line when the page ends a sentence).
///
/// Nothing is NFKC-folded: text users see keeps its characters.
public enum PDFText {
    public struct Document: Sendable, Hashable {
        public var text: String
        /// Offset (Unicode scalars) where each page's text starts, page 1 first.
        public var pageStarts: [Int]
        /// 1-based numbers of pages without any text.
        public var emptyPages: [Int]

        /// The 1-based page holding an offset.
        public func page(at offset: Int) -> Int {
            var low = 0, high = pageStarts.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if pageStarts[mid] <= offset { low = mid } else { high = mid - 1 }
            }
            return low + 1
        }
    }

    static let ligatures: [Unicode.Scalar: String] = [
        "\u{FB00}": "ff", "\u{FB01}": "fi", "\u{FB02}": "fl", "\u{FB03}": "ffi", "\u{FB04}": "ffl", "\u{FB05}": "st", "\u{FB06}": "st",
    ]
    static let bidiControls: Set<UInt32> = [0x200E, 0x200F, 0x061C, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]

    /// Whether the pages look like Cyrillic CP1251 text mis-read as Latin-1 (old TeX fonts do
    /// this: `Íå î÷åíü` for `Не очень`): at least 40 % of the letters, and 200 of them, lie in
    /// U+00C0–U+00FF. Genuine Western European text stays far below that share.
    public static func looksLikeCP1251AsLatin1(_ pages: [String]) -> Bool {
        let counts = pages.concurrentMap(minimumCount: 64) { page -> (letters: Int, suspicious: Int) in
            var letters = 0, suspicious = 0
            for s in page.unicodeScalars where s.value < 0x80 ? (0x41...0x5A).contains(s.value) || (0x61...0x7A).contains(s.value)
                : s.properties.isAlphabetic {
                letters += 1
                if (0xC0...0xFF).contains(s.value) && s.value != 0xD7 && s.value != 0xF7 { suspicious += 1 }
            }
            return (letters, suspicious)
        }
        let letters = counts.reduce(0) { $0 + $1.letters }, suspicious = counts.reduce(0) { $0 + $1.suspicious }
        return suspicious >= 200 && Double(suspicious) >= 0.4 * Double(letters)
    }

    static let cp1251: [Unicode.Scalar] = {
        let bytes = Data((0xA0...0xFF).map { UInt8($0) })
        let decoded = String(data: bytes, encoding: .windowsCP1251) ?? ""
        let scalars = Array(decoded.unicodeScalars)
        return scalars.count == 0x60 ? scalars : (0xA0...0xFF).map { Unicode.Scalar($0)! }
    }()

    /// Re-reads U+00A0–U+00FF as CP1251 (one scalar for one, so offsets do not move), and U+007F
    /// as the hyphen those fonts put there (the break hyphen at 700 line ends of the Russian LaTeX
    /// guide, which kb kept as a control character inside the words).
    public static func repairCP1251(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            out.append(s.value == 0x7F ? "-" : (0xA0...0xFF).contains(s.value) ? cp1251[Int(s.value) - 0xA0] : s)
        }
        return String(out)
    }

    public static func assemble(pages: [String], labels: [String] = []) -> Document {
        // Pages are cleaned, and their hyphenated line ends joined, on every core.
        var pageLines = pages.concurrentMap(minimumCount: 64, cleanLines)
        removeRunningLines(&pageLines, labels: labels)
        let compounds = CyrillicCompounds(pageLines)
        let pageTexts = pageLines.concurrentMap(minimumCount: 64) { dehyphenate($0.joined(separator: "\n"), keepingHyphen: compounds.keepsHyphen) }
        // Appended to as a String (in place, growing geometrically): appending to a
        // String.UnicodeScalarView made a new string each time, copying the book once per page.
        var text = ""
        var count = 0
        var starts: [Int] = []
        var empty: [Int] = []
        for (index, pageText) in pageTexts.enumerated() {
            if pageText.isEmpty { empty.append(index + 1) }
            // Join with the previous page: a word hyphenated across the break is rejoined.
            // (A view of `text` kept alive while appending would make every append copy it.)
            func rejoins() -> Bool {
                let scalars = text.unicodeScalars
                return scalars.last == "-" && count >= 2 && scalars[scalars.index(before: scalars.index(before: scalars.endIndex))].properties.isAlphabetic
            }
            if !text.isEmpty && !pageText.isEmpty {
                if let first = pageText.unicodeScalars.first, first.properties.isLowercase, rejoins() {
                    text.unicodeScalars.removeLast()
                    count -= 1
                } else {
                    let endsSentence = text.unicodeScalars.last.map { ".!?:;".unicodeScalars.contains($0) } ?? true
                    let separator = endsSentence ? "\n\n" : "\n"
                    text.append(separator)
                    count += separator.unicodeScalars.count
                }
            }
            starts.append(count)
            text.append(pageText)
            count += pageText.unicodeScalars.count
        }
        return Document(text: text, pageStarts: starts, emptyPages: empty)
    }

    /// A page's lines with form feeds, bidi marks and ligatures handled, spaces collapsed, ends
    /// trimmed; blank lines between blocks are kept (collapsed to one), leading/trailing ones dropped.
    static func cleanLines(_ page: String) -> [String] {
        var lines: [String] = []
        var current = String.UnicodeScalarView()
        var lastWasSpace = false
        func endLine() {
            while let last = current.last, last == " " { current.removeLast() }
            let line = String(current)
            if !(line.isEmpty && (lines.isEmpty || lines.last == "")) { lines.append(line) }
            current = String.UnicodeScalarView()
            lastWasSpace = false
        }
        for scalar in TextHygiene.clean(spacingEmbeddings(page)).unicodeScalars {
            if scalar == "\n" || scalar == "\u{0C}" || scalar == "\r" { endLine(); continue }
            if bidiControls.contains(scalar.value) { continue }
            if scalar == " " || scalar == "\t" || scalar == "\u{00A0}" {
                if !lastWasSpace && !current.isEmpty { current.append(" ") }
                lastWasSpace = true
                continue
            }
            lastWasSpace = false
            if let expansion = ligatures[scalar] { current.append(contentsOf: expansion.unicodeScalars) } else { current.append(scalar) }
        }
        endLine()
        while lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Poppler wraps a left-to-right run inside right-to-left text in bidi controls with the
    /// space that follows the run inside them, at its start (`من LRE␣308 PDF آلاف`): removing the
    /// controls would fuse the run to the next word (`308آلاف`). Such a space is moved out to the
    /// side where the run meets a word (and likewise a trailing one); runs without spaces at
    /// their edges, and text without controls, are left as they are.
    static func spacingEmbeddings(_ page: String) -> String {
        let opening: Set<UInt32> = [0x202A, 0x202B, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068]
        let closing: Set<UInt32> = [0x202C, 0x2069]
        guard page.unicodeScalars.contains(where: { opening.contains($0.value) }) else { return page }
        var scalars = Array(page.unicodeScalars)
        func isSpace(_ index: Int) -> Bool { index >= 0 && index < scalars.count && scalars[index] == " " }
        func isWordCharacter(_ index: Int) -> Bool {
            guard index >= 0 && index < scalars.count else { return false }
            let scalar = scalars[index]
            return !scalar.properties.isWhitespace && !bidiControls.contains(scalar.value)
        }
        var index = 0
        while index < scalars.count {
            guard opening.contains(scalars[index].value),
                  let close = scalars[(index + 1)...].firstIndex(where: { closing.contains($0.value) || opening.contains($0.value) }),
                  closing.contains(scalars[close].value), close > index + 1 else {
                index += 1
                continue
            }
            // A space at the run's start, a word right after its end: the space goes after the run.
            if isSpace(index + 1), !isSpace(close - 1), isWordCharacter(close + 1), isSpace(index - 1) || !isWordCharacter(index - 1) {
                scalars.remove(at: index + 1)
                scalars.insert(" ", at: close)
            } else if isSpace(close - 1), !isSpace(index + 1), isWordCharacter(index - 1), !isWordCharacter(close + 1) {
                // A space at its end, a word right before its start: the space goes before it.
                scalars.remove(at: close - 1)
                scalars.insert(" ", at: index)
                index += 1
            }
            index = close + 1
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Cyrillic compounds a book writes with a hyphen (`из-за`, `по-разному`, `веб-сайт`): a
    /// hyphen at a line break between two Cyrillic parts is kept when the book has the hyphenated
    /// word elsewhere and not the joined one; otherwise the parts are joined, as most such breaks
    /// are the typesetter's. Measured on the Russian LaTeX guide: 709 breaks, 517 joined words
    /// found elsewhere, 2 compounds, 190 found in neither form (syllable breaks: joined).
    struct CyrillicCompounds {
        var hyphenated: Set<String> = []
        var words: Set<String> = []

        init(_ pages: [[String]]) {
            for line in pages.joined() where line.unicodeScalars.contains(where: Self.isCyrillic) {
                for token in line.lowercased().split(whereSeparator: { !($0.isLetter || $0 == "-") }) {
                    let parts = token.split(separator: "-", omittingEmptySubsequences: false)
                    if parts.count == 1 { words.insert(String(token)) } else if parts.count == 2, parts.allSatisfy({ !$0.isEmpty }) {
                        hyphenated.insert(String(token))
                    }
                }
            }
        }

        func keepsHyphen(_ before: Substring, _ after: Substring) -> Bool {
            guard let last = before.unicodeScalars.last, let first = after.unicodeScalars.first,
                  Self.isCyrillic(last), Self.isCyrillic(first) else { return false }
            let a = before.lowercased(), b = after.lowercased()
            return hyphenated.contains(a + "-" + b) && !words.contains(a + b)
        }

        static func isCyrillic(_ scalar: Unicode.Scalar) -> Bool { (0x0400...0x04FF).contains(scalar.value) }
    }

    /// Removes running headers/footers and bare page numbers from the edges of every page.
    static func removeRunningLines(_ pages: inout [[String]], labels: [String]) {
        func signature(_ line: String) -> String {
            String(line.lowercased().unicodeScalars.map { $0.properties.numericType != nil ? "#" : Character($0) })
        }
        // Edge positions: 0 and -1 (first and last non-blank line); 1 and -2 too on pages with
        // more than five lines of text (on short pages those are body text).
        func edgeIndexes(_ lines: [String]) -> [(position: Int, index: Int)] {
            let content = lines.indices.filter { !lines[$0].isEmpty }
            let depth = content.count > 5 ? 2 : 1
            var result: [(Int, Int)] = []
            for (p, i) in content.prefix(depth).enumerated() { result.append((p, i)) }
            for (p, i) in content.suffix(depth).reversed().enumerated() where !result.contains(where: { $0.1 == i }) { result.append((-1 - p, i)) }
            return result
        }
        var pagesBySignature: [String: Set<Int>] = [:]
        for (page, lines) in pages.enumerated() {
            for edge in edgeIndexes(lines) {
                let key = "\(edge.position)|" + signature(lines[edge.index])
                pagesBySignature[key, default: []].insert(page)
            }
        }
        for page in pages.indices {
            let label = page < labels.count ? labels[page].lowercased() : ""
            var drop = Set<Int>()
            for edge in edgeIndexes(pages[page]) {
                let line = pages[page][edge.index]
                let repeated = (pagesBySignature["\(edge.position)|" + signature(line)]?.count ?? 0) >= 3
                if repeated || isPageNumber(line, label: label, page: page + 1) { drop.insert(edge.index) }
            }
            guard !drop.isEmpty else { continue }
            var kept: [String] = []
            for (i, line) in pages[page].enumerated() where !drop.contains(i) {
                if !(line.isEmpty && (kept.isEmpty || kept.last == "")) { kept.append(line) }
            }
            while kept.last == "" { kept.removeLast() }
            pages[page] = kept
        }
    }

    static func isPageNumber(_ line: String, label: String, page: Int) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.isEmpty { return false }
        if trimmed == label || trimmed == String(page) { return true }
        let stripped = trimmed.trimmingCharacters(in: CharacterSet(charactersIn: "-–— .|"))
        if !stripped.isEmpty && stripped.unicodeScalars.allSatisfy({ $0.properties.numericType != nil }) && stripped.count <= 5 { return true }
        return !stripped.isEmpty && stripped.count <= 8 && stripped.allSatisfy({ "ivxlcdm".contains($0) })
    }

    /// `exam-\nple` → `example` when the next line goes on in lower case after a letter, unless
    /// `keepingHyphen` says the two parts are a compound that keeps its hyphen.
    static func dehyphenate(_ text: String, keepingHyphen: (_ before: Substring, _ after: Substring) -> Bool = { _, _ in false }) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func word(endingAt end: Int) -> Substring {
            var start = end
            while start > 0 && scalars[start - 1].properties.isAlphabetic { start -= 1 }
            return Substring(String(String.UnicodeScalarView(scalars[start..<end])))
        }
        func word(startingAt start: Int) -> Substring {
            var end = start
            while end < scalars.count && scalars[end].properties.isAlphabetic { end += 1 }
            return Substring(String(String.UnicodeScalarView(scalars[start..<end])))
        }
        while i < scalars.count {
            if scalars[i] == "-", i + 2 < scalars.count, scalars[i + 1] == "\n", i > 0,
               scalars[i - 1].properties.isAlphabetic, scalars[i + 2].properties.isLowercase,
               !keepingHyphen(word(endingAt: i), word(startingAt: i + 2)) {
                i += 2
                continue
            }
            out.append(scalars[i])
            i += 1
        }
        return String(out)
    }
}
